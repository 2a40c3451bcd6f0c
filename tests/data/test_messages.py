"""User-given histories: both message forms, and files that cannot be read named as such."""

from __future__ import annotations

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
