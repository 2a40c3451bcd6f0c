"""A document's title where its metadata gives none, or gives one no person wrote ("Microsoft Word -
Document1", "untitled"): its first line where it reads as a title, its first heading, else its
file's name made readable. A citation shows it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from .formats import Heading

#: what an authoring tool writes as the title of a document whose author gave none
NO_TITLE = re.compile(r"untitled(?: document)?|(?:new )?document ?\d*|no title|title|slide ?\d+|"
                      r"(?:powerpoint )?presentation ?\d*|\(?anonymous\)?|none|unknown(?: title)?|-+", re.IGNORECASE)
#: the program that made a PDF, in front of the file's name ("Microsoft Word - minutes.docx")
_TOOL_PREFIX = re.compile(r"^microsoft (?:office )?(?:word|powerpoint|excel) - ", re.IGNORECASE)
FILE_NAME = re.compile(r"[^\\/]+\.(?:docx?|docm|dotx?|rtf|odt|txt|pptx?|xlsx?|pdf|indd|tex|dvi|md|html?|pages)$", re.IGNORECASE)


def own_title(title: str) -> str:
    """A title from a file's metadata, or "" where the metadata holds what a tool wrote in place of
    one: "Microsoft Word - harbour_rules.docx" (Word's PDF printer) names the file it was made from,
    which becomes "harbour rules"; "Untitled", "Document1" or "Slide 1" name nothing, and the
    document is named by its own file name instead (:func:`~.documents.read_document`). Citations show the title,
    so "[1] Microsoft Word - Document1" told a reader nothing."""
    title = _TOOL_PREFIX.sub("", " ".join(title.split()))
    name = FILE_NAME.search(title)
    if name and (name.start() == 0 or title[name.start() - 1] in "\\/"):  # a file's name, or the end of its path
        title = " ".join(name_as_title(Path(name.group().replace("\\", "/")).stem).split())
    return "" if NO_TITLE.fullmatch(title) else title


def name_as_title(stem: str) -> str:
    """A file's name without its suffix, as the title of a document that has none: "harbour rules"."""
    return stem.replace("_", " ").replace("-", " ")


def made_name(name: str) -> bool:
    """Whether a file's name is one a program made, not a person: fewer than two words of three
    letters or more ("2403.12345", "scan0001", "doc 48213"; not "harbour rules")."""
    return len(re.findall(r"[^\W\d_]{3,}", name)) < 2


#: the longest first line taken as a PDF's title
_TITLE_LINE_CHARS, _TITLE_LINE_WORDS = 150, 20


def title_line(text: str) -> str:
    """A document's first line where it reads as a title, else "": at most 20 words and 150
    characters, a letter in it, no sentence's end punctuation after it. A PDF without a title in its
    metadata, saved under a name a program made, was cited as "[1] 2403.12345"; its first line is
    the title a reader sees on its first page. So is a plain text's, set apart by a blank line:
    "notes.txt" was cited as "[1] notes"."""
    first = text.split("\n", 1)[0].strip()
    fits = len(first) <= _TITLE_LINE_CHARS and len(first.split()) <= _TITLE_LINE_WORDS
    return first if fits and re.search(r"[^\W\d_]", first) and not first.endswith((".", ",", ";", ":", "!", "?")) else ""


def first_line_stands_apart(raw: str) -> bool:
    """Whether a plain text's first line stands apart, a blank line after it, as a title does (a
    first line that runs on into the next is a paragraph's start)."""
    lines = raw.strip().splitlines()
    return len(lines) > 2 and not lines[1].strip()


def first_heading(headings: Iterable[Heading]) -> str:
    """The text of a document's first top-level heading: its title where its metadata gives none, as
    a Word document's first Heading 1 is. pandoc writes no title into an EPUB or an RTF made from a
    Markdown file without front matter, and the book was named "manual" by its file name."""
    return next((heading.text for heading in headings if heading.level == 1), "")


def pdf_title(text: str, headings: Sequence[Heading], fallback: str) -> str:
    """The title of a PDF whose metadata gives none (LibreOffice writes none for a document without
    one), else "": its first bookmark where its first line begins it, the title its first page shows,
    whole where the page wraps it ("... Heat Pump: Owner's" / "Manual"; "... Heat Pump:" / "Owner's
    Manual", ending as no title does); else, where ``fallback`` (its file's name as a title) is a name a
    program made ("2403.12345"), its first line where it reads as a title."""
    first = text.split("\n", 1)[0].strip()
    whole = next((h.text for h in headings[:1] if len(first) > 3 and h.text.startswith(first)), "")
    if 0 < len(whole) <= _TITLE_LINE_CHARS:
        return whole
    return title_line(text) if made_name(fallback) else ""
