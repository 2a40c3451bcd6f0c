"""Every stage transition and fallback of the progressive strategy, with a scripted LLM and real embeddings."""

import pytest

from convrag.llm.base import LLMError
from convrag.strategies.base import EmptyQuestionError
from convrag.strategies.progressive import Progressive, similar_turns
from tests.scripted import ScriptedLLM

from .conftest import CARDINALS, make_task

FOLLOW_UP = "Do they play outside the US?"
GOOD = "Do the Arizona Cardinals play outside the US?"


def run(llm, embedder, question=FOLLOW_UP, exchanges=CARDINALS):  # type: ignore[no-untyped-def]
    return Progressive(llm, embedder).rewrite(make_task(question, exchanges))


def test_first_turn_and_standalone_questions_stop_at_stage_1(embedder):
    llm = ScriptedLLM()
    assert run(llm, embedder, FOLLOW_UP, []).trace.stage == "1"
    result = run(llm, embedder, "What are the tax benefits of a Roth IRA account?")
    assert result.trace.stage == "1" and result.query == "What are the tax benefits of a Roth IRA account?"
    assert llm.requests == [] and not result.trace.noop


def test_stage_2a_resolves_when_the_rewrite_is_unambiguous(embedder):
    llm = ScriptedLLM(rewrite=[GOOD], check=["CLEAR"])
    result = run(llm, embedder)
    assert (result.query, result.trace.stage) == (GOOD, "2a")
    assert llm.kinds() == ["rewrite", "check"]
    assert result.trace.details["stage_2a"]["selected_turns"]
    assert "pronoun:they" in result.trace.details["markers"]
    assert all(c["stage"] == "2a" for c in result.trace.context)


def test_ambiguous_2a_escalates_to_2b(embedder):
    llm = ScriptedLLM(rewrite=["Do they play outside the US?", GOOD], check=["UNCLEAR", "CLEAR"])
    result = run(llm, embedder)
    assert (result.query, result.trace.stage) == (GOOD, "2b")
    assert "User: How do I renew a passport?" in llm.last_user_prompt("rewrite")  # the last two turns


def test_ambiguous_2b_escalates_to_stage_3(embedder):
    final = "Do the Arizona Cardinals play games outside the US?"
    llm = ScriptedLLM(rewrite=[FOLLOW_UP, FOLLOW_UP, final], check=["UNCLEAR", "no idea"])
    result = run(llm, embedder)
    assert (result.query, result.trace.stage) == (final, "3")
    assert [f.reason for f in result.trace.fallbacks] == ["unreadable_ambiguity_verdict"]
    assert "selected_sentences" in result.trace.details


def test_rejected_rewrites_fall_through_and_end_with_the_original(embedder):
    answers = ["The Cardinals play in Glendale.", "When did the Arizona Cardinals get founded?", "x " * 80 + "?"]
    llm = ScriptedLLM(rewrite=answers)
    result = run(llm, embedder)
    assert result.query == FOLLOW_UP and result.trace.stage == "3_fallback_original"
    assert [f.reason for f in result.trace.fallbacks] == ["not_a_question", "lost_content", "overlong"]
    assert [f.stage for f in result.trace.fallbacks] == ["2a", "2b", "3"]


def test_a_failed_stage_3_keeps_the_last_accepted_rewrite(embedder):
    llm = ScriptedLLM(rewrite=[GOOD, "Do they play outside the US?", LLMError("timeout")], check=["UNCLEAR", "UNCLEAR"])
    result = run(llm, embedder)
    assert result.query == "Do they play outside the US?" and result.trace.stage == "3_fallback_previous_stage"
    assert result.trace.fallbacks[-1].reason == "llm_error" and result.trace.calls[-1].error == "timeout"
    assert result.trace.noop


def test_backend_errors_never_crash(embedder):
    llm = ScriptedLLM(rewrite=[LLMError("down")] * 3)
    result = run(llm, embedder)
    assert result.query == FOLLOW_UP and [f.reason for f in result.trace.fallbacks] == ["llm_error"] * 3


def test_stage_2b_is_skipped_when_2a_used_the_same_turns(embedder):
    exchanges = CARDINALS[:2]
    llm = ScriptedLLM(rewrite=[FOLLOW_UP, GOOD], check=["UNCLEAR"])
    result = run(llm, embedder, exchanges=exchanges)
    assert result.trace.details["stage_2b"].startswith("skipped")
    assert llm.kinds() == ["rewrite", "check", "rewrite"] and result.trace.stage == "3"


def test_an_essay_answer_is_rejected(embedder):
    essay = "Do the Arizona Cardinals play outside the US? " + "They played in London and Mexico City. " * 10
    llm = ScriptedLLM(rewrite=[essay, GOOD], check=["CLEAR"])
    result = run(llm, embedder)
    assert result.trace.fallbacks[0].reason == "overlong" and result.trace.stage == "2b"


def test_empty_question_is_refused(embedder):
    with pytest.raises(EmptyQuestionError):
        run(ScriptedLLM(), embedder, "   ")


def test_similar_turns_threshold_or_top_k():
    import numpy as np

    assert similar_turns(np.array([0.2, 0.8, 0.75, 0.1])) == ([1, 2], True)
    assert similar_turns(np.array([0.2, 0.5, 0.1, 0.4]), top_k=3) == ([0, 1, 3], False)
