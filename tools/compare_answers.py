"""Two answer runs over the same turns, side by side: what `convrag eval-answers` reports for each,
the mean answer length, and paired randomization tests on the turns both answered.

    .venv/bin/python tools/compare_answers.py runs/answers-dev-chosen-300/answers-ungated.jsonl \\
        runs/answers-dev-copy-2/answers-ungated.jsonl

(a run folder holding one answers file may be named instead of the file)

ROUGE-L and token recall are paired over the answerable turns; citation support is paired per turn
as the share of that turn's citations the word-overlap test finds in their passage (turns without
citations in either run are left out of that test).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from convrag.data.jsonl import read_jsonl
from convrag.eval.answers import summarize
from convrag.eval.report import markdown_table
from convrag.eval.significance import paired_test


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    """The rows of an answers file, or of the one answers-*.jsonl in a run folder."""
    if path.is_dir():
        files = sorted(path.glob("answers-*.jsonl"))
        if len(files) != 1:
            raise SystemExit(f"{path}: expected one answers-*.jsonl, found {len(files)}; name the file")
        path = files[0]
    return {row["task_id"]: row for _, row in read_jsonl(path) if not row.get("failed")}  # a turn the model failed: no answer


def _support(row: dict[str, Any]) -> float | None:
    checks = row["citation_checks"]
    return float(np.mean([c["supported"] for c in checks])) if checks else None


def _words(rows: Iterable[dict[str, Any]]) -> float:
    answered = [len(r["answer"].split()) for r in rows if r["label"] != "UNANSWERABLE" and not r["declined"]]
    return float(np.mean(answered)) if answered else 0.0


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline", type=Path)
    parser.add_argument("run", type=Path)
    args = parser.parse_args()
    a, b = _rows(args.baseline), _rows(args.run)
    shared = sorted(set(a) & set(b))
    if not shared:
        raise SystemExit("the two runs share no turn")
    sa, sb = summarize([a[t] for t in shared]), summarize([b[t] for t in shared])
    print(f"{len(shared)} shared turns; baseline {args.baseline}, run {args.run}\n")
    measures = [[key, _share(sa[key]), _share(sb[key])] for key in (
        "unanswerable_declined", "answerable_false_declines", "rouge_l", "token_recall", "model_cited_share",
        "citations_supported", "model_citations_supported", "citations_relevant")]
    measures.append(["mean words (answered, answerable)", f"{_words(a[t] for t in shared):.0f}", f"{_words(b[t] for t in shared):.0f}"])
    measures += [[f"{key} p50", f"{sa[key]['p50']:.2f} s", f"{sb[key]['p50']:.2f} s"] for key in ("first_token_s", "total_s")]
    print(markdown_table(["measure", "baseline", "run"], measures))
    answerable = [t for t in shared if a[t]["label"] != "UNANSWERABLE"]
    cited = [t for t in answerable if _support(a[t]) is not None and _support(b[t]) is not None]
    pairs = [(metric, answerable, lambda row, m=metric: row[m]) for metric in ("rouge_l", "token_recall")]
    pairs.append(("support per turn", cited, _support))
    tests = []
    for name, turns, value in pairs:
        if turns:
            test = paired_test({t: {name: value(a[t])} for t in turns}, {t: {name: value(b[t])} for t in turns}, name)
            tests.append([name, test.n, test.mean_baseline, test.mean_run, f"{test.delta:+.4f}", f"{test.p_randomization:.3f}"])
    print("\n" + markdown_table(["paired", "turns", "baseline", "run", "delta", "p (randomization)"], tests))


if __name__ == "__main__":
    main()
