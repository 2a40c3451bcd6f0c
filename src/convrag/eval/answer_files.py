"""Answers written by other systems, scored on MT-RAG turns as ``convrag eval-answers`` scores
convrag's own: declines on the UNANSWERABLE turns, false declines on the answerable ones, ROUGE-L F1
and token recall (ROUGE-1 recall) against the benchmark's reference answers, by rouge-score with
stemming, over the same split's labelled turns. A system's answers, the benchmark's published
generation results, or convrag's own ``answers-*.jsonl`` of an earlier run can so be set side by
side, turn by turn, with paired tests.

A line names its task (``task_id``) and holds the answer as MT-RAG's generation results do
(``"predictions": [{"text": ...}]``, the first prediction), or as ``"answer"`` (what
``eval-answers`` writes) or ``"text"``. An answer with an ``[n]`` marker counts as cited. Its
citations are checked where the line says what ``[n]`` points to, as ``eval-answers`` checks
convrag's (the passage judged relevant for the turn; the sentence carrying the marker supported by
the passage, :func:`~convrag.generate.citations.supported`):

* ``"contexts"``, as MT-RAG's generation tasks and results carry them: the passages the system
  answered from, in order, ``[n]`` the n-th (``{"document_id", "text"}``; an id is needed to judge
  relevance, a text to judge support). A number past the end points to nothing, so it is counted
  as a citation neither supported nor relevant;
* ``"citation_checks"``, as ``eval-answers`` writes them beside its ``contexts``: taken as recorded
  (they were made by the same tests, and know which citations convrag inferred rather than its
  model wrote), so an earlier run of convrag stands beside another system on the same measure.

A line with neither has its ``[n]`` markers counted, not checked.

Whether an answer declines is read from its words: :func:`~convrag.generate.answer.is_decline`
knows the ways convrag's model and most instruction-tuned models say the sources do not hold the
answer ("I do not have specific information...", "The sources do not provide information about...",
"I could not find..."); a system that words its declines otherwise gives them as a regular
expression (``decline``). Read so, the benchmark's own reference answers are declines on 75 % of its
UNANSWERABLE test turns and on 3.6 % of the answerable ones (docs/benchmarks.md): what this finds
is a floor on a system's declines, not their count.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np

from ..data.jsonl import read_jsonl, require
from ..errors import ConfigError, DataFormatError
from ..generate.answer import is_decline
from ..generate.citations import separate_markers, written_numbers
from .answers import AnswerTurn, Shown, breakdowns, rouge, sentence_checks
from .report import markdown_table
from .run_files import check_name, default_name
from .significance import paired_test


class ExternalAnswers(NamedTuple):
    """A system's answers read from a file: its name, the file, each task's answer, and where a line
    says what its citations point to, the passages it answered from (``shown``) or the checks
    ``eval-answers`` recorded (``recorded``)."""

    name: str
    path: Path
    answers: dict[str, str]
    shown: Mapping[str, tuple[Shown, ...]] = MappingProxyType({})
    recorded: Mapping[str, list[dict[str, Any]]] = MappingProxyType({})


def read_answers(path: Path, name: str | None = None) -> ExternalAnswers:
    """The answers in a JSONL file (plain, ``.gz`` or ``.zip``; the module docstring has the fields).
    An ``eval-answers`` row the model failed to answer (``"failed"``, no answer) is not an answer
    and is left out, as it was there; a task given twice, or a line with no answer, is an error
    naming its line."""
    path = Path(path)
    answers: dict[str, str] = {}
    shown: dict[str, tuple[Shown, ...]] = {}
    recorded: dict[str, list[dict[str, Any]]] = {}
    first_line: dict[str, int] = {}
    for line, record in read_jsonl(path):
        task_id = str(require(record, "task_id", (str, int), path, line))
        text = _answer_text(record, path, line)
        if text is None:
            continue
        if task_id in first_line:
            raise DataFormatError(path, f"task {task_id!r} is answered twice (first on line {first_line[task_id]})", line)
        first_line[task_id] = line
        answers[task_id] = text
        if record.get("citation_checks") is not None:  # they know which citations convrag inferred, the passages alone do not
            recorded[task_id] = _recorded_checks(record["citation_checks"], path, line)
        elif record.get("contexts") is not None:
            shown[task_id] = _contexts(record["contexts"], path, line)
    if not answers:
        raise DataFormatError(path, "the file holds no answer")
    return ExternalAnswers(check_name(name if name is not None else default_name(path)), path, answers, shown, recorded)


def _contexts(contexts: Any, path: Path, line: int) -> tuple[Shown, ...]:
    """The passages of a line's ``contexts``, in order (MT-RAG names a passage ``document_id``)."""
    if not isinstance(contexts, list):
        raise DataFormatError(path, f"field 'contexts' should be a list of passages, got {type(contexts).__name__}", line)
    out = []
    for n, context in enumerate(contexts, 1):
        if not isinstance(context, dict) or not isinstance(context.get("text"), str):
            raise DataFormatError(path, f"passage {n} of 'contexts' should be an object with a 'text' string", line)
        passage_id = next((context[k] for k in ("document_id", "passage_id", "id") if context.get(k) is not None), None)
        out.append(Shown(None if passage_id is None else str(passage_id), context["text"]))
    return tuple(out)


def _recorded_checks(checks: Any, path: Path, line: int) -> list[dict[str, Any]]:
    """``eval-answers``' checks of a row's citations, each with its verdicts."""
    if not isinstance(checks, list) or not all(isinstance(c, dict) and isinstance(c.get("supported"), bool)
                                               and isinstance(c.get("relevant"), bool) for c in checks):
        raise DataFormatError(path, "field 'citation_checks' should be a list of objects with 'supported' and 'relevant' "
                                    "true or false (what eval-answers writes)", line)
    return checks


def citation_checks(text: str, shown: Sequence[Shown], relevant: frozenset[str]) -> list[dict[str, Any]]:
    """A system's citations checked as ``eval-answers`` checks convrag's (:func:`~.answers.sentence_checks`),
    ``[n]`` the n-th passage its line lists; a number with no passage supports nothing and is relevant to nothing."""
    return sentence_checks(separate_markers(text)[0], lambda n: shown[n - 1] if 1 <= n <= len(shown) else None,
                           relevant, unmatched=True)


def _answer_text(record: Mapping[str, Any], path: Path, line: int) -> str | None:
    predictions = record.get("predictions")
    if predictions is not None:
        if not isinstance(predictions, list) or not predictions:
            raise DataFormatError(path, "field 'predictions' should be a list of {\"text\": ...} objects, not empty", line)
        first = predictions[0]
        text = first.get("text") if isinstance(first, dict) else first
        if not isinstance(text, str):
            raise DataFormatError(path, "the first of 'predictions' has no 'text' string", line)
        return text
    for key in ("answer", "text"):
        if key in record:
            if not isinstance(record[key], str):
                raise DataFormatError(path, f"field {key!r} should be str, got {type(record[key]).__name__}", line)
            return record[key]
    if record.get("failed"):
        return None
    raise DataFormatError(path, "no answer: expected 'predictions' (MT-RAG's generation results), 'answer' or 'text'", line)


def score_answers(answers: ExternalAnswers, turns: Sequence[AnswerTurn], decline: re.Pattern[str] | None = None,
                  scorer: Any = None) -> list[dict[str, Any]]:
    """One row per turn the file answers: its label, the answer, whether it declines, for an
    answerable turn its ROUGE-L F1 and token recall against the reference, and where the line says
    what its citations point to, their checks (``citation_checks``, as ``eval-answers`` writes them)."""
    scorer = scorer or rouge()
    rows = []
    for turn in turns:
        text = answers.answers.get(turn.task.task_id)
        if text is None:
            continue
        row: dict[str, Any] = {"task_id": turn.task.task_id, "domain": turn.task.domain, "turn": turn.task.turn, "label": turn.label,
                               "answer": text, "reference": turn.reference,
                               "declined": is_decline(text) or bool(decline is not None and decline.search(text))}
        task_id = turn.task.task_id
        recorded = answers.recorded.get(task_id)
        # convrag writes the markers it inferred into the text: there, cited is what its model wrote
        row["cited"] = (any(not c.get("inferred", False) for c in recorded) if recorded is not None
                        else bool(written_numbers(separate_markers(text)[0])))
        checks = citation_checks(text, answers.shown[task_id], turn.relevant) if task_id in answers.shown else recorded
        if checks is not None:
            row.update(citation_checks=checks, judged=bool(turn.relevant))
        if turn.label != "UNANSWERABLE":
            scores = scorer.score(turn.reference, text)
            row.update(rouge_l=scores["rougeL"].fmeasure, token_recall=scores["rouge1"].recall)
        rows.append(row)
    if not rows:
        example = next(iter(answers.answers))
        raise ConfigError(f"{answers.path}: none of its {len(answers.answers)} answers is for a labelled turn of the chosen split "
                          f"(it answers {example!r}; the benchmark's ids read like {turns[0].task.task_id if turns else '<conversation id><::><turn>'!r})")
    return rows


def _share(values: Sequence[bool]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def summarize_answers(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The figures ``eval-answers`` reports that need no passages, over a set of scored rows."""
    answerable = [r for r in rows if r["label"] != "UNANSWERABLE"]
    return {
        "turns": len(rows),
        "by_label": {label: sum(r["label"] == label for r in rows) for label in ("ANSWERABLE", "PARTIAL", "UNANSWERABLE")},
        "unanswerable_declined": _share([r["declined"] for r in rows if r["label"] == "UNANSWERABLE"]),
        "answerable_false_declines": _share([r["declined"] for r in answerable]),
        "rouge_l": float(np.mean([r["rouge_l"] for r in answerable])) if answerable else None,
        "token_recall": float(np.mean([r["token_recall"] for r in answerable])) if answerable else None,
        # as eval-answers' "model_cited_share": answerable turns answered (not declined) with an [n] marker
        "cited_share": _share([r["cited"] for r in answerable if not r["declined"]]),
        "words": float(np.median([len(r["answer"].split()) for r in rows])) if rows else None,
        **citation_figures(rows),
    }


def citation_figures(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``eval-answers``' citation figures, over the answerable turns whose citations were checked (as
    there: a citation on an UNANSWERABLE turn has no reference to be right against): how many turns
    and citations, the share supported by their passage (all, and those the model wrote, not
    inferred), and the share pointing to a judged-relevant passage (on turns with judgements)."""
    checked = [r for r in rows if "citation_checks" in r and r["label"] != "UNANSWERABLE"]
    checks = [c for r in checked for c in r["citation_checks"]]
    return {
        "checked_turns": len(checked),
        "citations": len(checks),
        "citations_supported": _share([c["supported"] for c in checks]),
        "model_citations_supported": _share([c["supported"] for c in checks if not c.get("inferred")]),
        "citations_relevant": _share([c["relevant"] for r in checked if r["judged"] for c in r["citation_checks"]]),
    }


def per_turn(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Each answerable turn's ROUGE-L and token recall, keyed by task, as the paired tests take them."""
    return {r["task_id"]: {"ROUGE-L": r["rouge_l"], "token recall": r["token_recall"]} for r in rows if "rouge_l" in r}


def answers_report(scored: Mapping[str, Sequence[dict[str, Any]]], baseline: str, split: str) -> tuple[str, dict[str, Any]]:
    """The systems' figures side by side as Markdown, paired tests against ``baseline``, and ROUGE-L and
    declines by domain and turn; with the same figures as a JSON-ready dict."""
    def share(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.1%}"

    summaries = {name: summarize_answers(rows) for name, rows in scored.items()}
    measures = [("turns", "turns scored", str), ("unanswerable_declined", "UNANSWERABLE declined", share),
                ("answerable_false_declines", "ANSWERABLE/PARTIAL declined", share), ("rouge_l", "ROUGE-L F1 (answerable)", share),
                ("token_recall", "token recall (ROUGE-1 recall)", share), ("cited_share", "answered with an [n] citation", share),
                ("checked_turns", "turns whose citations could be checked", str), ("citations", "citations checked", str),
                ("citations_supported", "citations supported by their passage", share),
                ("model_citations_supported", "model-written citations supported", share),
                ("citations_relevant", "citations to a judged-relevant passage", share), ("words", "words (median)", str)]
    lines = [f"Answers on MT-RAG ({split} split) scored as `convrag eval-answers` scores convrag's", "",
             markdown_table(["measure", *summaries], [[label, *(fmt(s[key]) for s in summaries.values())] for key, label, fmt in measures])]
    tests = []
    for name in scored:
        if name != baseline:
            for metric in ("ROUGE-L", "token recall"):
                test = paired_test(per_turn(scored[baseline]), per_turn(scored[name]), metric)
                tests.append({"system": name, "baseline": baseline, **test.__dict__})
    if tests:
        lines += ["", f"Paired against `{baseline}` on the answerable turns both answered (randomization test):", "",
                  markdown_table(["system", "metric", "n", "baseline", "system's", "delta", "p"],
                                 [[t["system"], t["metric"], t["n"], t["mean_baseline"], t["mean_run"], t["delta"], f"{t['p_randomization']:.3g}"]
                                  for t in tests])]
    parts = {name: breakdowns(rows, summarize_answers) for name, rows in scored.items()}
    for grouping in ("domain", "turn"):
        groups = list(dict.fromkeys(g for p in parts.values() for g in p[grouping]))
        lines += ["", f"ROUGE-L / UNANSWERABLE declined by {grouping}:", "",
                  markdown_table([grouping, *scored], [[g, *(f"{share(p[grouping][g]['rouge_l'])} / {share(p[grouping][g]['unanswerable_declined'])}"
                                                            if g in p[grouping] else "-" for p in parts.values())] for g in groups])]
    return "\n".join(lines) + "\n", {"systems": summaries, "paired": tests, "breakdowns": parts}
