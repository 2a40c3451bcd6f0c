"""Text as it was typed, not as it was set: a typesetter's ligatures and soft hyphens made letters
again (:func:`typeset_letters`), and lines a page's width broke joined into their paragraphs
(:func:`unwrap_lines`), so that a passage reads, and matches a query, as its writer wrote it."""

from __future__ import annotations

import re

from .hyphenation import BREAK, mend

#: letters a typesetter joined into one character, and characters that print nothing: "ﬁle" and
#: "oﬃce" (a PDF's ligatures) are no words "file" and "office" to BM25, the embedding model's
#: tokenizer or the citation checks, and a soft hyphen or a zero-width space splits a word in two
_TYPESET = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st",
                          "\ufb06": "st", "\xad": None, "\u200b": None, "\u2060": None, "\ufeff": None})

_TYPESET_FOUND = re.compile("[" + "".join(map(chr, _TYPESET)) + "]")


def typeset_letters(text: str) -> str:
    """``text`` with ligatures as their letters and invisible characters gone; a soft hyphen that
    ends a line (a hyphenation point) joins the line to the next."""
    return text.replace("\xad\n", "").translate(_TYPESET) if _TYPESET_FOUND.search(text) else text


#: a line a sentence goes on from ends in a letter, a digit, a comma, a semicolon, a colon, a closing
#: bracket or a percent sign, or in a word hyphenated at its end ("renew-" / "al", "self-" / "service":
#: joined, the hyphen then kept or not by :mod:`.hyphenation`). Lower-case letters,
#: commas and semicolons alone left LibreOffice's PDF of a manual broken at "a 25 A type C" /
#: "breaker.", "for 30" / "minutes." and "a legionella cycle:" / "the immersion heater" ...
_GOES_ON = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,;:)%")
#: ... and the next line goes on with a lower-case letter, a number that is no list item's ("up to"
#: / "10 metres", not "2. Pay at the desk") or a bracket that is no list item's ("(ASN.1, as", not "(b) ")
_GOES_ON_WITH = re.compile(r"(?:[a-z]|\d(?!\d*[.)](?:\s|$))|\((?!\w{1,3}\)))")
#: the shortest line a sentence is taken to wrap from: a wrapped line fills its column (a PDF's
#: column, a text file's 72 characters); a list of short lower-case items ("apples" / "pears") stays
WRAPPED_CHARS = 30


def unwrap_lines(text: str) -> str:
    """``text`` with the line breaks inside its sentences made spaces. A PDF's text is its visual
    lines, and the sentence splitter (pysbd) ends a sentence at every line break: the answer's
    compression, which keeps a passage's best sentences, then kept half-sentences ("costs 130
    dollars for adults and"), and the citation checks judged lines, not sentences. A heading, a
    list item or a sentence's end keeps its line. A word hyphenated over the line end is made whole
    again where it is one word, not a compound (:func:`.hyphenation.mend`). Linear in the text: a
    joined line is put together once, from its pieces."""
    pieces: list[str] = []  # the text so far: pieces, with "\n" between its lines
    before = ""  # the line before, as written
    for line in text.split("\n"):
        said = before.rstrip()
        # an indented line (code in a text file, a paragraph's first line) keeps its line break
        if pieces and len(said) >= WRAPPED_CHARS and not before[:1].isspace() and _GOES_ON_WITH.match(line):
            end = said[-2:]
            hyphenated = (end[-1:] == "-" and end[:1].islower() and end[:1].isascii()) or end[-1:] == BREAK
            if hyphenated or end[-1:] in _GOES_ON:
                pieces[-1] = pieces[-1].rstrip()
                if hyphenated:
                    pieces[-1] = pieces[-1][:-1] + BREAK
                pieces.append(line if hyphenated else f" {line}")
                before = line
                continue
        if pieces:
            pieces.append("\n")
        pieces.append(line)
        before = line
    return mend("".join(pieces))
