from convrag.generate.answer import DECLINE, AnswerGenerator, is_decline, parse_citations
from convrag.llm.base import LLMError
from convrag.merge.base import MergedResult, SourcedHit
from convrag.types import Message
from tests.scripted import ScriptedLLM


def results(n: int, conflict: bool = False) -> list[MergedResult]:
    return [
        MergedResult(SourcedHit(f"c{i % 2}", f"p{i}", f"d{i}", f"text {i}", f"T{i}", f"https://x/{i}", 1.0, i + 1), 0.1, 0.1, "r",
                     conflicts_with=(1 - i,) if conflict and i < 2 else ())
        for i in range(n)
    ]


def test_citations_map_to_merged_results():
    cited, invalid = parse_citations("Yes [2]. Also [1][2] and [9].", results(3))
    assert [(c.number, c.collection, c.passage_id, c.url) for c in cited] == [(2, "c1", "p1", "https://x/1"), (1, "c0", "p0", "https://x/0")]
    assert invalid == [9]


def test_decline_detection():
    assert is_decline(DECLINE)
    assert is_decline("The passages do not contain information about fees.")
    assert not is_decline("The fee is 130 dollars [1].")


def test_generator_answers_with_citations_and_flags_conflicts():
    llm = ScriptedLLM(answer=["The Lite plan is free [1], though sources disagree on storage [1][2]."])
    answer = AnswerGenerator(llm).answer("Is it free?", [Message("user", "Tell me about Lite"), Message("agent", "It is a plan.")], results(2, True))
    assert [c.number for c in answer.citations] == [1, 2] and not answer.declined
    prompt = llm.last_user_prompt("answer")
    assert "[1] (conflicting) (c0; T0) text 0" in prompt and "User: Tell me about Lite" in prompt
    assert answer.trace["llm_call"]["prompt_tokens"] > 0


def test_no_passages_declines_without_a_call_and_errors_fall_back():
    llm = ScriptedLLM()
    answer = AnswerGenerator(llm).answer("q?", [], [])
    assert answer.declined and answer.text == DECLINE and llm.requests == []
    failed = AnswerGenerator(ScriptedLLM(answer=[LLMError("down")])).answer("q?", [], results(1))
    assert failed.trace["fallback"] == "llm_error" and "failed" in failed.text
    empty = AnswerGenerator(ScriptedLLM(answer=["   "])).answer("q?", [], results(1))
    assert empty.declined and empty.trace["fallback"] == "empty answer"
    uncited = AnswerGenerator(ScriptedLLM(answer=["It is free."])).answer("q?", [], results(1))
    assert uncited.trace["warning"] == "answer cites no passage"


def test_uncited_sentences_copied_from_a_passage_get_inferred_citations():
    from convrag.generate.answer import infer_citations
    from convrag.merge.base import MergedResult, SourcedHit

    passages = [
        MergedResult(SourcedHit("c", "p1", "p1", "Selling stock has tax effects when you realize a gain or a loss."), 0.1, 0.1, "r"),
        MergedResult(SourcedHit("c", "p2", "p2", "Preferred stocks pay fixed dividends to their holders."), 0.1, 0.1, "r"),
    ]
    text, added = infer_citations("Selling stock has tax effects when you realize a gain. The weather is nice today.", passages)
    assert text == "Selling stock has tax effects when you realize a gain [1]. The weather is nice today." and added == [1]
    llm = ScriptedLLM(answer=["Preferred stocks pay fixed dividends to holders."])
    answer = AnswerGenerator(llm).answer("q?", [], passages)
    assert [(c.number, c.inferred) for c in answer.citations] == [(2, True)] and answer.trace["inferred_citations"] == [2]


def test_streamed_answer_ends_with_the_same_answer_as_a_plain_call():
    from convrag.generate.answer import Answer
    from tests.scripted import StreamingScriptedLLM

    text = "The Lite plan is free [1]."
    items = list(AnswerGenerator(StreamingScriptedLLM(answer=[text])).stream("Is it free?", [], results(2)))
    pieces, final = items[:-1], items[-1]
    assert "".join(pieces) == text and len(pieces) == 6 and isinstance(final, Answer)
    plain = AnswerGenerator(ScriptedLLM(answer=[text])).answer("Is it free?", [], results(2))
    assert (final.text, final.citations, final.declined) == (plain.text, plain.citations, plain.declined)
    declined = list(AnswerGenerator(StreamingScriptedLLM()).stream("q?", [], []))
    assert declined[0] == DECLINE and declined[-1].declined
    failed = list(AnswerGenerator(StreamingScriptedLLM(answer=[LLMError("down")])).stream("q?", [], results(1)))
    assert "failed" in failed[0] and failed[-1].trace["fallback"] == "llm_error"
