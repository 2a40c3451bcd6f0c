"""Bytes to text: a text file's encoding found (a byte-order mark, UTF-8, else charset_normalizer's
guess, refused where it reads as mojibake or binary), and a web page's decided in a browser's order
(:func:`page_text`)."""

from __future__ import annotations

import codecs
import re
import unicodedata
from pathlib import Path

from ..errors import DataFormatError

#: byte-order marks, longest first (UTF-32's little-endian mark starts with UTF-16's)
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


#: charset-normalizer's own default for "too messy to be this encoding"
_MAX_MESS = 0.2

#: the share of a text's characters that may be control codes (other than the layout ones),
#: private-use code points or non-characters: a stray form feed or escape is text, a fifth is not
_MAX_JUNK = 0.05
#: a character outside layout codes, printable ASCII, the rest of the Basic Multilingual Plane
#: short of surrogates and private use, and the supplementary planes short of private use
_JUNK = re.compile("[^\t\n\r\f\v\x1b\x20-\x7e\xa0-\ud7ff\uf900-\ufffd\U00010000-\U000effff]")
#: scripts that one language's text mixes (Japanese: kanji and both kanas), counted as one
_EAST_ASIAN = frozenset({"CJK", "HIRAGANA", "KATAKANA", "HALFWIDTH", "FULLWIDTH", "IDEOGRAPHIC", "KATAKANA-HIRAGANA"})


def _junk_share(text: str) -> float:
    """The share of ``text`` that is control codes, private-use code points or non-characters (a
    regular expression: a character-by-character look-up took 0.4 s per megabyte)."""
    return len(_JUNK.findall(text)) / len(text) if text else 0.0


def _scripts(text: str) -> set[str]:
    """The scripts of ``text``'s letters beyond ASCII, by the first word of their Unicode names
    (LATIN, CYRILLIC, HANGUL; Chinese and Japanese as one)."""
    names = {unicodedata.name(c, "?").split()[0] for c in text if ord(c) > 127 and unicodedata.category(c).startswith("L")}
    return {"CJK" if n in _EAST_ASIAN else n for n in names}


def _not_text(text: str, path: Path, encoding: str, marked: bool) -> DataFormatError | None:
    """Why ``text``, decoded as ``encoding``, is binary data after all; None where it reads as text.
    Control codes (a binary file of bytes under 0x80 is valid UTF-8) tell at any length. UTF-16 read
    without a mark is held to one script beside Latin: a few bytes of binary data with a NUL among
    them decode to a handful of characters from several (Han, Hangul, Limbu) that no text mixes, or
    to a run of characters without a space or line break (UTF-16 text's NUL bytes are mostly the high
    bytes of those: an unmarked file of Chinese on one line with none of them is refused too)."""
    if (junk := _junk_share(text)) > _MAX_JUNK:
        return DataFormatError(path, f"not text: read as {encoding} it is {junk:.0%} control codes")
    if marked or not encoding.startswith(("utf_16", "utf_32", "utf-16", "utf-32")):
        return None
    if len((scripts := _scripts(text)) - {"LATIN"}) > 1:
        return DataFormatError(path, f"not text (binary data: it holds NUL bytes, and read as {encoding} it mixes "
                                     f"{', '.join(sorted(scripts))} letters)")
    if not any(c in " \t\n" for c in text):
        return DataFormatError(path, f"not text (binary data: it holds NUL bytes, and read as {encoding} it has no space "
                                     "or line break; text saved as UTF-16 without a byte-order mark has them, and "
                                     "that is where its NUL bytes come from)")
    return None


def decode_text(raw: bytes, path: Path, whole: bool = True) -> str:
    """The text of a file: UTF-8, or what its byte-order mark says; otherwise the encoding
    charset-normalizer finds, or Windows-1252 (the web's reading of unlabelled Western text) where
    that reads at least as cleanly by charset-normalizer's own measure. Bytes that
    are not text (NUL bytes without a mark, or no encoding that reads them) are refused with a
    :class:`DataFormatError`, so that a binary file given a .txt name is not indexed as gibberish.

    ``whole=False`` reads a file's first bytes only (an upload's check): a UTF-8, UTF-16 or UTF-32
    character that they cut at their end is left out, not taken for bytes that are not text."""
    def decode(encoding: str) -> str:
        return codecs.getincrementaldecoder(encoding)().decode(raw, final=whole)

    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            try:
                text = decode(encoding)
            except UnicodeDecodeError as exc:
                raise DataFormatError(path, f"not text: it starts with a {encoding} mark but does not decode ({exc.reason})") from None
            from charset_normalizer.md import mess_ratio

            # binary data that happens to start with a mark decodes, as UTF-16, to code points from
            # every script at once (CJK, Hangul, private use, controls); text in any one script does not
            if mess_ratio(text, 1.0) > _MAX_MESS:
                raise DataFormatError(path, f"not text: it starts with a {encoding} mark but reads as a jumble of scripts")
            return _checked(text, path, encoding, marked=True)
    if b"\x00" not in raw:  # valid UTF-8 may hold NUL bytes, but only UTF-16/32 text does
        try:
            return _checked(decode("utf-8"), path, "utf-8")
        except UnicodeDecodeError:
            pass
    from charset_normalizer import from_bytes  # only for what is not UTF-8
    from charset_normalizer.md import mess_ratio

    best = from_bytes(raw).best()
    if b"\x00" in raw:
        if best is not None and best.encoding.startswith(("utf_16", "utf_32")):
            return _checked(str(best), path, best.encoding)
        raise DataFormatError(path, "not text (binary data: it holds NUL bytes)")
    if best is None:
        raise DataFormatError(path, "not text (binary data, or an encoding that could not be recognised)")
    try:
        western = raw.decode("cp1252")
    except UnicodeDecodeError:
        return _checked(str(best), path, best.encoding)
    # on short files the detector mistakes Latin-1 for Big5 and cp1252 for cp1250; its own mess
    # measure tells the two readings apart, and a tie goes to the Western one
    if mess_ratio(western, 1.0) <= mess_ratio(str(best), 1.0):
        return _checked(western, path, "cp1252")
    return _checked(str(best), path, best.encoding)


#: the charset an HTML page declares in its first bytes, as a browser's prescan finds it:
#: ``<meta charset="windows-1250">`` or ``<meta http-equiv="Content-Type" content="text/html; charset=...">``
_META_CHARSET = re.compile(rb"""<meta\b[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE)
#: the labels the web reads as Windows-1252 whatever they name (the WHATWG Encoding standard)
_WESTERN_LABELS = frozenset({"iso-8859-1", "iso8859-1", "latin1", "latin-1", "us-ascii", "ascii", "l1"})


def page_text(data: bytes, path: Path, charset: str = "") -> str:
    """A web page's text: UTF-8 or what its byte-order mark says where it is so, else the charset its
    server names (``charset``, from its Content-Type) or its ``<meta>`` declares in its first 1,024
    bytes (a browser's order), else :func:`decode_text`'s guess. A short page in a Central European
    code page read as Western text ("\u00a3odzie p\u00b3ac\u00b9"), though it named its charset; a UTF-8 page
    that names another (a server's old default, an editor's stale ``<meta>``) is UTF-8 all the same."""
    declared = _META_CHARSET.search(data[:1024])
    label = (charset or (declared.group(1).decode("ascii") if declared else "")).lower()
    if not label or data.startswith(tuple(bom for bom, _ in _BOMS)):
        return decode_text(data, path)
    try:
        data.decode("utf-8")
        return decode_text(data, path)
    except UnicodeDecodeError:
        pass
    try:
        return _checked(data.decode("cp1252" if label in _WESTERN_LABELS else label), path, label)
    except (LookupError, UnicodeDecodeError):  # a charset Python does not know, or one the bytes are not in
        return decode_text(data, path)


def _checked(text: str, path: Path, encoding: str, marked: bool = False) -> str:
    """``text`` where it reads as text (:func:`_not_text`); the reason raised where it does not."""
    reason = _not_text(text, path, encoding, marked)
    if reason is not None:
        raise reason
    return text
