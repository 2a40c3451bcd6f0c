"""Text that can be written as UTF-8: Python strings can hold lone surrogates, which no file,
tokenizer or model takes. They come from bytes that are not UTF-8 (a command line typed in a Latin-1
terminal, a piped cp1252 file), from JSON escapes of half a character, and from PDFs' ToUnicode maps.
A question is refused with the byte named (:func:`not_utf8_text`); a document's text is mended
(:func:`whole_characters`), since the rest of it reads.
"""

from __future__ import annotations

import re

#: half of a character: U+DC80-U+DCFF stand for the bytes 0x80-0xFF Python could not decode
_LONE_SURROGATE = re.compile("[\\ud800-\\udfff]")


def not_utf8_text(text: str) -> str | None:
    """Why ``text`` cannot be written as UTF-8 (a lone surrogate, named by the byte it stands for),
    or None: a tokenizer refused such text with a TypeError, the language model's with a
    UnicodeEncodeError."""
    bad = _LONE_SURROGATE.search(text)
    if bad is None:
        return None
    code = ord(bad.group())
    what_it_is = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"half a character (U+{code:04X})"
    return f"not UTF-8 text: {what_it_is} at character {bad.start() + 1}"


def whole_characters(text: str) -> str:
    """``text`` with each surrogate pair joined into its character and a lone surrogate made U+FFFD:
    a PDF's ToUnicode map can give half a UTF-16 pair, and so can a JSON escape (``"\\ud800"``) in a
    corpus line; either ended `convrag index` with a UnicodeEncodeError. ASCII text (most of a corpus)
    is returned as it is, without the two copies: they made reading MT-RAG's corpora 34 % slower."""
    if text.isascii():
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def readable_name(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 (a Latin-1 name, which Python reads as lone
    surrogates) written as ``\\xe9``. Kept in a passage id, such a name could not be encoded, and
    one file named so ended `convrag index` of its folder with a UnicodeEncodeError."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
