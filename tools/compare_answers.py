"""Two answer runs over the same turns, side by side: what `convrag eval-answers` reports for each,
the mean answer length, and paired randomization tests on the turns both answered.

    .venv/bin/python tools/compare_answers.py runs/answers-dev-chosen-300/answers-ungated.jsonl \\
        runs/answers-dev-copy-2/answers-ungated.jsonl

ROUGE-L and token recall are paired over the answerable turns; citation support is paired per turn
as the share of that turn's citations the word-overlap test finds in their passage (turns without
citations in either run are left out of that test).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from convrag.eval.answers import summarize
from convrag.eval.significance import paired_test


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    return {row["task_id"]: row for row in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if row}


def _support(row: dict[str, Any]) -> float | None:
    checks = row["citation_checks"]
    return float(np.mean([c["supported"] for c in checks])) if checks else None


def _words(rows: dict[str, dict[str, Any]]) -> float:
    answered = [len(r["answer"].split()) for r in rows.values() if r["label"] != "UNANSWERABLE" and not r["declined"]]
    return float(np.mean(answered)) if answered else 0.0


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
    print("| measure | baseline | run |\n| --- | --- | --- |")
    for key in ("unanswerable_declined", "answerable_false_declines", "rouge_l", "token_recall", "model_cited_share",
                "citations_supported", "model_citations_supported", "citations_relevant"):
        print(f"| {key} | {sa[key]:.1%} | {sb[key]:.1%} |" if sa[key] is not None and sb[key] is not None else f"| {key} | n/a | n/a |")
    print(f"| mean words (answered, answerable) | {_words(a):.0f} | {_words(b):.0f} |")
    for key in ("first_token_s", "total_s"):
        print(f"| {key} p50 | {sa[key]['p50']:.2f} s | {sb[key]['p50']:.2f} s |")
    answerable = [t for t in shared if a[t]["label"] != "UNANSWERABLE"]
    print("\n| paired | turns | baseline | run | delta | p (randomization) |\n| --- | --- | --- | --- | --- | --- |")
    for metric in ("rouge_l", "token_recall"):
        test = paired_test({t: {metric: a[t][metric]} for t in answerable}, {t: {metric: b[t][metric]} for t in answerable}, metric)
        print(f"| {metric} | {test.n} | {test.mean_baseline:.4f} | {test.mean_run:.4f} | {test.delta:+.4f} | {test.p_randomization:.3f} |")
    cited = [t for t in answerable if _support(a[t]) is not None and _support(b[t]) is not None]
    if cited:
        test = paired_test({t: {"support": _support(a[t])} for t in cited}, {t: {"support": _support(b[t])} for t in cited}, "support")
        print(f"| support per turn | {test.n} | {test.mean_baseline:.4f} | {test.mean_run:.4f} | {test.delta:+.4f} | {test.p_randomization:.3f} |")


if __name__ == "__main__":
    main()
