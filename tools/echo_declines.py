"""What declining an echo does to answers already recorded by ``convrag eval-answers``.

An echo is a reply that writes the user's message back word for word (``decline_echo``,
:func:`convrag.generate.decline.echoes_question`). The rule looks at the model's text only, so it can
be applied to recorded rows: each unanswered row whose answer echoes its question becomes the
decline sentence, its ROUGE-L scored again, and the decline and overlap figures are counted before and
after (as ``eval-answers`` counts them, :func:`convrag.eval.answers.summarize`), with the echoes listed.
It models the rule as first built, an echo declined at once (``DeclineSettings(retry_echo=False)``); the
default now writes an echo once more, sampled, which needs the model, so ``eval-answers`` measures it.

    .venv/bin/python tools/echo_declines.py runs/answers-dev/answers-default.jsonl [more.jsonl ...]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from convrag.data.jsonl import read_jsonl
from convrag.eval.answers import rouge, summarize
from convrag.generate.answer import DECLINE
from convrag.generate.decline import echoes_question

ANSWERABLE = ("ANSWERABLE", "PARTIAL")
#: the figures compared, as :func:`convrag.eval.answers.summarize` names them
FIGURES = ("unanswerable_declined", "answerable_false_declines", "rouge_l")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", nargs="+", type=Path, help="answers-*.jsonl files written by convrag eval-answers")
    args = parser.parse_args()
    scorer = rouge()
    print("| answers | turns | echoes (label: message) | UNANSWERABLE declined | false declines | ROUGE-L |")
    print("| --- | --- | --- | --- | --- | --- |")
    for path in args.rows:
        rows = [row for _, row in read_jsonl(path)]
        before = summarize(rows)
        echoes = []
        for row in rows:
            if not row.get("failed") and not row["declined"] and echoes_question(row["answer"], row["question"]):
                echoes.append(f"{row['label']}: {row['question'][:50]}")
                # as a declined answer is recorded: the decline sentence, no citations
                row.update(declined=True, answer=DECLINE, citations=0, model_citations=0, citation_checks=[])
                if row["label"] in ANSWERABLE:
                    row["rouge_l"] = scorer.score(row["reference"], DECLINE)["rougeL"].fmeasure
        after = summarize(rows)
        print(f"| {path} | {len(rows)} | {'; '.join(echoes) or 'none'} | " + " | ".join(
            f"{100 * before[name]:.1f} -> {100 * after[name]:.1f} %" for name in FIGURES) + " |")


if __name__ == "__main__":
    main()
