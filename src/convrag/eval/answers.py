"""Evaluating answers on MT-RAG turns: do they decline when they should, say what the reference
answer says, cite passages that are relevant and support them, and how fast do they come?

Turns are the user turns of ``conversations.json`` in the chosen split, with their answerability
label and the benchmark's own (human-edited) answer as the reference; the history is the
benchmark's. Per turn:

* *declined*: the pipeline's decline decision (the ANSWERABLE and PARTIAL ones are false declines);
* *reference overlap* (ANSWERABLE and PARTIAL): ROUGE-L F1 and ROUGE-1 recall (the share of the
  reference's words the answer has: "token recall"), rouge-score with stemming;
* *citations*: whether the model wrote at least one itself (not an inferred or re-pointed one),
  and for every citation whether its passage is judged relevant for the turn (the retrieval task's
  qrels) and whether the sentence carrying it is supported by the passage (at least half of the
  sentence's content words occur in it). Inferred and re-pointed citations are placed by that same
  word-overlap test, so support is also reported over the model's own numbers alone;
* *latency*: time to the first answer token and to the whole answer, as the pipeline streams it
  (the recorded times of model calls the completion cache answered are added, so a rerun reports
  what the calls cost when they were made).

A turn the model could not answer (a remote server's passing 503, a prompt longer than its
context) is kept as a row with ``failed`` and its reason, left out of every figure and counted
apart: one failure ended the whole run before, and every answer written until then was lost.
:data:`FAILURES_IN_A_ROW` failures in a row still end it (the model is down).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..data.layout import MTRAGData
from ..data.splits import conversation_of
from ..generate.answer import Answer, AnswerFailed, is_decline
from ..generate.citations import answer_sentences, supported, written_numbers
from ..pipeline import Pipeline, PipelineResult
from ..progress import SILENT, Reporter
from ..types import Message, Task
from .report import turn_bucket

LABELS = ("ANSWERABLE", "PARTIAL", "UNANSWERABLE")


@dataclass(frozen=True)
class AnswerTurn:
    """A turn to answer: the task, its answerability label, the reference answer, and the passages
    judged relevant for it (empty when the benchmark has no retrieval task for it)."""

    task: Task
    label: str
    reference: str
    relevant: frozenset[str]


def _labelled_turns(data: MTRAGData) -> list[AnswerTurn]:
    """Every user turn of the data's split that has an answerability label and a reference answer."""
    qrels: dict[str, dict[str, int]] = {}
    for domain in data.domains:
        qrels.update(data.qrels(domain))
    out: list[AnswerTurn] = []
    for conversation in data.conversations:
        if data.split != "all" and data.splits.get(conversation.conversation_id) != data.split:
            continue
        if conversation.domain not in data.domains:
            continue
        agent = [m.text for m in conversation.messages if m.speaker == "agent"]
        for task in conversation.tasks():
            label = task.enrichments.answerability[0] if task.enrichments.answerability else ""
            if label and task.turn - 1 < len(agent):
                relevant = frozenset(p for p, grade in qrels.get(task.task_id, {}).items() if grade > 0)
                out.append(AnswerTurn(task, label, agent[task.turn - 1], relevant))
    return out


def _in_order(turns: Sequence[AnswerTurn]) -> list[AnswerTurn]:
    return sorted(turns, key=lambda t: (t.task.domain, conversation_of(t.task.task_id), t.task.turn))


def answer_turns(data: MTRAGData, per_label: Mapping[str, int | None], seed: int = 0) -> list[AnswerTurn]:
    """Turns of the data's split per answerability label: all of them (``None``) or a seeded sample
    of that many; in conversation order."""
    by_label: dict[str, list[AnswerTurn]] = {label: [] for label in per_label}
    for turn in _labelled_turns(data):
        if turn.label in by_label:
            by_label[turn.label].append(turn)
    rng = random.Random(seed)
    chosen: list[AnswerTurn] = []
    for label, turns in by_label.items():
        n = per_label[label]
        chosen += turns if n is None or n >= len(turns) else rng.sample(turns, n)
    return _in_order(chosen)


def conversation_turns(data: MTRAGData, per_domain: int) -> list[AnswerTurn]:
    """Every labelled turn of the first ``per_domain`` conversations of each domain (by id), in
    order: a chat replayed turn by turn, where each prompt extends the one before it. Sampled turns
    come from different conversations, so their history is read cold; here it shows what the
    backend's prefix reuse saves in a live chat."""
    by_domain: dict[str, dict[str, list[AnswerTurn]]] = {}
    for turn in _labelled_turns(data):
        by_domain.setdefault(turn.task.domain, {}).setdefault(turn.task.conversation_id, []).append(turn)
    chosen = [t for conversations in by_domain.values() for cid in sorted(conversations)[:per_domain] for t in conversations[cid]]
    return _in_order(chosen)


class Shown(NamedTuple):
    """A passage an answer's ``[n]`` points to: its id (None where a file gives none), its text, and
    whether convrag placed the marker rather than the model wrote it."""

    passage_id: str | None
    text: str
    inferred: bool = False


def sentence_checks(text: str, cited: Callable[[int], Shown | None], relevant: frozenset[str],
                    unmatched: bool = False) -> list[dict[str, Any]]:
    """One record per (sentence, number cited in it): the passage ``cited(n)`` gives, inferred or
    not, judged relevant, and supporting the sentence. A number ``cited`` has no passage for is
    left out, or with ``unmatched`` recorded as supporting nothing and relevant to nothing (another
    system's citation of a passage it did not list is a wrong citation; convrag drops such markers)."""
    out = []
    for sentence in answer_sentences(text):
        for n in dict.fromkeys(written_numbers(sentence)):
            passage = cited(n)
            if passage is None and not unmatched:
                continue
            out.append({"number": n, "passage_id": passage.passage_id if passage else None,
                        "inferred": passage.inferred if passage else False,
                        "relevant": passage is not None and passage.passage_id in relevant,
                        "supported": passage is not None and supported(sentence, passage.text)})
    return out


def citation_checks(answer: Answer, result: PipelineResult, relevant: frozenset[str]) -> list[dict[str, Any]]:
    """:func:`sentence_checks` of a convrag answer: its citations' passages among the merged results."""
    by_number = {c.number: Shown(c.passage_id, result.merged.results[c.number - 1].hit.text, c.inferred) for c in answer.citations}
    return sentence_checks(answer.text, by_number.get, relevant)


def contexts(result: PipelineResult) -> list[dict[str, str]]:
    """The merged passages of a turn in order, ``[n]`` the n-th, as MT-RAG's generation tasks list theirs."""
    return [{"passage_id": r.hit.passage_id, "collection": r.hit.collection, "title": r.hit.title, "text": r.hit.text}
            for r in result.merged.results]


def rouge():  # type: ignore[no-untyped-def]
    """ROUGE-L and ROUGE-1 with stemming (rouge-score): the overlap every answer figure here uses."""
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL", "rouge1"], use_stemmer=True)


def score_turn(turn: AnswerTurn, result: PipelineResult, wall_s: float, first_piece_s: float | None, scorer: Any = None) -> dict[str, Any]:
    """Everything measured on one answered turn (see the module docstring)."""
    scorer = scorer or rouge()
    answer = Answer(result.text, result.citations, result.declined, result.trace.answer or {})
    trace = result.trace
    calls = list(trace.strategy.calls) if trace.strategy is not None else []
    cached_s = sum(c.latency_s for c in calls if c.cached)
    for rendering in trace.renderings:
        cached_s += sum(c.get("latency_s", 0.0) for c in rendering.trace.get("calls", []) if c.get("cached"))
    call = (trace.answer or {}).get("llm_call") or {}
    answer_cached = bool(call.get("cached"))
    first_token = ((trace.answer or {}).get("details") or {}).get("first_token_s")
    before_answer = wall_s - trace.timings_s.get("answer", 0.0) + cached_s
    ttft = None
    if call:
        ttft = before_answer + first_token if answer_cached and first_token is not None else (
            cached_s + first_piece_s if first_piece_s is not None and not answer_cached else None)
    total = wall_s + cached_s + (call.get("latency_s", 0.0) if answer_cached else 0.0)
    if not call:  # declined before generation: the decline sentence is the first and whole answer
        ttft = total
    row: dict[str, Any] = {
        "task_id": turn.task.task_id, "domain": turn.task.domain, "turn": turn.task.turn, "label": turn.label,
        "question": turn.task.question, "answer": result.text, "reference": turn.reference, "declined": result.declined,
        "citations": len(result.citations), "model_citations": sum(not c.inferred for c in result.citations),
        "citation_checks": citation_checks(answer, result, turn.relevant), "judged": bool(turn.relevant),
        # the passages [n] points to, in MT-RAG's generation format: the row is checkable again on its own (score-answers)
        "contexts": contexts(result),
        "first_token_s": ttft, "total_s": total, "prompt_tokens": call.get("prompt_tokens"),
        "fallback": (trace.answer or {}).get("fallback"), "answer_details": (trace.answer or {}).get("details", {}),
        "model_declined": bool(call) and is_decline(call.get("answer", "")),
    }
    steering = ((trace.answer or {}).get("details") or {}).get("steering") or {}
    row.update(first_choice_p=steering.get("first_choice_p"), citation_nudges=steering.get("citation_nudges"),
               copy_steps=steering.get("copy_steps"), copy_followed=steering.get("copy_followed"))
    if turn.label != "UNANSWERABLE":
        scores = scorer.score(turn.reference, result.text)
        row.update(rouge_l=scores["rougeL"].fmeasure, token_recall=scores["rouge1"].recall)
    return row


#: failed turns in a row that end the run: a passing failure is recorded and the run goes on, a
#: model that is down fails every turn (each perhaps after a timeout)
FAILURES_IN_A_ROW = 5


def run_answer_eval(pipelines: Mapping[str, Pipeline], turns: Sequence[AnswerTurn], reporter: Reporter = SILENT,
                    read_ahead: bool = False) -> list[dict[str, Any]]:
    """Answer every turn with its domain's pipeline, streaming (as a chat would), and score it.
    With ``read_ahead``, when the next turn continues the same conversation, its prompt is read up
    to the passages between the two turns (:meth:`Pipeline.prefill`, as the service does while the
    user reads an answer); that time is recorded in the next turn's row, outside its latency."""
    import threading
    import time

    scorer = rouge()
    rows = []
    ahead: dict[str, Any] | None = None
    failures_in_a_row = 0
    with reporter.stage("answering MT-RAG turns", total=len(turns)) as advance:
        for i, turn in enumerate(turns):
            messages = [*turn.task.history, Message("user", turn.task.question)]
            start = time.perf_counter()
            first: float | None = None
            result: PipelineResult | None = None
            try:
                # with a stop, as the service and the terminal chat stream a turn: the local model then
                # reads the answer's prompt in pieces it could be stopped between, as it does there
                for item in pipelines[turn.task.domain].stream(messages, turn.task.task_id, stop=threading.Event()):
                    if isinstance(item, PipelineResult):
                        result = item
                    elif first is None:
                        first = time.perf_counter() - start
            except AnswerFailed as exc:
                failures_in_a_row += 1
                if failures_in_a_row >= FAILURES_IN_A_ROW or failures_in_a_row == len(turns):
                    raise  # the model is down, not passing: said now, not after every turn has failed
                row = failed_row(turn, exc)
            else:
                failures_in_a_row = 0
                assert result is not None
                row = score_turn(turn, result, time.perf_counter() - start, first, scorer)
            row["read_ahead"] = ahead
            rows.append(row)
            ahead = None
            nxt = turns[i + 1].task if i + 1 < len(turns) else None
            if read_ahead and nxt is not None and nxt.conversation_id == turn.task.conversation_id and nxt.turn == turn.task.turn + 1:
                ahead = pipelines[nxt.domain].prefill(nxt.history)
            advance(1)
    return rows


def failed_row(turn: AnswerTurn, exc: AnswerFailed) -> dict[str, Any]:
    """The row of a turn the model could not answer: what it was, and why (the backend's own words)."""
    return {"task_id": turn.task.task_id, "domain": turn.task.domain, "turn": turn.task.turn, "label": turn.label,
            "question": turn.task.question, "reference": turn.reference, "failed": str(exc), "failure_detail": exc.detail}


def _share(values: Sequence[bool]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def _restated(row: dict[str, Any]) -> bool:
    return not row["declined"] and bool((row.get("answer_details") or {}).get("unbacked_restatement"))


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The figures the issue asks for, over a set of answered turns; turns the model failed to
    answer are counted in ``failed`` and left out of every figure."""
    failed = sum(bool(r.get("failed")) for r in rows)
    rows = [r for r in rows if not r.get("failed")]
    answerable = [r for r in rows if r["label"] in ("ANSWERABLE", "PARTIAL")]
    unanswerable = [r for r in rows if r["label"] == "UNANSWERABLE"]
    answered = [r for r in answerable if not r["declined"]]
    checks = [c for r in answerable for c in r["citation_checks"]]
    judged_checks = [c for r in answerable if r["judged"] for c in r["citation_checks"]]
    first = [r["first_token_s"] for r in rows if r["first_token_s"] is not None]
    total = [r["total_s"] for r in rows]
    pct = lambda xs, q: float(np.percentile(xs, q)) if xs else None  # noqa: E731
    return {
        "turns": len(rows),
        "failed": failed,
        "by_label": {label: sum(r["label"] == label for r in rows) for label in LABELS},
        "unanswerable_declined": _share([r["declined"] for r in unanswerable]),
        "answerable_false_declines": _share([r["declined"] for r in answerable]),
        # answered by restating the question while no cited passage holds it (a guess the trace warns of)
        "unanswerable_restated": _share([_restated(r) for r in unanswerable]),
        "answerable_restated": _share([_restated(r) for r in answerable]),
        "rouge_l": float(np.mean([r["rouge_l"] for r in answerable])) if answerable else None,
        "token_recall": float(np.mean([r["token_recall"] for r in answerable])) if answerable else None,
        "model_cited_share": _share([r["model_citations"] > 0 for r in answered]),
        "any_cited_share": _share([r["citations"] > 0 for r in answered]),
        "citations_supported": _share([c["supported"] for c in checks]),
        # the share above counts inferred and re-pointed citations, which are placed by the same
        # word-overlap test that judges support; this one is the model's own numbers only
        "model_citations_supported": _share([c["supported"] for c in checks if not c["inferred"]]),
        "citations_relevant": _share([c["relevant"] for c in judged_checks]),
        "first_token_s": {"p50": pct(first, 50), "p95": pct(first, 95)},
        "total_s": {"p50": pct(total, 50), "p95": pct(total, 95)},
    }


def breakdowns(rows: Sequence[dict[str, Any]],
               summary: Callable[[Sequence[dict[str, Any]]], dict[str, Any]] = summarize) -> dict[str, dict[str, dict[str, Any]]]:
    """``summary`` (:func:`summarize`) per domain and per turn position."""
    out: dict[str, dict[str, dict[str, Any]]] = {"domain": {}, "turn": {}}
    for domain in sorted({r["domain"] for r in rows}):
        out["domain"][domain] = summary([r for r in rows if r["domain"] == domain])
    for bucket in dict.fromkeys(turn_bucket(r["turn"]) for r in sorted(rows, key=lambda r: r["turn"])):
        out["turn"][bucket] = summary([r for r in rows if turn_bucket(r["turn"]) == bucket])
    return out


#: the issue's targets (test split, local model, 2 cores)
TARGETS = (
    ("UNANSWERABLE turns declined >= 60 %", "unanswerable_declined", lambda v: v >= 0.6),
    ("answerable turns falsely declined <= 10 %", "answerable_false_declines", lambda v: v <= 0.1),
    ("answered turns with a model-written citation >= 70 %", "model_cited_share", lambda v: v >= 0.7),
    ("citations supported by their passage >= 90 %", "citations_supported", lambda v: v >= 0.9),
    ("time to first answer token p50 <= 5 s", "first_token_s", lambda v: v["p50"] is not None and v["p50"] <= 5),
    ("whole answer p50 <= 10 s", "total_s", lambda v: v["p50"] is not None and v["p50"] <= 10),
)


def report_markdown(summary: Mapping[str, Any], parts: Mapping[str, Mapping[str, Mapping[str, Any]]], header: str,
                    baseline: Mapping[str, Any] | None = None) -> str:
    """The summary, the targets with verdicts, and the breakdowns, as Markdown."""
    from .report import markdown_table

    def fmt(value: Any) -> str:
        if value is None:
            return "n/a"
        if isinstance(value, dict):
            return f"{fmt(value.get('p50'))} / {fmt(value.get('p95'))} s"
        return f"{value:.1%}" if isinstance(value, float) and value <= 1 else (f"{value:.2f}" if isinstance(value, float) else str(value))

    measures = [("unanswerable_declined", "UNANSWERABLE declined"), ("answerable_false_declines", "ANSWERABLE/PARTIAL declined"),
                ("unanswerable_restated", "UNANSWERABLE answered by restating the question, unbacked"),
                ("answerable_restated", "ANSWERABLE/PARTIAL answered by restating the question, unbacked"),
                ("rouge_l", "ROUGE-L F1 (answerable)"), ("token_recall", "token recall (ROUGE-1 recall)"),
                ("model_cited_share", "answered with a model-written citation"), ("any_cited_share", "answered with any citation"),
                ("citations_supported", "citations supported by their passage"),
                ("model_citations_supported", "model-written citations supported"), ("citations_relevant", "citations to a judged-relevant passage"),
                ("first_token_s", "first token p50 / p95"), ("total_s", "whole answer p50 / p95")]
    header_row = ["measure", "value"] + (["first prompt (same turns)"] if baseline else [])
    rows = [[label, fmt(summary[key])] + ([fmt(baseline[key])] if baseline else []) for key, label in measures]
    targets = [[name, fmt(summary[key]), "n/a" if summary[key] is None else ("met" if ok(summary[key]) else "**missed**")]
               for name, key, ok in TARGETS]
    if baseline is not None:
        overlap_ok = summary["rouge_l"] is not None and baseline["rouge_l"] is not None and summary["rouge_l"] >= baseline["rouge_l"]
        targets.append(["reference overlap (ROUGE-L) not lower than the first prompt's", f"{fmt(summary['rouge_l'])} vs {fmt(baseline['rouge_l'])}",
                        "met" if overlap_ok else "**missed**"])
    failed = f"; {summary['failed']} more the model failed to answer, left out (their rows say why)" if summary.get("failed") else ""
    lines = [header, "", f"turns: {summary['turns']} ({', '.join(f'{k} {v}' for k, v in summary['by_label'].items())}){failed}", "",
             markdown_table(header_row, rows), "", markdown_table(["target", "measured", "verdict"], targets)]
    for name, groups in parts.items():
        lines += ["", f"By {name}:", "", markdown_table(
            [name, "turns", "UNANSWERABLE declined", "false declines", "ROUGE-L", "token recall", "model-cited", "supported"],
            [[g, s["turns"], fmt(s["unanswerable_declined"]), fmt(s["answerable_false_declines"]), fmt(s["rouge_l"]),
              fmt(s["token_recall"]), fmt(s["model_cited_share"]), fmt(s["citations_supported"])] for g, s in groups.items()])]
    return "\n".join(lines) + "\n"
