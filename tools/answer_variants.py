"""The answer-prompt variants compared on the dev half (docs/benchmarks.md, "Steered citations and
the answer prompt's budget"): each is `convrag eval-answers --split dev --answers ungated` with the
``ungated`` preset's budgets set first.

    .venv/bin/python tools/answer_variants.py short-history-short-passages
    .venv/bin/python tools/answer_variants.py short-history
    .venv/bin/python tools/answer_variants.py short-history-four-sentences
    .venv/bin/python tools/answer_variants.py chosen
    .venv/bin/python tools/answer_variants.py chosen-stepped
    .venv/bin/python tools/answer_variants.py compact
    .venv/bin/python tools/answer_variants.py compact-full
    .venv/bin/python tools/answer_variants.py titles

Writes runs/answers-dev-<variant>/ (the rows, summary.md); with ``--replay 2`` the variant answers
the first two dev conversations per domain as a chat (runs/replay-dev-<variant>/); then
`tools/tune_on_dev.py answers runs/answers-dev-<variant>/answers-ungated.jsonl` for the decline table.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from convrag.generate import answer
from convrag.generate.compress import CompressionSettings
from convrag.generate.decline import DeclineSettings
from convrag.history import Budget

CHOSEN = Budget(tokens=400, answer_words=60)
#: the same budget, its oldest exchanges dropped two at a time (the window's start stays put for two turns)
STEPPED = Budget(tokens=400, answer_words=60, step=2)
SHORT = Budget(tokens=150, answer_words=40)
#: the user's questions alone (no agent answers), for a prompt that asks the standalone question
QUESTIONS = Budget(tokens=100, answer_words=0)

#: history, passage tokens, up to four sentences, and further AnswerSettings fields
VARIANTS: dict[str, tuple[Budget, int, bool, dict[str, Any]]] = {
    "short-history-short-passages": (SHORT, 250, False, {}),
    "short-history": (SHORT, 350, False, {}),
    "short-history-four-sentences": (SHORT, 350, True, {}),
    "chosen": (CHOSEN, 350, False, {}),
    "chosen-stepped": (STEPPED, 350, False, {}),
    # the standalone question in place of the conversation (only the user's earlier questions kept)
    "compact": (QUESTIONS, 350, False, {"ask_standalone": True}),
    # ... and worked examples whose answer restates the subject and gathers every passage's part
    "compact-full": (QUESTIONS, 350, False, {"ask_standalone": True, "examples": "full"}),
    # the chosen budgets, passages labelled by their title alone (no collection, no document id)
    "titles": (CHOSEN, 350, False, {"labels": "title"}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variant", choices=sorted(VARIANTS))
    parser.add_argument("--data", default="../shared/mtrag")
    parser.add_argument("--replay", type=int, metavar="N",
                        help="replay the first N conversations per domain as a chat (reading ahead, the decline gate on, "
                             "no completion cache) instead of the sampled ungated turns")
    args = parser.parse_args()
    history, passages, four, further = VARIANTS[args.variant]
    if four:
        answer.CITED_SYSTEM = answer.CITED_SYSTEM.replace("Write at most 3 short sentences", "Write at most 4 sentences")
    budgets = {"history": history, "compression": CompressionSettings(max_tokens=passages), **further}
    from convrag.cli.main import main as convrag

    if args.replay:
        answer.ANSWER_PRESETS["default"] = answer.AnswerSettings(**budgets)
        sys.argv = ["convrag", "eval-answers", "--data", args.data, "--split", "dev", "--conversations", str(args.replay),
                    "--no-compare", "--no-llm-cache", "--out", f"runs/replay-dev-{args.variant}"]
    else:
        answer.ANSWER_PRESETS["ungated"] = answer.AnswerSettings(
            **budgets, decline=DeclineSettings(min_relevance=0.0, min_grounding=0.0))
        sys.argv = ["convrag", "eval-answers", "--data", args.data, "--split", "dev", "--answers", "ungated", "--no-compare",
                    "--answerable", "30", "--partial", "10", "--out", f"runs/answers-dev-{args.variant}"]
    convrag()


if __name__ == "__main__":
    main()
