"""User-given histories: both message forms, and files that cannot be read named as such."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from convrag.data.messages import read_history
from convrag.errors import DataFormatError
from convrag.types import Message


def test_both_message_forms_and_the_wrapped_list_are_read(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    path.write_text('{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "Kayaks?"},'
                    ' {"speaker": "agent", "text": "Yes."}]}')
    assert read_history(path) == (Message("user", "Kayaks?"), Message("agent", "Yes."))
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())  # a byte-order mark, as Windows editors write one
    assert read_history(path) == (Message("user", "Kayaks?"), Message("agent", "Yes."))


def test_an_openai_message_list_is_read_as_a_client_sends_it(tmp_path: Path) -> None:
    """Content parts, a developer message, an assistant's tool call and its result: each was an error
    ("message 1 has no text/content string", "speaker/role 'developer'") in a list the docstring
    promised to read as is."""
    path = tmp_path / "h.json"
    path.write_text(json.dumps([
        {"role": "developer", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "Do kayaks"}, {"type": "image_url", "image_url": {"url": "data:,"}},
                                     {"type": "text", "text": "pay a fee?"}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                               "function": {"name": "fees", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "12"},
        {"role": "assistant", "content": [{"type": "text", "text": "Yes, 12 dollars."}]},
    ]))
    assert read_history(path) == (Message("user", "Do kayaks\npay a fee?"), Message("agent", "Yes, 12 dollars."))


@pytest.mark.parametrize(("make", "reason"), [
    (lambda p: None, "cannot read the history file: No such file or directory"),
    (lambda p: p.mkdir(), "cannot read the history file: Is a directory"),
    (lambda p: p.write_bytes(b"\xff\xfe[\x00]\x00"), r"not UTF-8 text \(byte 0xff on line 1\)"),
    (lambda p: p.write_text("user: hi"), "not valid JSON"),
    (lambda p: p.write_text('{"items": []}'), "expected a list of messages"),
    # a JSON escape of half a character: the model's tokenizer raised a UnicodeEncodeError on the history
    (lambda p: p.write_text('[{"role": "user", "content": "caf\\udce9"}]'), "message 0 is not UTF-8 text: byte 0xe9 at character 4"),
], ids=["missing", "folder", "utf-16", "not-json", "no-messages", "lone-surrogate"])
def test_a_history_that_cannot_be_read_is_an_error_naming_the_file(tmp_path: Path, make, reason: str) -> None:  # type: ignore[no-untyped-def]
    """A missing file or a folder gave a bare "[Errno 2] ..." without saying it was the history."""
    path = tmp_path / "history.json"
    make(path)
    with pytest.raises(DataFormatError, match=reason) as raised:
        read_history(path)
    assert str(raised.value).startswith(str(path))
