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
    .venv/bin/python tools/answer_variants.py chosen-300
    .venv/bin/python tools/answer_variants.py titles
    .venv/bin/python tools/answer_variants.py long
    .venv/bin/python tools/answer_variants.py long-brief
    .venv/bin/python tools/answer_variants.py copy-2
    .venv/bin/python tools/answer_variants.py copy-4
    .venv/bin/python tools/answer_variants.py self-contained-questions
    .venv/bin/python tools/answer_variants.py self-contained-anchored
    .venv/bin/python tools/answer_variants.py standalone-asked
    .venv/bin/python tools/answer_variants.py fill-half

Writes runs/answers-dev-<variant>/ (the rows, summary.md); with ``--replay 2`` the variant answers
the first two dev conversations per domain as a chat (runs/replay-dev-<variant>/); then
`tools/tune_on_dev.py answers runs/answers-dev-<variant>/answers-ungated.jsonl` for the decline table.
``--split test`` runs a variant on the test half instead, only to report a comparison already chosen
on dev on the host of the default's own run (``chosen --replay 2 --split test``: the former budget).
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

#: the length the cited prompt's instructions ask for (replaced in ``CITED_SYSTEM``)
LENGTH = "Write at most 3 short sentences"

#: history, passage tokens, the length asked for (None: ``LENGTH``), and further AnswerSettings fields
VARIANTS: dict[str, tuple[Budget, int, str | None, dict[str, Any]]] = {
    "short-history-short-passages": (SHORT, 250, None, {}),
    "short-history": (SHORT, 350, None, {}),
    "short-history-four-sentences": (SHORT, 350, "Write at most 4 sentences", {}),
    "chosen": (CHOSEN, 350, None, {}),
    "chosen-stepped": (STEPPED, 350, None, {}),
    # the standalone question in place of the conversation (only the user's earlier questions kept)
    "compact": (QUESTIONS, 350, None, {"ask_standalone": True}),
    # ... and worked examples whose answer restates the subject and gathers every passage's part
    "compact-full": (QUESTIONS, 350, None, {"ask_standalone": True, "examples": "full"}),
    # the chosen history, 300 passage tokens (about 0.5 s less to read before the first token)
    "chosen-300": (CHOSEN, 300, None, {}),
    # the chosen budgets, passages labelled by their title alone (no collection, no document id)
    "titles": (CHOSEN, 350, None, {"labels": "title"}),
    # the chosen budgets, answers as long as the benchmark's references tend to be (about 90 words):
    # three to five sentences asked for, worked examples of three full sentences, room to write them
    "long": (CHOSEN, 350, "Write 3 to 5 sentences", {"examples": "full", "max_tokens": 240}),
    # ... with the brief worked examples (two short sentences each)
    "long-brief": (CHOSEN, 350, "Write 3 to 5 sentences", {"max_tokens": 240}),
    # the default (chosen-300) with the copy steer: a logit bonus for the token that continues the
    # longest ending of the answer (two words or more) that a shown passage holds
    # (convrag.llm.steering.CopyIndex), at two strengths
    "copy-2": (CHOSEN, 300, None, {"copy_bias": 2.0}),
    "copy-4": (CHOSEN, 300, None, {"copy_bias": 4.0}),
    # the default, a follow-up the strategy found self-contained (progressive's stage 1) shown only
    # the user's earlier questions: a cold turn then reads about 300 tokens fewer before its answer
    "self-contained-questions": (CHOSEN, 300, None, {"self_contained_history": QUESTIONS}),
    # ... and so is a follow-up that repeats a specific term of the conversation (stage 1a: searched
    # as asked and with the conversation's terms, no call); the user's questions keep the thread
    "self-contained-anchored": (CHOSEN, 300, None, {"self_contained_history": QUESTIONS}),
    # the default with the whole history kept, but the question the strategy restated (progressive's
    # stage 2) asked in place of the question as asked: does naming its referent keep the model on
    # this turn's question instead of the conversation's last one?
    "standalone-asked": (CHOSEN, 300, None, {"ask_standalone": True}),
    # the default, the budget filled only with sentences scoring at least half the turn's best (each
    # passage still keeps its best): in a handbook, "You may carry over up to 5 unused days" (0.22)
    # filled the prompt beside the answer's row (0.73), and the model answered with it
    "fill-half": (CHOSEN, 300, None, {"compression": CompressionSettings(max_tokens=300, fill_share=0.5)}),
}


def _anchored_is_self_contained() -> None:
    """Progressive's stage-1a turns flagged self-contained too (for the ``self-contained-anchored`` variant)."""
    from convrag.strategies.progressive import Progressive

    rewrite = Progressive.rewrite

    def flagged(self, task):  # type: ignore[no-untyped-def]
        out = rewrite(self, task)
        if out.trace.stage == "1a":
            out.trace.self_contained = True
        return out

    Progressive.rewrite = flagged  # type: ignore[method-assign]


#: what a variant changes beyond the answer settings
PATCHES = {"self-contained-anchored": _anchored_is_self_contained}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variant", choices=sorted(VARIANTS))
    parser.add_argument("--data", default="../shared/mtrag")
    parser.add_argument("--split", default="dev", choices=("dev", "test"),
                        help="dev to choose among the variants; test only to report a chosen comparison on the same host")
    parser.add_argument("--replay", type=int, metavar="N",
                        help="replay the first N conversations per domain as a chat (reading ahead, the decline gate on, "
                             "no completion cache) instead of the sampled ungated turns")
    parser.add_argument("--no-llm-cache", action="store_true",
                        help="make every model call live (to compare variants on one llama.cpp build, and time them)")
    args = parser.parse_args()
    history, passages, length, further = VARIANTS[args.variant]
    if args.variant in PATCHES:
        PATCHES[args.variant]()
    if length:
        assert LENGTH in answer.CITED_SYSTEM
        answer.CITED_SYSTEM = answer.CITED_SYSTEM.replace(LENGTH, length)
    budgets = {"history": history, "compression": CompressionSettings(max_tokens=passages), **further}
    from convrag.cli.main import main as convrag

    if args.replay:
        answer.ANSWER_PRESETS["default"] = answer.AnswerSettings(**budgets)
        sys.argv = ["convrag", "eval-answers", "--data", args.data, "--split", args.split, "--conversations", str(args.replay),
                    "--no-compare", "--no-llm-cache", "--out", f"runs/replay-{args.split}-{args.variant}"]
    else:
        answer.ANSWER_PRESETS["ungated"] = answer.AnswerSettings(
            **budgets, decline=DeclineSettings(min_relevance=0.0, min_grounding=0.0))
        sys.argv = ["convrag", "eval-answers", "--data", args.data, "--split", args.split, "--answers", "ungated", "--no-compare",
                    "--answerable", "30", "--partial", "10", "--out", f"runs/answers-{args.split}-{args.variant}"]
        if args.no_llm_cache:
            sys.argv.append("--no-llm-cache")
    convrag()


if __name__ == "__main__":
    main()
