"""The OpenAI request's messages as convrag reads them (no server: the wire format alone)."""

from __future__ import annotations

from typing import Any

from convrag.service.openai_api import ChatCompletionRequest, to_messages, unread_question


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
