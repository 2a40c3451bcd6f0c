from dataclasses import replace

import pytest

from convrag.generate.answer import (
    ANSWER_PRESETS,
    DECLINE,
    EXAMPLE_SETS,
    Answer,
    AnswerFailed,
    AnswerGenerator,
    AnswerSettings,
    Sampling,
    is_decline,
)
from convrag.generate.citations import answer_sentences
from convrag.generate.compress import CompressionSettings
from convrag.generate.decline import (
    DeclineSettings,
    EchoGuard,
    echoes_question,
    grounding,
    repeats_earlier,
    restates_question,
    said_sentences,
)
from convrag.history import Budget
from convrag.llm.base import LLMError
from convrag.types import Message
from tests.helpers import PLANS, ScriptedLLM, StreamingScriptedLLM, merged_results

FIRST = AnswerSettings.first()
#: the question the decline tests ask over PLANS
ECHOED = "But I heard the Standard plan has phone support."


def _answered(replies, settings, embedder, question=ECHOED):  # type: ignore[no-untyped-def]
    """The answer to ``question`` over PLANS, the scripted model replying ``replies`` in turn."""
    return AnswerGenerator(ScriptedLLM(answer=list(replies)), settings, embedder).answer(question, [], merged_results(PLANS))


@pytest.mark.parametrize("text", [
    DECLINE, "The passages do not contain information about fees.", "I don\u2019t have any information about that.",
    "There is no information about the launch date in the passages.", "I'm sorry, but I cannot find the answer.",
    "The launch date is not mentioned in the provided passages.", "The passages provided do not include details on pricing.",
    "No specific information is available.", "I cannot answer that from these sources.",
])
def test_the_model_saying_it_has_no_answer_is_a_decline(text):
    assert is_decline(text)


@pytest.mark.parametrize("text", [
    "The fee is 130 dollars [1].",
    # answers that only use the words of a decline: each was replaced by the decline sentence
    "If you cannot find your receipt, contact the help desk [1].", "There is no information fee for public records [1].",
    "Medicare does not provide information to third parties [2].", "Your employer can't answer for the IRS; file Form 4852 [1].",
    "The IRS does not provide details by phone, so use the online tool [1].", "No information is needed to apply [1].",
])
def test_an_answer_is_not_a_decline_for_using_its_words(text):
    assert not is_decline(text)
    answer = AnswerGenerator(ScriptedLLM(answer=[text]), FIRST).answer("q?", [], merged_results(PLANS))
    assert not answer.declined and answer.text == text


def test_the_first_prompt_answers_with_citations_and_flags_conflicts():
    llm = ScriptedLLM(answer=["The Lite plan is free [1], though sources disagree on storage [1][2]."])
    history = [Message("user", "Tell me about Lite"), Message("agent", "It is a plan.")]
    answer = AnswerGenerator(llm, FIRST).answer("Is it free?", history, merged_results(2, True))
    assert [c.number for c in answer.citations] == [1, 2] and not answer.declined
    prompt = llm.last_user_prompt("answer")
    assert "[1] (conflicting) (c0; T0) text 0" in prompt and "User: Tell me about Lite" in prompt
    assert answer.trace["llm_call"]["prompt_tokens"] > 0


def test_the_cited_prompt_shows_examples_history_first_and_only_the_relevant_sentences(embedder):
    llm = ScriptedLLM(answer=["The Lite plan is free and includes 25 GB of storage per month [1]."])
    history = [Message("user", "What storage plans are there?"), Message("agent", "Lite and Standard.")]
    settings = AnswerSettings(compression=AnswerSettings().compression.__class__(max_tokens=25))
    answer = AnswerGenerator(llm, settings, embedder).answer("Is it free?", history, merged_results(PLANS), "Is the Lite plan free?")
    messages = llm.requests[-1][1]
    assert messages[2]["content"].endswith("[1].") and len(messages) == 6  # system, two worked examples, the turn
    prompt = messages[-1]["content"]
    assert prompt.index("User: What storage plans") < prompt.index("Passages:")  # history first: a reusable prefix
    assert "Lite plan of Object Storage is free" in prompt and "Requests beyond the quota" not in prompt  # compressed
    assert "…" in prompt
    compression = answer.trace["details"]["compression"]
    assert compression["total_sentences"] == [3, 2] and compression["kept_sentences"][0] < 3
    assert answer.citations[0].passage_id == "p0" and not answer.citations[0].inferred


def test_treebank_spaced_passages_are_shown_tidied_and_judged_as_stored(embedder):
    stored = ["The Cardinals ' stadium , State Farm Stadium , opened in 2006 . It has a retractable roof ( and a rolling field ) ."]
    llm = ScriptedLLM(answer=["State Farm Stadium opened in 2006 [1]."])
    answer = AnswerGenerator(llm, AnswerSettings(decline=None), embedder).answer("When did it open?", [], merged_results(stored))
    prompt = llm.last_user_prompt("answer")
    assert "The Cardinals' stadium, State Farm Stadium, opened in 2006. It has a retractable roof (and a rolling field)." in prompt
    assert answer.citations[0].passage_id == "p0" and not answer.declined


def test_passage_labels_show_the_source_by_default_or_the_title_alone(embedder):
    untitled = merged_results(PLANS, conflict=True)
    untitled[1] = replace(untitled[1], hit=untitled[1].hit._replace(title=""))
    for compression in (AnswerSettings().compression, None):
        llm = ScriptedLLM(answer=["The Lite plan is free [1]."] * 2)
        AnswerGenerator(llm, AnswerSettings(compression=compression, decline=None), embedder).answer("Is it free?", [], untitled)
        # the default: collection and title, the document id where there is no title
        prompt = llm.last_user_prompt("answer")
        assert "[1] (conflicting) (c0; T0) The Lite plan" in prompt and "[2] (conflicting) (c1; d1) The Standard" in prompt
        AnswerGenerator(llm, AnswerSettings(compression=compression, decline=None, labels="title"), embedder).answer("Is it free?", [], untitled)
        # the title alone, as the worked examples show one; nothing in place of a missing title
        prompt = llm.last_user_prompt("answer")
        assert "[1] (conflicting) (T0) The Lite plan" in prompt and "[2] (conflicting) The Standard plan" in prompt
        assert "c0" not in prompt and "d1" not in prompt
    with pytest.raises(ValueError, match="passage labels"):
        AnswerSettings(labels="url")


def test_the_standalone_question_is_asked_in_place_of_the_question_with_the_users_side_only(embedder):
    llm = ScriptedLLM(answer=["The Lite plan is free [1]."] * 3)
    history = [Message("user", "What storage plans are there?"), Message("agent", "Lite and Standard, billed monthly.")]
    compact = AnswerSettings(history=Budget(tokens=100, answer_words=0), ask_standalone=True, examples="full")
    answer = AnswerGenerator(llm, compact, embedder).answer("Is it free?", history, merged_results(PLANS), "Is the Lite plan free?",
                                                            "Is the Lite plan free?")
    messages = llm.requests[-1][1]
    prompt = messages[-1]["content"]
    assert prompt.endswith("Question: Is the Lite plan free?\nAnswer:") and answer.trace["details"]["asked"] == "Is the Lite plan free?"
    assert "User: What storage plans are there?" in prompt and "Lite and Standard" not in prompt  # the user's side only
    assert messages[2]["content"] == EXAMPLE_SETS["full"][0].answer != EXAMPLE_SETS["brief"][0].answer
    # no question written by the model: the question as asked (the retrieval query only scores sentences)
    AnswerGenerator(llm, compact, embedder).answer("Is it free?", history, merged_results(PLANS), "Is it free? storage plans", None)
    assert llm.requests[-1][1][-1]["content"].endswith("Question: Is it free?\nAnswer:")
    # the setting off: the question as asked, with the whole exchange
    answer = AnswerGenerator(llm, AnswerSettings(), embedder).answer("Is it free?", history, merged_results(PLANS), "Is the Lite plan free?",
                                                                     "Is the Lite plan free?")
    prompt = llm.requests[-1][1][-1]["content"]
    assert prompt.endswith("Question: Is it free?\nAnswer:") and "Assistant: Lite and Standard" in prompt
    assert answer.trace["details"]["history"] == {"exchanges": 1, "dropped": 0, "step": AnswerSettings().history.step}
    with pytest.raises(ValueError, match="unknown worked examples"):
        AnswerSettings(examples="chatty")


def test_a_self_contained_follow_up_is_shown_the_conversation_within_its_own_budget(embedder):
    llm = ScriptedLLM(answer=["The Lite plan is free [1]."] * 3)
    history = [Message("user", "What storage plans are there?"), Message("agent", "Lite and Standard, billed monthly.")]
    questions_only = AnswerSettings(decline=None, self_contained_history=Budget(tokens=100, answer_words=0))
    answer = AnswerGenerator(llm, questions_only, embedder).answer("Is the Lite plan free?", history, merged_results(PLANS),
                                                                  self_contained=True)
    prompt = llm.last_user_prompt("answer")
    assert "User: What storage plans are there?" in prompt and "Lite and Standard" not in prompt
    assert answer.trace["details"]["self_contained"] == "history cut to 100 tokens, 0 words an answer"
    # a turn the strategy did not find self-contained keeps the whole exchange
    answer = AnswerGenerator(llm, questions_only, embedder).answer("Is it free?", history, merged_results(PLANS))
    assert "Assistant: Lite and Standard" in llm.last_user_prompt("answer") and "self_contained" not in answer.trace["details"]
    # the setting off (the default): a self-contained turn is shown the whole exchange too
    AnswerGenerator(llm, AnswerSettings(), embedder).answer("Is the Lite plan free?", history, merged_results(PLANS), self_contained=True)
    assert "Assistant: Lite and Standard" in llm.last_user_prompt("answer")


def test_a_self_contained_follow_up_keeps_the_whole_history_the_backend_read_ahead(embedder):
    class ReadAhead(ScriptedLLM):
        """A backend that reuses what it read: it holds every prompt start read ahead."""

        def __init__(self, **kw):  # type: ignore[no-untyped-def]
            super().__init__(**kw)
            self.read: list[str] = []

        def prefill(self, messages):  # type: ignore[no-untyped-def]
            self.read.append("".join(m["content"] for m in messages))
            return 1

        def holds(self, messages):  # type: ignore[no-untyped-def]
            return "".join(m["content"] for m in messages) in self.read

    history = [Message("user", "What storage plans are there?"), Message("agent", "Lite and Standard, billed monthly.")]
    settings = AnswerSettings(self_contained_history=Budget(tokens=100, answer_words=0))
    llm = ReadAhead(answer=["The Lite plan is free [1]."] * 2)
    generator = AnswerGenerator(llm, settings, embedder)
    generator.answer("Is the Lite plan free?", history, merged_results(PLANS), self_contained=True)
    assert "Lite and Standard" not in llm.last_user_prompt("answer")  # cold: the short history
    generator.prefill(history)  # what a chat does while the user reads the last answer
    answer = generator.answer("Is the Lite plan free?", history, merged_results(PLANS), self_contained=True)
    assert "Assistant: Lite and Standard" in llm.last_user_prompt("answer")  # already read: shown whole, at no cost
    assert answer.trace["details"]["self_contained"] == "the whole history: the backend had read it ahead"


def test_nothing_relevant_is_declined_without_a_call(embedder):
    llm = ScriptedLLM()
    answer = AnswerGenerator(llm, AnswerSettings(decline=DeclineSettings(min_relevance=0.6)), embedder).answer(
        "Who won the chess olympiad in 1980?", [], merged_results(PLANS))
    assert answer.declined and answer.text == DECLINE and llm.requests == []
    assert "without a model call" in answer.trace["fallback"]


def test_an_answer_not_grounded_in_the_passages_is_declined(embedder):
    invented = "The Lite plan was launched in 1998 by a team in Toronto after a merger [1]."
    llm = ScriptedLLM(answer=[invented])
    only_grounding = AnswerSettings(decline=DeclineSettings(min_relevance=0.0, min_grounding=0.5))  # the gate is off by default
    answer = AnswerGenerator(llm, only_grounding, embedder).answer("When was the Lite plan launched?", [], merged_results(PLANS))
    assert answer.declined and answer.text == DECLINE and answer.citations == []
    assert answer.trace["details"]["grounding"] < 0.5 and answer.trace["llm_call"]["answer"] == invented
    assert grounding("The Lite plan is free.", PLANS) == 1.0 and grounding("", PLANS) == 1.0


def test_an_answer_that_only_restates_the_question_unbacked_is_declined(embedder):
    guess = "Yes, the Standard plan comes with phone support [2]."
    no_relevance_floor = AnswerSettings(decline=DeclineSettings(min_relevance=0.0, decline_restated=True))
    answer = _answered([guess], no_relevance_floor, embedder, "Does the Standard plan come with phone support?")
    assert answer.declined and answer.text == DECLINE and answer.citations == []
    assert "only restates the question" in answer.trace["fallback"] and answer.trace["llm_call"]["answer"] == guess
    # the same restatement held by the passage it cites is an answer
    backed = AnswerGenerator(ScriptedLLM(answer=["Yes, the Lite plan of Object Storage is free [1]."]), no_relevance_floor,
                             embedder).answer("Is the Lite plan of Object Storage free?", [], merged_results(PLANS))
    assert not backed.declined and [c.number for c in backed.citations] == [1]
    assert "unbacked_restatement" not in backed.trace["details"] and "warning" not in backed.trace
    # by default (and ungated, for choosing thresholds on dev) the answer stands, with a warning
    for settings in (AnswerSettings(decline=DeclineSettings(min_relevance=0.0)), ANSWER_PRESETS["ungated"]):
        kept = _answered([guess], settings, embedder, "Does the Standard plan come with phone support?")
        assert not kept.declined and kept.text == guess and kept.trace["details"]["unbacked_restatement"]
        assert "only restates the question" in kept.trace["warning"]


def test_restating_the_question_means_adding_no_content_word():
    assert restates_question("Yes, they use guns [4].", "Do they use guns?")
    assert restates_question("No, those are not the only steps.", "Are those the only steps?")
    assert restates_question("", "Anything?")
    assert not restates_question("Yes, they use muskets [4].", "Do they use guns?")


def test_an_answer_that_repeats_the_question_word_for_word_is_declined(embedder):
    """The 1.5B model sometimes writes the user's message back ("But I heard on-premises storage was an
    option [1]."): it answers nothing, and its citation was shown as if it did."""
    echo = "But I heard the Standard plan has phone support [2]."
    settings = AnswerSettings(decline=DeclineSettings(min_relevance=0.0, retry_echo=False))
    answer = _answered([echo], settings, embedder)
    assert answer.declined and answer.text == DECLINE and answer.citations == []
    assert "repeats the question word for word" in answer.trace["fallback"] and answer.trace["llm_call"]["answer"] == echo
    # off, the echo stands; and the first prompt, which has no gate, keeps it too
    kept = _answered([echo], AnswerSettings(decline=DeclineSettings(min_relevance=0.0, decline_echo=False)), embedder)
    assert not kept.declined and kept.text == echo
    first = _answered([echo], AnswerSettings.first(), embedder)
    assert not first.declined


def test_an_echo_is_written_again_sampled_before_it_is_declined(embedder):
    """Declining an echo declined answerable turns (two on dev): the model had the answer in front of it.
    Greedy decoding, and the completion cache, would write the same echo again, so the second attempt
    is sampled, with a fixed seed; the first is kept in the trace. An echo again is declined."""
    echo, answered = "But I heard the Standard plan has phone support [2].", "The Standard plan includes phone support on weekdays [2]."
    settings = AnswerSettings(decline=DeclineSettings(min_relevance=0.0))
    llm = ScriptedLLM(answer=[echo, answered])
    answer = AnswerGenerator(llm, settings, embedder).answer(ECHOED, [], merged_results(PLANS))
    assert not answer.declined and answer.text == answered and "fallback" not in answer.trace
    assert [(d.temperature, d.seed) for d in llm.decodings] == [(0.0, None), (0.7, 0)]
    retry = answer.trace["details"]["echo_retry"]
    assert retry["first"]["answer"] == echo and retry["sampling"]["seed"] == 0 and answer.trace["llm_call"]["answer"] == answered
    twice = _answered([echo, echo], settings, embedder)
    assert twice.declined and "written again, sampled, and again" in twice.trace["fallback"]
    # a sampled first attempt ("Regenerate") is followed by the next seed
    llm = ScriptedLLM(answer=[echo, answered])
    AnswerGenerator(llm, settings, embedder).answer(ECHOED, [], merged_results(PLANS), sampling=Sampling(0.7, 41))
    assert [d.seed for d in llm.decodings] == [41, 42]


def test_a_streamed_echo_is_held_back_and_never_shown(embedder):
    """Streamed, an echo's words had reached the user before it was declined. The pieces that could
    still be the question written back are held until they are not; an answer is held for a piece or
    two, an echo whole, and the second attempt is what streams."""
    question = ECHOED
    echo, answered = "But I heard the Standard plan has phone support [2].", "But the Standard plan has no phone support [2]."
    settings = AnswerSettings(decline=DeclineSettings(min_relevance=0.0))
    items = list(AnswerGenerator(StreamingScriptedLLM(answer=[echo, answered]), settings, embedder).stream(question, [], merged_results(PLANS)))
    pieces, final = items[:-1], items[-1]
    assert "".join(pieces) == answered and not final.declined and final.text == answered  # type: ignore[union-attr]
    # with the retry off, the held echo is not shown either: the decline sentence replaces it
    off = AnswerSettings(decline=DeclineSettings(min_relevance=0.0, retry_echo=False))
    items = list(AnswerGenerator(StreamingScriptedLLM(answer=[echo]), off, embedder).stream(question, [], merged_results(PLANS)))
    assert len(items) == 1 and items[0].declined  # type: ignore[union-attr]
    # an answer that is not an echo streams as it did, once it leaves the question's words
    items = list(AnswerGenerator(StreamingScriptedLLM(answer=[answered]), settings, embedder).stream(question, [], merged_results(PLANS)))
    assert items[:-1] == ["But", " the", " Standard", " plan", " has", " no", " phone", " support", " [2]."]


def test_the_echo_guard_holds_only_what_could_still_be_the_question():
    guard = EchoGuard("Not payment?")
    assert guard.feed("No") == [] and guard.feed("t pay") == [] and guard.feed("ment [") == [] and guard.feed("1].") == []
    assert guard.flush() == ["No", "t pay", "ment [", "1]."]
    guard = EchoGuard("Is the Lite plan free?")
    assert guard.feed("I") == [] and guard.feed("t is") == ["I", "t is"] and guard.feed(" free") == [" free"]
    guard = EchoGuard("Is the Lite plan free?")
    assert guard.feed("Is the Lite plan free? Yes") == ["Is the Lite plan free? Yes"]  # longer than the question


#: an earlier exchange over PLANS, and the model writing its answer again to the next question
EARLIER = [Message("user", "Does the Standard plan have phone support?"),
           Message("agent", "The Standard plan includes phone support on weekdays [2]. Calls are answered within an hour [2].")]
REPEATED = "The Standard plan includes phone support on weekdays [1]."
NEW = "Phone support is not offered on weekends [2]."


def test_an_earlier_answer_written_again_is_written_once_more_sampled(embedder):
    """Shown the same passages again, the small model wrote its last answer to a new question ("How is
    that different from a garbage collector?" after "What is ownership in Rust?"). Such an answer is
    written once more, sampled (``retry_repeat``, an option); the second attempt stands, a repeat or not."""
    settings = AnswerSettings(decline=DeclineSettings(min_relevance=0.0), retry_repeat=True)
    question = "What about weekends?"
    llm = ScriptedLLM(answer=[REPEATED, NEW])
    answer = AnswerGenerator(llm, settings, embedder).answer(question, EARLIER, merged_results(PLANS))
    assert answer.text == NEW and [(d.temperature, d.seed) for d in llm.decodings] == [(0.0, None), (0.7, 0)]
    retry = answer.trace["details"]["repeat_retry"]
    assert retry["first"]["answer"] == REPEATED and "again" not in retry and "repeat" not in answer.trace["details"]
    llm = ScriptedLLM(answer=[REPEATED, REPEATED])
    twice = AnswerGenerator(llm, settings, embedder).answer(question, EARLIER, merged_results(PLANS))
    assert not twice.declined and _bare(twice.text) == _bare(REPEATED) and twice.trace["details"]["repeat_retry"]["again"]
    # a new answer, an answer that says something besides, or the option off: one attempt
    for replies, options in (([NEW], settings), ([f"{REPEATED} {NEW}"], settings), ([REPEATED], replace(settings, retry_repeat=False))):
        llm = ScriptedLLM(answer=list(replies))
        answer = AnswerGenerator(llm, options, embedder).answer(question, EARLIER, merged_results(PLANS))
        assert len(llm.decodings) == 1 and "repeat_retry" not in answer.trace["details"]
    # off (the default), a repeat is marked in the trace
    assert answer.trace["details"]["repeat"] == REPEATED and ANSWER_PRESETS["retry-repeat"].retry_repeat
    assert not AnswerSettings().retry_repeat


def test_a_streamed_repeat_is_held_back_and_the_second_attempt_streams(embedder):
    settings = AnswerSettings(decline=DeclineSettings(min_relevance=0.0), retry_repeat=True)
    generator = AnswerGenerator(StreamingScriptedLLM(answer=[REPEATED, NEW]), settings, embedder)
    items = list(generator.stream("What about weekends?", EARLIER, merged_results(PLANS)))
    assert "".join(items[:-1]) == NEW and items[-1].text == NEW  # type: ignore[union-attr]


def test_a_repeat_is_made_wholly_of_sentences_said_before():
    said = said_sentences([m.text for m in EARLIER if m.speaker == "agent"] + ["Yes [1]."])
    assert said == (tuple("the standard plan includes phone support on weekdays".split()),
                    tuple("calls are answered within an hour".split()))  # "Yes." is too short to count
    assert repeats_earlier("Calls are answered within an hour [1]. The Standard plan includes phone support on weekdays.", said)
    assert not repeats_earlier(f"{REPEATED} {NEW}", said) and not repeats_earlier("The Standard plan includes phone support", said)
    assert not repeats_earlier("", said) and not repeats_earlier(REPEATED, ())
    guard = EchoGuard("", said)  # held while it could still be a repeat, let through from the first new word
    assert guard.feed("The") == [] and guard.feed(" Standard plan") == [] and guard.feed(" costs") == ["The", " Standard plan", " costs"]


def _bare(text: str) -> str:
    return " ".join(text.replace("[1]", "").replace("[2]", "").split())


def test_an_echo_is_the_same_words_in_the_same_order():
    assert echoes_question("Not payment [1].", "Not payment")
    assert echoes_question("I Europa livable for humans [2].", "I Europa livable for humans?")
    # a yes/no question answered as a statement is an answer
    assert not echoes_question("The Lite plan is free [1].", "Is the Lite plan free?")
    assert not echoes_question("Yes, the Lite plan is free [1].", "Is the Lite plan free?")
    assert not echoes_question("[1]", "Is the Lite plan free?") and not echoes_question("", "Anything?")


def test_any_decline_wording_becomes_the_one_decline_sentence(embedder):
    llm = ScriptedLLM(answer=["The passages do not contain information about the launch date."])
    answer = AnswerGenerator(llm, AnswerSettings(decline=DeclineSettings(min_relevance=0.0)), embedder).answer("When was the Lite plan launched?", [], merged_results(PLANS))
    assert answer.declined and answer.text == DECLINE


def test_a_number_that_names_no_passage_is_recorded_and_not_shown():
    reply = "The Lite plan of Object Storage is free of charge [7]. Archive storage is cheaper but slower to read [2][9]."
    answer = AnswerGenerator(ScriptedLLM(answer=[reply]), FIRST).answer("q?", [], merged_results(PLANS))
    assert answer.text == "The Lite plan of Object Storage is free of charge [1]. Archive storage is cheaper but slower to read [2]."
    assert answer.trace["invalid_citations"] == [7, 9] and [(c.number, c.inferred) for c in answer.citations] == [(1, True), (2, False)]


def test_a_reply_that_declines_only_in_part_keeps_what_it_answers(embedder):
    # the whole reply became the decline sentence, and the fee with it
    settings = AnswerSettings(decline=DeclineSettings(min_relevance=0.0))
    partial = "The Lite plan of Object Storage is free of charge [1]. The passages do not contain information about its launch date."
    answer = AnswerGenerator(ScriptedLLM(answer=[partial]), settings, embedder).answer(
        "Is the Lite plan free, and when was it launched?", [], merged_results(PLANS))
    assert not answer.declined and answer.text == partial and [c.number for c in answer.citations] == [1]
    assert answer.trace["details"]["declined_in_part"] == ["The passages do not contain information about its launch date."]
    # a decline with a remark that no passage holds is still a decline
    remark = "The passages do not contain information about the launch date. You could ask the provider's support team [1]."
    declined = AnswerGenerator(ScriptedLLM(answer=[remark]), settings, embedder).answer(
        "When was the Lite plan launched?", [], merged_results(PLANS))
    assert declined.declined and declined.text == DECLINE


def test_no_passages_declines_without_a_call_and_a_model_failure_is_raised_not_answered(embedder):
    llm = ScriptedLLM()
    answer = AnswerGenerator(llm, embedder=embedder).answer("q?", [], [])
    assert answer.declined and answer.text == DECLINE and llm.requests == []
    with pytest.raises(AnswerFailed) as failed:
        AnswerGenerator(ScriptedLLM(answer=[LLMError("http://10.0.0.1:9 refused")]), FIRST).answer("q?", [], merged_results(1))
    assert "10.0.0.1" not in str(failed.value) and "10.0.0.1" in failed.value.detail
    with pytest.raises(AnswerFailed):
        list(AnswerGenerator(StreamingScriptedLLM(answer=[LLMError("down")]), FIRST).stream("q?", [], merged_results(1)))
    empty = AnswerGenerator(ScriptedLLM(answer=["   "]), FIRST).answer("q?", [], merged_results(1))
    assert empty.declined and empty.trace["fallback"] == "empty answer"
    uncited = AnswerGenerator(ScriptedLLM(answer=["It is free."]), FIRST).answer("q?", [], merged_results(1))
    assert uncited.trace["warning"] == "answer cites no passage"


def test_an_answer_of_citation_markers_alone_is_declined_and_kept_in_the_trace(embedder):
    # the local model once answered "tips for starting my own" with "[1] [2] [3] [4] [5]" (a dev turn of
    # 2026-11-25): markers, no words; shown as it was, it cited five passages for saying nothing
    no_floor = AnswerSettings(decline=DeclineSettings(min_relevance=0.0))
    for markers in ("[1] [2] [3] [4] [5]", "[1].", " [2][3] "):
        for settings in (no_floor, FIRST):
            answer = AnswerGenerator(ScriptedLLM(answer=[markers]), settings, embedder).answer(
                "Is the Lite plan of Object Storage free?", [], merged_results(PLANS))
            assert answer.declined and answer.text == DECLINE and answer.citations == []
            assert answer.trace["fallback"] == "the answer holds only citation markers, no words"
            assert answer.trace["llm_call"]["answer"] == markers  # what the model wrote stays readable
    words = AnswerGenerator(ScriptedLLM(answer=["Free [1]."]), no_floor, embedder).answer(
        "Is the Lite plan of Object Storage free?", [], merged_results(PLANS))
    assert not words.declined and words.text.startswith("Free")


def test_an_uncited_answer_copied_from_a_passage_gets_an_inferred_citation():
    passages = merged_results(["Selling stock has tax effects when you realize a gain or a loss.",
                               "Preferred stocks pay fixed dividends to their holders."])
    llm = ScriptedLLM(answer=["Preferred stocks pay fixed dividends to holders."])
    answer = AnswerGenerator(llm, FIRST).answer("q?", [], passages)
    assert [(c.number, c.inferred) for c in answer.citations] == [(2, True)] and answer.trace["inferred_citations"] == [2]


def test_an_answer_written_as_a_list_keeps_its_lines():
    # the citation repairs put the sentences together with spaces: the streamed list became one line at the end
    text = ("The plans differ:\n\n- The Lite plan of Object Storage is free [2].\n"
            "- Archive storage is cheaper but slower to read [2].\n- Requests beyond the quota are refused [1].")
    answer = AnswerGenerator(ScriptedLLM(answer=[text]), FIRST).answer("What plans are there?", [], merged_results(PLANS))
    assert answer.text == text.replace("free [2]", "free [1]")
    assert answer.trace["repointed_citations"] == [{"sentence": 0, "written": [2], "to": 1}]
    uncited = AnswerGenerator(ScriptedLLM(answer=[text.replace(" [1]", "").replace(" [2]", "")]), FIRST).answer(
        "What plans are there?", [], merged_results(PLANS))
    assert uncited.text == text.replace("free [2]", "free [1]") and uncited.trace["inferred_citations"] == [1, 2]


def test_streamed_answer_ends_with_the_same_answer_as_a_plain_call(embedder):
    text = "The Lite plan of Object Storage is free [1]."
    items = list(AnswerGenerator(StreamingScriptedLLM(answer=[text]), embedder=embedder).stream("Is the Lite plan of Object Storage free?", [], merged_results(PLANS)))
    pieces, final = items[:-1], items[-1]
    assert "".join(pieces) == text and len(pieces) == len(text.split(" ")) and isinstance(final, Answer)
    plain = AnswerGenerator(ScriptedLLM(answer=[text]), embedder=embedder).answer("Is the Lite plan of Object Storage free?", [], merged_results(PLANS))
    assert (final.text, final.citations, final.declined) == (plain.text, plain.citations, plain.declined)
    declined = list(AnswerGenerator(StreamingScriptedLLM(), embedder=embedder).stream("q?", [], []))
    assert declined[0] == DECLINE and declined[-1].declined


def test_unknown_prompt_is_refused():
    with pytest.raises(ValueError, match="unknown answer prompt"):
        AnswerSettings(prompt="chatty")


class _Doubtful(ScriptedLLM):
    """Answers as a steering backend would: the decline sentence, forced by the model's doubt."""

    def complete(self, messages, params=None):  # type: ignore[no-untyped-def]
        self.params = params
        completion = super().complete(messages, params)
        forced = params.first_choice_at is not None
        return completion._replace(steering={"first_choice_p": 0.3, "first_choice_forced": forced, "citation_nudges": 0})


def test_the_cited_prompt_asks_for_the_steers_and_a_forced_doubt_is_recorded_as_the_decline_reason(embedder):
    gate = AnswerSettings(decline=DeclineSettings(min_relevance=0.0, model_decline_at=0.25))
    llm = _Doubtful(answer=[DECLINE])
    answer = AnswerGenerator(llm, gate, embedder).answer("How much is the Standard plan?", [], merged_results(PLANS))
    assert llm.params.cite_sentences and llm.params.first_choice == DECLINE and llm.params.first_choice_at == 0.25
    assert answer.declined and "model's doubt" in answer.trace["fallback"] and "0.30 >= 0.25" in answer.trace["fallback"]
    assert answer.trace["details"]["steering"]["first_choice_p"] == 0.3


def test_a_backend_that_cannot_steer_is_recorded_and_the_first_prompt_asks_for_no_steer(embedder):
    llm = ScriptedLLM(answer=["The Lite plan is free [1]."])
    answer = AnswerGenerator(llm, AnswerSettings(decline=DeclineSettings(min_relevance=0.0)), embedder).answer(
        "Is the Lite plan free?", [], merged_results(PLANS))
    assert "steering" in answer.trace["details"] and answer.trace["details"]["steering"] is None
    assert not AnswerGenerator(ScriptedLLM(), FIRST).params.steered


def test_numbers_cited_together_are_the_model_s_citations():
    reply = "The Lite plan is free, and the Standard plan is billed per gigabyte stored [1, 2]."
    answer = AnswerGenerator(ScriptedLLM(answer=[reply]), FIRST).answer("q?", [], merged_results(PLANS))
    assert answer.text == "The Lite plan is free, and the Standard plan is billed per gigabyte stored [1][2]."
    assert [(c.number, c.inferred) for c in answer.citations] == [(1, False), (2, False)]
    assert answer.trace["details"]["grouped_citations"] == ["[1, 2]"] and "inferred_citations" not in answer.trace


def test_a_repointed_number_the_model_wrote_nowhere_counts_as_matched_not_written(embedder):
    llm = ScriptedLLM(answer=["The Lite plan of Object Storage is free of charge [2]."])
    answer = AnswerGenerator(llm, AnswerSettings(decline=DeclineSettings(min_relevance=0.0)), embedder).answer(
        "Is the Lite plan free?", [], merged_results(PLANS))
    assert answer.text.endswith("[1].") and [(c.number, c.inferred) for c in answer.citations] == [(1, True)]
    assert answer.trace["repointed_citations"] == [{"sentence": 0, "written": [2], "to": 1}]


class _Recording(ScriptedLLM):
    def complete(self, messages, params=None):  # type: ignore[no-untyped-def]
        self.params = params
        return super().complete(messages, params)


def test_the_copy_steer_is_given_the_passages_the_prompt_shows_and_only_when_asked(embedder):
    settings = AnswerSettings(decline=DeclineSettings(min_relevance=0.0), copy_bias=2.0)
    llm = _Recording(answer=["The Lite plan is free [1]."])
    AnswerGenerator(llm, settings, embedder).answer("Is the Lite plan free?", [], merged_results(PLANS))
    shown = llm.last_user_prompt("answer")
    assert llm.params.copy_bias == 2.0 and llm.params.copy_from and llm.params.copies
    assert all(text in shown for text in llm.params.copy_from)  # the compressed sentences, as shown
    assert ANSWER_PRESETS["copy"].copy_bias > 0 and ANSWER_PRESETS["default"].copy_bias == 0  # opt-in by name
    plain = _Recording(answer=["The Lite plan is free [1]."])
    AnswerGenerator(plain, replace(settings, copy_bias=0.0), embedder).answer("Is the Lite plan free?", [], merged_results(PLANS))
    assert not plain.params.copies and plain.params.copy_from == ()


def test_an_answer_stops_where_the_model_would_write_the_users_next_turn(embedder):
    for settings in (AnswerSettings(), FIRST):
        assert "\nUser:" in AnswerGenerator(ScriptedLLM(), settings, embedder).params.stop


def test_an_answer_cut_off_by_the_token_limit_ends_at_its_last_whole_sentence(embedder):
    from convrag.llm.base import Completion

    def answer(text: str, finish: str | None, streamed: bool = False) -> Answer:
        completion = Completion(text, 100, 160, 1.0, "scripted", finish_reason=finish)
        settings = AnswerSettings(decline=DeclineSettings(min_relevance=0.0))
        question = "Is the Lite plan of Object Storage free?"
        if streamed:
            *_, last = AnswerGenerator(StreamingScriptedLLM(answer=[completion]), settings, embedder).stream(question, [], merged_results(PLANS))
            return last
        return AnswerGenerator(ScriptedLLM(answer=[completion]), settings, embedder).answer(question, [], merged_results(PLANS))

    cut = "The Lite plan of Object Storage is free [1]. It includes 25 GB of storage per month [1]. Above that, each extra"
    for streamed in (False, True):
        ended = answer(cut, "length", streamed)
        assert ended.text == "The Lite plan of Object Storage is free [1]. It includes 25 GB of storage per month [1]."
        assert ended.trace["details"]["cut_off"] == {"max_tokens": 160, "dropped": "Above that, each extra"}
    assert answer(cut, "stop").text == cut and "cut_off" not in answer(cut, "stop").trace["details"]  # it chose to stop there
    assert answer(cut, None).text == cut  # a backend that does not say: left as it is
    whole = "The Lite plan of Object Storage is free [1]. It includes 25 GB of storage per month [1]"
    assert answer(whole, "length").text == whole  # cut right after a citation: the sentence is said
    alone = answer("The Lite plan of Object Storage is free of charge for the first", "length")
    assert "for the first …" in alone.text and alone.trace["details"]["cut_off"] == {"max_tokens": 160, "dropped": ""}


def test_a_sentence_that_repeats_an_earlier_one_of_the_answer_is_dropped(embedder):
    # a repetition loop of the local model on a dev turn of 2026-11-25: the same sentence three times
    loop = ("Systems use encryption software to protect personal information during transmission [1]. They also use "
            "encryption software to protect personal information during transmission [1]. They also use encryption "
            "software to protect personal information during transmission [1].")
    settings = AnswerSettings(decline=DeclineSettings(min_relevance=0.0))
    answer = AnswerGenerator(ScriptedLLM(answer=[loop]), settings, embedder).answer("How is my information protected?", [],
                                                                                     merged_results(PLANS))
    assert answer.text == "Systems use encryption software to protect personal information during transmission [1]."
    assert answer.trace["details"]["repeats_dropped"] == [
        "They also use encryption software to protect personal information during transmission [1]."] * 2
    distinct = ("The Lite plan of Object Storage includes 25 GB per month [1]. The Standard plan of Object Storage "
                "includes 50 GB per month [2]. Yes [1]. Yes [2].")
    kept = AnswerGenerator(ScriptedLLM(answer=[distinct]), settings, embedder).answer("What do the plans include?", [],
                                                                                       merged_results(PLANS))
    # other figures, or too short to judge: all four sentences stay (citations may be re-pointed, as ever)
    assert "repeats_dropped" not in kept.trace["details"] and len(answer_sentences(kept.text)) == 4 and "50 GB" in kept.text


RETENTION = ["Deleted files are kept for 30 days on the Basic plan and for 180 days on the Plus and Pro plans.",
             "All backups are encrypted with AES-256 before they leave the device."]
BEFORE = [Message("user", "How long are deleted files kept on the Basic plan?"), Message("agent", "30 days [1].")]


def test_a_follow_up_searched_as_asked_is_scored_with_the_question_before_it(embedder):
    """"And on Pro?" is close to no passage sentence on its own, and the gate declined it with the
    answer in front of the model; scored with the question before it, it is close to the answer."""
    llm = ScriptedLLM(answer=["Deleted files are kept for 180 days on the Pro plan [1]."])
    answer = AnswerGenerator(llm, AnswerSettings(), embedder).answer("And on Pro?", BEFORE, merged_results(RETENTION), "And on Pro?")
    scores = answer.trace["details"]["compression"]
    assert scores["relevance"] < 0.45 <= scores["relevance_in_context"]
    assert not answer.declined and "180 days" in answer.text
    # recorded, not acted on, where the setting is off
    off = AnswerGenerator(llm, AnswerSettings(decline=DeclineSettings(in_context=False)), embedder).answer("And on Pro?", BEFORE, merged_results(RETENTION), "And on Pro?")
    assert off.declined and off.trace["details"]["compression"]["relevance_in_context"] == scores["relevance_in_context"]
    assert "no passage sentence is close to the question alone or with the question before it" not in off.trace["fallback"]
    far = AnswerGenerator(llm, AnswerSettings(), embedder).answer("And in Mandarin?", BEFORE, merged_results(RETENTION[1:]), "And in Mandarin?")
    assert far.declined and "close to the question alone or with the question before it" in far.trace["fallback"]


def test_a_rewritten_or_first_question_is_scored_as_it_is(embedder):
    llm = ScriptedLLM(answer=["Deleted files are kept for 180 days on the Pro plan [1]."] * 2)
    generator = AnswerGenerator(llm, AnswerSettings(), embedder)
    rewritten = generator.answer("And on Pro?", BEFORE, merged_results(RETENTION), "How long are deleted files kept on the Pro plan?",
                                 standalone="How long are deleted files kept on the Pro plan?")
    first = generator.answer("How long are deleted files kept?", [], merged_results(RETENTION))
    for answer in (rewritten, first):
        assert "relevance_in_context" not in answer.trace["details"]["compression"]


SICK_LEAVE = ["Staff Handbook\n2. Annual leave\nFull-time staff get 25 days of annual leave a year.\n3. Sick leave\n"
              "If you are ill, tell your line manager before 10:00 on the first day. "
              "From the eighth day you need a fit note from a doctor.\n"]


def test_a_turn_answered_on_a_sentence_read_under_its_heading_names_the_heading(embedder):
    """The gate declined "Do I need a doctor's note for sick leave?" (its answer scored 0.43 alone); read
    under "3. Sick leave" it passes, and the trace says which heading made the difference."""
    llm = ScriptedLLM(answer=["From the eighth day you need a fit note from a doctor [1]."])
    answer = AnswerGenerator(llm, AnswerSettings(), embedder).answer("Do I need a doctor's note for sick leave?", [],
                                                                     merged_results(SICK_LEAVE))
    assert not answer.declined and answer.trace["details"]["compression"]["relevance_heading"] == "3. Sick leave"
    alone = AnswerSettings(compression=CompressionSettings(headings=False))
    declined = AnswerGenerator(llm, alone, embedder).answer("Do I need a doctor's note for sick leave?", [], merged_results(SICK_LEAVE))
    assert declined.declined and "relevance_heading" not in declined.trace["details"]["compression"]
