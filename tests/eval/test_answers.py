"""The answer evaluation: turns with references, per-turn scores and the summary (scripted answers)."""

import pytest

from convrag.eval.answers import answer_turns, citation_checks, conversation_turns, run_answer_eval, summarize
from convrag.generate.answer import DECLINE, Answer
from convrag.pipeline import PipelineSpec, build_pipeline
from tests.helpers import ScriptedLLM


def test_turns_carry_their_label_reference_and_judged_passages(sample) -> None:
    turns = answer_turns(sample, {"ANSWERABLE": None, "UNANSWERABLE": None})
    assert turns and {t.label for t in turns} <= {"ANSWERABLE", "UNANSWERABLE"}
    first = turns[0]
    conversation = next(c for c in sample.conversations if c.conversation_id == first.task.conversation_id)
    agent = [m.text for m in conversation.messages if m.speaker == "agent"]
    assert first.reference == agent[first.task.turn - 1]
    answerable = [t for t in turns if t.label == "ANSWERABLE"]
    assert any(t.relevant for t in answerable)
    assert len(answer_turns(sample, {"ANSWERABLE": 2}, seed=1)) == 2
    dev = answer_turns(sample.with_split("dev"), {"ANSWERABLE": None})
    assert dev and {sample.splits[t.task.conversation_id] for t in dev} == {"dev"}


def test_a_replay_takes_whole_conversations_in_turn_order(sample) -> None:
    turns = conversation_turns(sample, 1)
    by_domain: dict[str, set[str]] = {}
    for t in turns:
        by_domain.setdefault(t.task.domain, set()).add(t.task.conversation_id)
    assert by_domain and all(len(ids) == 1 for ids in by_domain.values())  # one conversation per domain
    for domain, (cid,) in by_domain.items():
        first = min(c.conversation_id for c in sample.conversations if c.domain == domain and sample.splits.get(c.conversation_id))
        assert cid == first  # the first by id, as in the strategy latency benchmark
        turn_numbers = [t.task.turn for t in turns if t.task.conversation_id == cid]
        labelled = [t.turn for c in sample.conversations if c.conversation_id == cid for t in c.tasks() if t.enrichments.answerability]
        assert turn_numbers == sorted(labelled)  # every labelled turn, in order, whatever its label
    assert len({t.label for t in conversation_turns(sample, 10)}) > 1


def test_a_scored_run_and_its_summary(sample, sample_indexes, embedder, monkeypatch) -> None:
    from convrag.pipeline import Pipeline

    turns = [t for t in answer_turns(sample, {"ANSWERABLE": 2, "UNANSWERABLE": 1}) if t.task.domain == "fiqa"][:2]
    llm = ScriptedLLM(answer=["Stocks can be sold for a gain [1].", DECLINE] * 3, rewrite=["What about stocks?"] * 6)
    pipelines = {"fiqa": build_pipeline(PipelineSpec(("fiqa",), strategy="last_turn", answer="first"), llm=llm,
                                        opened={"fiqa": sample_indexes.collection("fiqa")}, embedder=embedder)}
    stops: list[object] = []
    streamed = Pipeline.stream
    monkeypatch.setattr(Pipeline, "stream", lambda self, *a, **kw: stops.append(kw.get("stop")) or streamed(self, *a, **kw))
    rows = run_answer_eval(pipelines, turns)
    # streamed as the service streams a turn: with a stop (nobody presses it), so that the local model
    # reads each prompt in pieces there too and the latencies measured are the service's
    assert len(stops) == 2 and all(stop is not None and not stop.is_set() for stop in stops)
    assert [r["task_id"] for r in rows] == [t.task.task_id for t in turns]
    assert rows[0]["citations"] == 1 and rows[0]["total_s"] > 0 and rows[0]["first_token_s"] is not None
    assert 0.0 <= rows[0].get("rouge_l", 0.0) <= 1.0
    summary = summarize(rows)
    assert summary["turns"] == 2 and summary["total_s"]["p50"] > 0
    # the row lists the passages [n] points to, so that score-answers can check it again on its own: the same verdicts
    from convrag.eval.answer_files import Shown
    from convrag.eval.answer_files import citation_checks as checks_from_contexts

    shown = [Shown(c["passage_id"], c["text"]) for c in rows[0]["contexts"]]
    assert shown and rows[0]["citation_checks"]
    assert checks_from_contexts(rows[0]["answer"], shown, turns[0].relevant) == rows[0]["citation_checks"]


def test_a_turn_the_model_fails_is_recorded_and_the_run_goes_on(sample, sample_indexes, embedder) -> None:
    """One failed answer (a remote server's passing 503) ended the whole run, and every answer
    written until then was lost; a model that fails turn after turn still ends it."""
    from convrag.eval.answers import report_markdown
    from convrag.generate.answer import AnswerFailed
    from convrag.llm.base import LLMError

    turns = [t for t in answer_turns(sample, {"ANSWERABLE": 3, "UNANSWERABLE": 0}) if t.task.domain == "fiqa"][:2]
    assert len(turns) == 2

    def pipelines(*answers: object):  # type: ignore[no-untyped-def]
        llm = ScriptedLLM(answer=list(answers))
        return {"fiqa": build_pipeline(PipelineSpec(("fiqa",), strategy="last_turn", answer="first"), llm=llm,
                                       opened={"fiqa": sample_indexes.collection("fiqa")}, embedder=embedder)}

    passing = LLMError("http://10.0.0.1/v1 (m): InternalServerError: 503 overloaded")
    rows = run_answer_eval(pipelines(passing, "Stocks can be sold for a gain [1]."), turns)
    assert [r["task_id"] for r in rows] == [t.task.task_id for t in turns]
    assert rows[0]["failed"] == "the language model could not answer; try again" and "503 overloaded" in rows[0]["failure_detail"]
    assert rows[1]["citations"] == 1 and "failed" not in rows[1]
    summary = summarize(rows)
    assert summary["turns"] == 1 and summary["failed"] == 1 and summary["by_label"]["ANSWERABLE"] == 1
    assert "; 1 more the model failed to answer, left out" in report_markdown(summary, {}, "# run")
    with pytest.raises(AnswerFailed):
        run_answer_eval(pipelines(*[passing] * 2), turns)  # every turn failed: nothing to score


def test_citation_checks_follow_the_sentences() -> None:
    from convrag.merge.base import MergedResult, MergeOutcome
    from convrag.pipeline import PipelineResult
    from convrag.types import SourcedHit

    hits = [SourcedHit("c", "p1", "d1", "Index funds track a market index."), SourcedHit("c", "p2", "d2", "Bonds pay interest.")]
    merged = MergeOutcome([MergedResult(h, 1.0, 1.0, "r") for h in hits])
    from convrag.generate.citations import parse_citations

    text = "Index funds track an index [1]. They pay interest [1]."
    citations, _ = parse_citations(text, merged.results)
    result = PipelineResult(text, citations, False, merged)
    checks = citation_checks(Answer(text, citations, False), result, frozenset({"p1"}))
    assert [(c["relevant"], c["supported"]) for c in checks] == [(True, True), (True, False)]


def test_support_of_the_models_own_numbers_is_reported_apart_from_matched_ones() -> None:
    def row(checks):  # type: ignore[no-untyped-def]
        return {"label": "ANSWERABLE", "declined": False, "citations": len(checks), "model_citations": 1, "judged": True,
                "citation_checks": checks, "first_token_s": 1.0, "total_s": 2.0, "rouge_l": 0.2, "token_recall": 0.3}

    checks = [{"inferred": False, "supported": False, "relevant": True}, {"inferred": True, "supported": True, "relevant": True},
              {"inferred": False, "supported": True, "relevant": False}]
    summary = summarize([row(checks)])
    assert summary["citations_supported"] == 2 / 3 and summary["model_citations_supported"] == 1 / 2


def test_answers_that_restate_the_question_unbacked_are_counted_per_label() -> None:
    def row(label: str, flagged: bool, declined: bool = False) -> dict:
        return {"label": label, "declined": declined, "citations": 1, "model_citations": 1, "judged": True, "citation_checks": [],
                "first_token_s": 1.0, "total_s": 2.0, "rouge_l": 0.2, "token_recall": 0.3,
                "answer_details": {"unbacked_restatement": True} if flagged else {}}

    rows = [row("UNANSWERABLE", True), row("UNANSWERABLE", False), row("UNANSWERABLE", False, declined=True),
            row("ANSWERABLE", False), row("PARTIAL", False)]
    summary = summarize(rows)
    assert summary["unanswerable_restated"] == 1 / 3 and summary["answerable_restated"] == 0.0
