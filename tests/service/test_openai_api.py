"""The OpenAI request's messages as convrag reads them (no server: the wire format alone)."""

from __future__ import annotations

from typing import Any

from convrag.service.openai_api import ChatCompletionRequest, added_text, sources_block, to_messages, unread_question


def request(*messages: dict[str, Any]) -> ChatCompletionRequest:
    return ChatCompletionRequest(model="collection:gov", messages=list(messages))


def test_text_parts_are_read_one_per_line() -> None:
    parts = [{"type": "text", "text": "How much does renewal"}, {"type": "image_url", "image_url": {"url": "data:,"}},
             {"type": "text", "text": "by mail cost?"}]
    (question,) = to_messages(request({"role": "user", "content": parts}))
    assert question.text == "How much does renewal\nby mail cost?"


def test_a_question_of_parts_without_text_is_named_for_what_it_holds() -> None:
    image = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}
    assert unread_question(request(image)) == ("the question has no text: convrag reads a message's text parts, "
                                               "and this one holds image_url")
    assert unread_question(request({"role": "user", "content": [{"type": "text", "text": "Fees?"}]})) is None
    assert unread_question(request({"role": "user", "content": "  "})) is None  # check_turn's "the question is empty"


FEES = {"number": 2, "collection": "gov", "passage_id": "fees-0-80", "document_id": "fees", "title": "Fee waivers", "url": ""}
RENEWAL = {"number": 1, "collection": "gov", "passage_id": "passports-0-90", "document_id": "passports", "title": "",
           "url": "https://example.gov/passports"}


def test_sources_are_listed_by_number_one_a_line() -> None:
    assert sources_block([FEES, RENEWAL, FEES]) == ("\n\nSources:\n- [1] passports (gov) https://example.gov/passports\n"
                                                    "- [2] Fee waivers (gov)")
    assert sources_block([]) == ""


def test_the_answer_as_checked_comes_first_only_where_it_differs_from_what_was_streamed() -> None:
    assert added_text("Renewal costs 130 dollars [1].", "Renewal costs 130 dollars [1].", [RENEWAL]) == sources_block([RENEWAL])
    assert added_text("Renewal costs 130 dollars.", "Renewal costs 130 dollars [1].", [RENEWAL]) == (
        "\n\nAs checked against the passages: Renewal costs 130 dollars [1]." + sources_block([RENEWAL]))


def test_an_answer_sent_back_with_what_was_added_is_read_as_the_answer_alone() -> None:
    def history(shown: str) -> str:
        asked = {"role": "user", "content": "Fees?"}
        return to_messages(request(asked, {"role": "assistant", "content": shown}, {"role": "user", "content": "And it?"}))[1].text

    cited = "Renewal costs 130 dollars [1]."
    assert history(cited + sources_block([RENEWAL, FEES])) == cited
    assert history("Renewal costs 130 dollars." + added_text("Renewal costs 130 dollars.", cited, [RENEWAL])) == cited
    declined = "I do not have specific information about that in the available sources."
    assert history("A guess [1]." + added_text("A guess [1].", declined, [])) == declined
    # an answer that merely mentions sources is read as it is
    assert history("Sources:\n- [1] is the passport page.") == "Sources:\n- [1] is the passport page."
