"""How long a question may be, checked in one place by the library and every command.

Commands check before they load anything slow (an index, the 1.1 GB model), so a pasted file is
refused in a second, not after the model loads. The service has its own, configurable limits.
"""

from __future__ import annotations

import re

from .errors import ConvragError

MAX_QUESTION_CHARS = 20_000

#: half of a character: what Python makes of a byte that is not UTF-8 in a command line or piped
#: text (U+DC80-U+DCFF stand for bytes 0x80-0xFF), which no tokenizer takes
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def check_question(text: str, what: str = "question") -> str:
    """The text unchanged, or an error naming what is wrong with it (``what`` names it: question, query)."""
    if not text.strip():
        raise ConvragError(f"the {what} is empty")
    if len(text) > MAX_QUESTION_CHARS:
        raise ConvragError(f"the {what} is {len(text):,} characters; the limit is {MAX_QUESTION_CHARS:,}")
    if (reason := not_utf8_text(text)) is not None:  # was a TypeError traceback from the tokenizer
        raise ConvragError(f"the {what} is {reason}; set the terminal, or the file piped in, to UTF-8")
    return text


def not_utf8_text(text: str) -> str | None:
    """Why ``text`` cannot be written as UTF-8 (a lone surrogate, named by the byte it stands for),
    or None: no tokenizer takes such text, and the language model's raised a UnicodeEncodeError."""
    bad = _LONE_SURROGATE.search(text)
    if bad is None:
        return None
    code = ord(bad.group())
    what_it_is = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"half a character (U+{code:04X})"
    return f"not UTF-8 text: {what_it_is} at character {bad.start() + 1}"
