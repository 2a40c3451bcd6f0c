"""Headings found in a text that marks none: its numbered section lines.

A Markdown, HTML or Word document marks its headings, and a PDF may name them in its bookmarks;
the chunker titles each passage by the sections it begins in. A scanned PDF read by OCR, a PDF
without bookmarks and a plain text file mark nothing, though their sections are often numbered
lines of their own ("1. Safety", "3.2 Filters"), so their passages were titled by the document
alone: the fault codes' second half did not say "fault codes".

A line is taken for a heading only where it is short, does not end as a sentence does, and
continues one numbering: each is the next at its level ("4" after "3" or "3.2"), or opens a
level below ("3.1" after "3"). The longest such run from a "1" is kept, and only with
:data:`MIN_HEADINGS` in it. A numbered list's steps end as sentences do ("1. Open the panel."), or
stand on lines next to each other ("1. Power cable" "2. Fuse"), as a table of contents' entries do;
neither is taken.
"""

from __future__ import annotations

import re
from typing import NamedTuple

#: a numbered line: its number ("3", "3.2", "3.2.1"), an optional dot, then text that begins with a letter
_NUMBERED = re.compile(r"(?P<number>\d{1,2}(?:\.\d{1,2}){0,3})\.?[ \t]+(?P<text>[^\W\d_].*)")
#: the longest line taken for a heading, in words and in characters
MAX_WORDS = 12
MAX_CHARS = 100
#: the fewest numbered headings a document must hold for them to be taken as its sections
MIN_HEADINGS = 3
#: the most lines numbered "1" tried as the numbering's start: each try reads the candidates after it, and
#: a crafted text of 100,000 such lines would take hours to try them all
MAX_STARTS = 50
#: how a sentence, or a list item that is one, ends; a heading does not end so
_ENDS = (".", ",", ";", "!", "?")


class NumberedHeading(NamedTuple):
    """A numbered line taken for a heading: its line as the text reads it, and its level (1 for "3", 2 for "3.2")."""

    text: str
    level: int


def _candidates(text: str) -> list[tuple[tuple[int, ...], str]]:
    """The lines that could be numbered headings, in order, each with its number's parts. A numbered
    line next to another at the same level is a list's item or a table of contents' entry, not a
    heading: sections hold text between their headings."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    numbers = [_number(said) for said in lines]
    depths = [len(n) if n else 0 for n in numbers]
    return [(number, said) for i, (number, said) in enumerate(zip(numbers, lines))
            if number is not None and depths[i] not in (depths[i - 1] if i else 0, depths[i + 1] if i + 1 < len(depths) else 0)]


def _number(line: str) -> tuple[int, ...] | None:
    """The parts of a line's section number where the line could be a heading: short, numbered, not
    ending as a sentence does."""
    m = _NUMBERED.fullmatch(line)
    if m is None or len(line) > MAX_CHARS or len(line.split()) > MAX_WORDS or line.endswith(_ENDS):
        return None
    return tuple(int(part) for part in m["number"].split("."))


def _follows(number: tuple[int, ...], last: tuple[int, ...]) -> bool:
    """Whether ``number`` continues a numbering whose last heading was ``last``: the next at one of its
    levels ("4" or "3.3" after "3.2"), or the first below it ("3.2.1" after "3.2")."""
    if number == (*last, 1):
        return True
    depth = len(number)
    return depth <= len(last) and number[:-1] == last[:depth - 1] and number[-1] == last[depth - 1] + 1


def numbered_headings(text: str) -> tuple[NumberedHeading, ...]:
    """The numbered section lines of ``text`` (see the module's note), or none where it has fewer
    than :data:`MIN_HEADINGS` that continue one numbering."""
    found = _candidates(text)
    best: list[tuple[tuple[int, ...], str]] = []
    starts = [i for i, (number, _) in enumerate(found) if number == (1,)][:MAX_STARTS]
    for i in starts:
        if len(found) - i <= len(best):
            break
        run = [found[i]]
        for candidate in found[i + 1:]:
            if _follows(candidate[0], run[-1][0]):
                run.append(candidate)
        if len(run) > len(best):
            best = run
    if len(best) < MIN_HEADINGS:
        return ()
    return tuple(NumberedHeading(said, len(number)) for number, said in best)
