"""What declining an echo does to answers already recorded by ``convrag eval-answers``.

An echo is a reply that writes the user's message back word for word (``decline_echo``,
:func:`convrag.generate.decline.echoes_question`). The rule looks at the model's text only, so it can
be applied to recorded rows: each unanswered row whose answer echoes its question becomes the
decline sentence, its ROUGE-L scored again, and the decline and overlap figures are counted before and
after, with the echoes listed.

    .venv/bin/python tools/echo_declines.py runs/answers-dev/answers-default.jsonl [more.jsonl ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from convrag.eval.answers import rouge
from convrag.generate.answer import DECLINE
from convrag.generate.decline import echoes_question

ANSWERABLE = ("ANSWERABLE", "PARTIAL")


def figures(rows: list[dict[str, Any]]) -> tuple[float, float, float]:
    """UNANSWERABLE declined, answerable declined, mean ROUGE-L of the answerable rows."""
    unanswerable = [r for r in rows if r["label"] == "UNANSWERABLE"]
    answerable = [r for r in rows if r["label"] in ANSWERABLE]
    return (sum(r["declined"] for r in unanswerable) / max(len(unanswerable), 1),
            sum(r["declined"] for r in answerable) / max(len(answerable), 1),
            sum(r["rouge_l"] for r in answerable) / max(len(answerable), 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", nargs="+", type=Path, help="answers-*.jsonl files written by convrag eval-answers")
    args = parser.parse_args()
    scorer = rouge()
    print("| answers | turns | echoes (label: message) | UNANSWERABLE declined | false declines | ROUGE-L |")
    print("| --- | --- | --- | --- | --- | --- |")
    for path in args.rows:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        before = figures(rows)
        echoes = []
        for row in rows:
            if not row["declined"] and echoes_question(row["answer"], row["question"]):
                echoes.append(f"{row['label']}: {row['question'][:50]}")
                row.update(declined=True, answer=DECLINE)
                if row["label"] in ANSWERABLE:
                    row["rouge_l"] = scorer.score(row["reference"], DECLINE)["rougeL"].fmeasure
        after = figures(rows)
        print(f"| {path} | {len(rows)} | {'; '.join(echoes) or 'none'} | " + " | ".join(
            f"{100 * a:.1f} -> {100 * b:.1f} %" for a, b in zip(before, after)) + " |")


if __name__ == "__main__":
    main()
