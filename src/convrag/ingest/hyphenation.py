"""Words a typesetter broke over a line end ("mag-" / "netic"), made whole again; compounds kept.

Justified text is hyphenated at its line ends: LaTeX, groff and publishing tools break words to
even the lines. Kept as the page shows it, "mag-netic" is no word "magnetic" to BM25, to the
embedding model's tokenizer or to the citation checks, so a search for the magnetic filter missed
the one sentence that names it. A hyphen at a line end is ambiguous, though: it may be a
hyphenation or a compound's own hyphen that fell there ("self-" / "service"). Each is decided, in
this order, by

1. the document itself: the word written whole elsewhere in it is joined; written with its
   hyphen inside a line elsewhere, the hyphen is kept;
2. everyday English (``wordfreq``'s Zipf scale): a common word once joined ("magnetic" 4.2,
   "representatives" 4.5) is joined. "followup" (2.9) and "longterm" (2.8), misspelt compounds,
   stay under :data:`COMMON_ZIPF`;
3. a piece that is no English word ("legio" / "nella", "uninter" / "ruptible"; and German's
   "Wärme" / "pumpe", a language that writes its compounds whole), or an ending no compound ends in
   ("moor" / "ing": wordfreq counts "ing" a word), is joined;
4. otherwise both pieces are words and the whole is rare ("self" / "service", "heat" / "pump"):
   a compound, whose hyphen is kept.

A hyphen before a capital or a digit ("Wi-" / "Fi", "COVID-" / "19") is always kept.
"""

from __future__ import annotations

import re
from collections import Counter

from ..text import zipf

#: a hyphen at a line end, the line joined to the next: PDFium's own mark for one (its text gives
#: U+FFFE and runs the lines together), and :func:`~convrag.ingest.documents.unwrap_lines` marks
#: the hyphens it joins over alike
BREAK = "\ufffe"

#: a word this common in English (Zipf scale) is a word broken by hyphenation, not a compound
COMMON_ZIPF = 3.0
#: a piece of a broken word under this is no English word on its own ("netic", "legio")
WORD_ZIPF = 2.5

#: endings a typesetter breaks off a word ("moor-ing", "install-ation") that wordfreq counts as words of their
#: own ("ing" 3.95, "ed" 4.8: text cut at odd places): no compound ends in one, so a word broken before it is one word
ENDINGS = frozenset({"ing", "ings", "ed", "er", "ers", "es", "est", "ly", "ment", "ments", "ness", "tion", "tions", "sion",
                      "sions", "ation", "ations", "ity", "ities", "ous", "ive", "ism", "ist", "ists", "ful", "less", "ible"})

_BROKEN = re.compile(rf"(\w*)({BREAK})(\w*)")
_HYPHENATED = re.compile(r"\w+-\w+")
_WORD = re.compile(r"\w+")


def joins(head: str, tail: str, whole: Counter[str], hyphenated: Counter[str]) -> bool:
    """Whether ``head`` and ``tail``, a word's pieces on either side of a line-end hyphen, are one
    word (True) or a compound that keeps its hyphen (False). ``whole`` and ``hyphenated`` count the
    document's own words and hyphenated words (lower case), which decide first."""
    if not (head[-1:].isalpha() and tail[:1].isalpha() and tail[:1].islower()):
        return False
    word, compound = f"{head}{tail}".lower(), f"{head}-{tail}".lower()
    if whole[word] or hyphenated[compound]:
        return whole[word] >= hyphenated[compound]
    if zipf(word) >= COMMON_ZIPF or tail.lower() in ENDINGS:
        return True
    return zipf(head) < WORD_ZIPF or zipf(tail) < WORD_ZIPF


def mend(text: str) -> str:
    """``text`` with each :data:`BREAK` made nothing (a hyphenated word joined) or a hyphen (a
    compound, or a hyphen before a capital or a digit). The document's words are counted only
    where a text has breaks, and English word frequencies loaded only then."""
    if BREAK not in text:
        return text
    plain = _BROKEN.sub(" ", text)  # the document's words away from its breaks
    whole = Counter(word.lower() for word in _WORD.findall(plain.replace("-", " ")))
    hyphenated = Counter(word.lower() for word in _HYPHENATED.findall(plain))

    def one(m: re.Match[str]) -> str:
        head, tail = m[1], m[3]
        if not head:  # a mark that follows no word ends nothing: dropped
            return tail
        return f"{head}{tail}" if joins(head, tail, whole, hyphenated) else f"{head}-{tail}"

    return _BROKEN.sub(one, text)
