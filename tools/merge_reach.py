"""Which passages reach the answer's prompt? The merge against the retriever's own order.

For every turn of a half (dev unless ``--split`` says otherwise) that has an answerability label and judged-relevant passages, the default query
path (progressive, hybrid; rewrites from the completion cache) retrieves the turn's domain, and the
default merge (enhanced, up to five passages within 1000 tokens of whole passages, counted by the
local model's tokenizer) keeps the passages the answer is shown. Per domain it prints how often the
retriever's first passage is kept, how often a judged-relevant passage is, and how many passages are
kept, for the merge's settings as they are and with parts of its quality signals left out:

    .venv/bin/python tools/merge_reach.py [--split test]    # about a minute per variant on 2 cores

No answer is written: the figures say what the answer could read, not what it made of it
(``convrag eval-answers`` measures that).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from convrag.merge.enhanced import MergeSettings
from convrag.merge.signals import QualitySignals
from convrag.types import Message

sys.path.insert(0, str(Path(__file__).parent))
from decline_signals import _dev_pipelines, _turns  # noqa: E402 - the pipelines and turns the gate's measures use

VARIANTS: dict[str, Callable[[MergeSettings], MergeSettings]] = {
    "as configured": lambda s: s,
    "the design note's signals (length band 1.1 / 0.8 / 0.9)": lambda s: replace(s, signals=QualitySignals()),
    "no quality signals": lambda s: replace(s, signals=None),
    "no quality signals, no diversity penalty": lambda s: replace(s, signals=None, diversity=0.0, drop_at=1.01),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/mtrag")
    parser.add_argument("--split", default="dev", choices=["dev", "test", "all"])
    args = parser.parse_args()
    layout, _, _, pipelines = _dev_pipelines(args.data, split=args.split)  # rewrites from the completion cache
    turns = [t for t in _turns(layout, sample=False) if t.relevant]
    configured = {d: p.merge_settings for d, p in pipelines.items()}
    print(f"{len(turns)} {args.split} turns with judged-relevant passages\n")
    print("| merge | domain | retriever's first passage kept | a relevant passage kept | passages kept (mean) |")
    print("| --- | --- | --- | --- | --- |")
    for name, change in VARIANTS.items():
        rows = []
        for turn in turns:
            pipeline = pipelines[turn.task.domain]
            pipeline.merge_settings = change(configured[turn.task.domain])
            merged, _, ranked = pipeline.retrieve([*turn.task.history, Message("user", turn.task.question)], turn.task.task_id)
            first = ranked[turn.task.domain][:1]
            kept = {r.hit.passage_id for r in merged.results}
            rows.append((turn.task.domain, bool(first) and first[0].passage_id in kept, bool(turn.relevant & kept), len(kept)))
        for domain in [*sorted({r[0] for r in rows}), "all"]:
            part = [r for r in rows if domain in ("all", r[0])]
            print(f"| {name} | {domain} ({len(part)}) | {100 * sum(r[1] for r in part) / len(part):.1f} % | "
                  f"{100 * sum(r[2] for r in part) / len(part):.1f} % | {sum(r[3] for r in part) / len(part):.2f} |")


if __name__ == "__main__":
    main()
