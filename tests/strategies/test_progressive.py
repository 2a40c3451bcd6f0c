"""Every stage transition and fallback of the progressive strategy, with a scripted LLM and real embeddings."""

import numpy as np
import pytest

from convrag.llm.base import LLMError
from convrag.strategies.base import EmptyQuestionError
from convrag.strategies.progressive import Progressive, ProgressiveSettings, resolved, similar_turns
from convrag.types import Message
from tests.helpers import CARDINALS, ScriptedLLM, make_task

FOLLOW_UP = "Do they play outside the US?"
GOOD = "Do the Arizona Cardinals play outside the US?"


def run(llm, embedder, question=FOLLOW_UP, exchanges=CARDINALS, **settings):  # type: ignore[no-untyped-def]
    """The default settings unless a test names others."""
    return Progressive(llm, embedder, ProgressiveSettings(**settings)).rewrite(make_task(question, exchanges))


def test_by_default_a_follow_up_with_a_marker_costs_one_call_fused_with_the_topic_expansion(embedder):
    llm = ScriptedLLM(rewrite=[GOOD, "What are the fees for adults to renew a passport?"])
    pronoun = Progressive(llm, embedder).rewrite(make_task(FOLLOW_UP, CARDINALS))
    assert (pronoun.query, pronoun.trace.stage) == (GOOD, "2") and llm.kinds() == ["rewrite"]
    assert pronoun.trace.standalone == GOOD  # the model's question on its own, for the answer prompt
    terms = pronoun.trace.details["stage_1"]["conversation_terms"]
    assert terms and pronoun.fuse_with == (FOLLOW_UP + " " + " ".join(terms),)
    assert pronoun.queries == (GOOD, pronoun.fuse_with[0])
    short = Progressive(llm, embedder).rewrite(make_task("Fees for adults?", CARDINALS))  # no pronoun, too short
    assert short.trace.stage == "2" and llm.kinds() == ["rewrite", "rewrite"] and short.fuse_with


def test_first_turn_and_questions_without_a_marker_stop_at_stage_1(embedder):
    llm = ScriptedLLM()
    assert run(llm, embedder, FOLLOW_UP, []).trace.stage == "1"
    result = run(llm, embedder, "What are the tax benefits of a Roth IRA account?")
    assert result.trace.stage == "1" and result.query == "What are the tax benefits of a Roth IRA account?"
    assert result.fuse_with == () and llm.requests == [] and not result.trace.noop and result.trace.standalone == ""
    assert result.trace.self_contained  # the answer prompt may show it less of the conversation
    assert not run(llm, embedder, "Passport fees?").trace.self_contained  # stage 1a: its topic comes from the conversation


def test_a_short_follow_up_is_fused_with_its_topic_expansion_without_a_call(embedder):
    llm = ScriptedLLM()
    exchanges = [("How do I renew a passport by mail?", "Send form DS-82 with your old passport and a photo.")]
    result = run(llm, embedder, "Fees for adults?", exchanges, expand_short=True)
    assert result.trace.stage == "1x" and llm.requests == []
    terms = result.trace.details["stage_1"]["conversation_terms"]
    assert "passport" in terms and result.query == "Fees for adults?"
    assert result.fuse_with == ("Fees for adults? " + " ".join(terms),) and result.queries[0] == "Fees for adults?"
    assert result.trace.details["fused_with"] == list(result.fuse_with)


def test_a_follow_up_naming_what_the_conversation_said_costs_no_call(embedder):
    llm = ScriptedLLM()
    for question, anchor in (("Passport fees?", ["passport"]), ("What about the stadium roof?", ["stadium", "roof"])):
        result = run(llm, embedder, question)  # short, or an explicit reference, but no pronoun
        assert (result.trace.stage, result.query, result.trace.standalone) == ("1a", question, "") and llm.requests == []
        assert result.trace.details["stage_1"]["anchor"] == anchor
        assert result.fuse_with and result.fuse_with[0].startswith(question + " ")
    pronoun = ScriptedLLM(rewrite=["Is the State Farm Stadium roof open?"])
    assert run(pronoun, embedder, "Is its roof open?").trace.stage == "2" and pronoun.kinds() == ["rewrite"]
    # a quantifier without its noun ("both": the teams) points back as a pronoun does, whatever term it repeats
    ellipsis = ScriptedLLM(rewrite=["Are State Farm Stadium tours open to fans of both Arizona teams?"])
    result = run(ellipsis, embedder, "Are the stadium tours open to fans of both?")
    assert result.trace.details["stage_1"]["markers"] == ["ellipsis:both"]
    assert result.trace.stage == "2" and ellipsis.kinds() == ["rewrite"] and "anchor" not in result.trace.details["stage_1"]
    off = ScriptedLLM(rewrite=["What are the US passport fees?"])
    assert run(off, embedder, "Passport fees?", anchored_without_call=False).trace.stage == "2" and off.kinds() == ["rewrite"]


def test_stage_2_sends_the_last_exchange_alone_by_default(embedder):
    llm = ScriptedLLM(rewrite=[GOOD])
    result = run(llm, embedder)
    assert result.trace.details["stage_2"] == {"last_turn": 3}
    prompt = llm.last_user_prompt("rewrite")
    assert "How do I renew a passport?" in prompt and "What stadium do they play in?" not in prompt


def test_a_comparison_without_what_it_compares_reads_the_exchange_before_the_last_too(embedder):
    """"Which is higher?" after the hotel limit and then the meal allowance: with the last exchange
    alone the model compared the meal allowance with alcohol."""
    exchanges = [("What is the hotel limit in London?", "260 euros a night."),
                 ("What does the meal allowance look like?", "Up to 60 euros a day.")]
    llm = ScriptedLLM(rewrite=["Which is higher, the London hotel limit or the daily meal allowance?"])
    result = run(llm, embedder, "Which is higher?", exchanges)
    assert result.trace.details["stage_1"]["markers"] == ["comparison:higher", "short:3_words"]
    assert result.trace.details["stage_2"] == {"last_turn": 2, "compared_with_turn": 1}
    prompt = llm.last_user_prompt("rewrite")
    assert "hotel limit" in prompt and "meal allowance" in prompt and result.trace.stage == "2"
    # one exchange before it: nothing more to read
    single = ScriptedLLM(rewrite=["Which meal allowance is higher?"])
    assert run(single, embedder, "Which is higher?", exchanges[1:]).trace.details["stage_2"] == {"last_turn": 1}


def test_stage_2_resolves_in_one_call_with_the_last_exchange_and_similar_ones(embedder):
    llm = ScriptedLLM(rewrite=[GOOD])
    result = run(llm, embedder, fuse_rewrite=False, top_k=2)
    assert (result.query, result.trace.stage, result.fuse_with) == (GOOD, "2", ())
    assert llm.kinds() == ["rewrite"]
    stage_2 = result.trace.details["stage_2"]
    assert stage_2["last_turn"] == 3 and len(stage_2["similar_turns"]) == 2
    assert "How do I renew a passport?" in llm.last_user_prompt("rewrite")  # the last exchange, always
    assert "pronoun:they" in result.trace.details["stage_1"]["markers"]
    assert all(c["stage"] == "2" for c in result.trace.context)


def test_a_rewrite_is_fused_with_the_topic_expansion(embedder):
    result = run(ScriptedLLM(rewrite=[GOOD]), embedder)
    assert result.query == GOOD and result.fuse_with[0].startswith(FOLLOW_UP + " ")
    assert result.trace.details["fused_with"] == list(result.fuse_with)


def test_references_can_be_left_to_the_zero_call_expansion(embedder):
    llm = ScriptedLLM()
    result = run(llm, embedder, rewrite="never")
    assert result.trace.stage == "1r" and llm.requests == [] and result.fuse_with == ()
    assert result.query.startswith(FOLLOW_UP + " ") and result.query != FOLLOW_UP
    assert run(llm, embedder, "Fees for adults?", rewrite="never").trace.stage == "1x"  # short: expanded, never sent
    no_terms = run(llm, embedder, FOLLOW_UP, [("Can you help me with something?", "Yes, of course.")], rewrite="never")  # nothing to expand with
    assert no_terms.trace.stage == "1r" and no_terms.query == FOLLOW_UP and llm.requests == []


def test_only_explicit_references_go_to_the_model_when_asked(embedder):
    llm = ScriptedLLM(rewrite=["What about the Arizona Cardinals stadium?"])
    assert run(llm, embedder, rewrite="references").trace.stage == "1r" and llm.requests == []  # "they": a pronoun only
    explicit = run(llm, embedder, "What about the stadium they mentioned?", rewrite="references")
    assert explicit.trace.stage == "2" and llm.kinds() == ["rewrite"]
    with pytest.raises(ValueError, match="rewrite policy"):
        run(llm, embedder, rewrite="sometimes")


def test_a_rewrite_that_adds_nothing_is_kept_when_escalation_is_off(embedder):
    llm = ScriptedLLM(rewrite=["Do they really play outside the US?"])
    result = run(llm, embedder)
    assert (result.query, result.trace.stage) == ("Do they really play outside the US?", "2")
    assert result.trace.details["stage_2_unresolved"] == ["pronoun:they"] and result.fuse_with
    assert result.trace.details["stage_3"].startswith("skipped") and len(result.trace.calls) == 1


def test_a_rejected_rewrite_falls_back_to_the_expansion_when_escalation_is_off(embedder):
    llm = ScriptedLLM(rewrite=["The Cardinals play in Glendale."])
    result = run(llm, embedder)
    assert result.trace.stage == "2_fallback_original" and result.query == FOLLOW_UP
    assert result.fuse_with and result.fuse_with[0].startswith(FOLLOW_UP + " ")
    assert [f.reason for f in result.trace.fallbacks] == ["not_a_question"] and len(result.trace.calls) == 1


def test_a_rewrite_that_adds_nothing_escalates_to_stage_3(embedder):
    final = "Do the Arizona Cardinals play games outside the US?"
    llm = ScriptedLLM(rewrite=["Do they really play outside the US?", final])
    result = run(llm, embedder, escalate=True)
    assert (result.query, result.trace.stage) == (final, "3")
    assert result.trace.details["stage_2_unresolved"] == ["pronoun:they"]
    assert "selected_sentences" in result.trace.details and len(result.trace.calls) == 2


def test_rejected_rewrites_fall_back_to_the_zero_call_fusion(embedder):
    llm = ScriptedLLM(rewrite=["The Cardinals play in Glendale.", "x " * 80 + "?"])
    result = run(llm, embedder, escalate=True)
    assert result.trace.stage == "3_fallback_original" and result.query == FOLLOW_UP and result.fuse_with
    assert [f.reason for f in result.trace.fallbacks] == ["not_a_question", "overlong"]
    assert [f.stage for f in result.trace.fallbacks] == ["2", "3"]


def test_a_failed_stage_3_keeps_the_stage_2_rewrite(embedder):
    llm = ScriptedLLM(rewrite=["Do they play outside the US?", LLMError("timeout")])
    result = run(llm, embedder, escalate=True)
    assert result.query == "Do they play outside the US?" and result.trace.stage == "3_fallback_previous_stage"
    assert result.trace.fallbacks[-1].reason == "llm_error" and result.trace.calls[-1].error == "timeout"
    assert result.trace.noop


@pytest.mark.parametrize("escalate", [False, True])
def test_backend_errors_never_crash(embedder, escalate):
    llm = ScriptedLLM(rewrite=[LLMError("down")] * 2)
    result = run(llm, embedder, escalate=escalate)
    assert result.query == FOLLOW_UP and [f.reason for f in result.trace.fallbacks] == ["llm_error"] * (1 + escalate)


SUMMARY = ("The user asked about the Arizona Cardinals, an NFL team from Glendale, Arizona, and the agent said "
           "they play their home games at State Farm Stadium and took part in international games before.")


def test_the_stage_2_call_can_ask_for_a_summary_searched_beside_the_restated_question(embedder):
    llm = ScriptedLLM(summary=[f"Question: {GOOD}\nSummary: {SUMMARY}"])
    result = run(llm, embedder, stage_2_call="summary")
    assert (result.query, result.trace.stage, result.trace.standalone) == (GOOD, "2", GOOD) and llm.kinds() == ["summary"]
    expansion, summary_query = result.fuse_with
    assert expansion.startswith(FOLLOW_UP + " ") and summary_query == f"Summary: {SUMMARY} Question: {GOOD}"
    assert result.trace.details["summary"] == SUMMARY and result.trace.calls[0].stage == "2"
    assert Progressive(llm, embedder, ProgressiveSettings(stage_2_call="summary")).prompt_start(make_task(FOLLOW_UP, CARDINALS).history)


def test_a_rejected_restatement_keeps_the_question_with_the_summary_and_the_expansion(embedder):
    llm = ScriptedLLM(summary=[f"Question: The Cardinals play in Glendale.\nSummary: {SUMMARY}"])
    result = run(llm, embedder, stage_2_call="summary")
    assert (result.query, result.trace.stage, result.trace.standalone) == (FOLLOW_UP, "2_fallback_original", "")
    assert result.fuse_with[1] == f"Summary: {SUMMARY} Question: {FOLLOW_UP}"
    assert [(f.stage, f.reason) for f in result.trace.fallbacks] == [("2", "question_not_a_question")]
    down = run(ScriptedLLM(summary=[LLMError("down")]), embedder, stage_2_call="summary")
    assert down.trace.stage == "2_fallback_original" and len(down.fuse_with) == 1  # the expansion alone


def test_an_unknown_stage_2_call_is_refused(embedder):
    with pytest.raises(ValueError, match="stage-2 call"):
        Progressive(ScriptedLLM(), embedder, ProgressiveSettings(stage_2_call="poem"))


def test_empty_question_is_refused(embedder):
    with pytest.raises(EmptyQuestionError):
        run(ScriptedLLM(), embedder, "   ")


def test_the_verdict_needs_new_conversation_words_or_no_reference_left():
    history = (Message("user", "Tell me about the Arizona Cardinals."), Message("agent", "An NFL team."))
    assert resolved("Do they play abroad?", "Do the Arizona Cardinals play abroad?", history)
    assert not resolved("Do they play abroad?", "Do they really play abroad?", history)
    assert resolved("Does it cost money?", "Does an NFL ticket cost money?", history)  # "it" resolved by words said before
    assert resolved("Does it cost money?", "How much money does a passport cost?", history)  # no reference left


def test_similar_turns_threshold_capped_or_top_k():
    assert similar_turns(np.array([0.2, 0.8, 0.75, 0.1])) == ([1, 2], True)
    assert similar_turns(np.array([0.9, 0.8, 0.75, 0.71]), top_k=2) == ([0, 1], True)
    assert similar_turns(np.array([0.2, 0.5, 0.1, 0.4]), top_k=3) == ([0, 1, 3], False)
