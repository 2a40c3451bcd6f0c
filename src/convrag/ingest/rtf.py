"""RTF documents (striprtf, with the paragraphs, headings and header rows striprtf does not keep
marked beforehand), and the Rich Text bodies of Outlook's mail."""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from ..characters import whole_characters
from ..errors import DataFormatError
from .formats import Heading
from .tables import table_lines
from .titles import first_heading, own_title
from .typesetting import typeset_letters
from .word import word_level

_RTF_CODE_PAGE = re.compile(rb"\\ansicpg(\d+)")
_RTF_TITLE = re.compile(r"\{\\title\s+([^{}]*)\}")
#: the control words that say where a paragraph, a table cell and a table row begin and end
_RTF_PARAGRAPH_WORDS = re.compile(r"(?<!\\)\\(pard|intbl|par|cell|row)(?![a-zA-Z])(?:-?\d+)? ?")
#: a heading paragraph's outline level (0 to 8; 9 is body text), as Word, LibreOffice and pandoc write it
_RTF_OUTLINE_LEVEL = re.compile(r"(?<!\\)\\outlinelevel([0-8])(?![0-9]) ?")
#: the letter put before a heading's text to find its line after striprtf: U+E000 plus its level
#: (0 a title, 1 a first-level heading: ``\\outlinelevel0``)
_RTF_HEADING_MARK = 0xE000
#: a paragraph style's number, in the stylesheet and where a paragraph takes it (not ``\\cs``, ``\\ts``)
_RTF_STYLE = re.compile(r"(?<!\\)\\s(\d+)(?![0-9])")
#: a control word, or a group, inside a stylesheet entry: what is left is the style's name
_RTF_STYLE_WORDS = re.compile(r"\\[a-zA-Z]+-?\d* ?|\\\*|\{[^{}]*\}")
#: a table row that repeats atop each page (Word's "Repeat as header row"): the row of the column headings
_RTF_HEADER_ROW = re.compile(r"(?<!\\)\\trhdr(?![a-zA-Z0-9]) ?")
#: the letter put into a header row's text to find it after striprtf
_RTF_HEADER_MARK = 0xE010


def _rtf_cell_paragraphs(source: str) -> str:
    """The RTF with each paragraph end inside a table cell taken out (the cell's last) or made a
    space (between two paragraphs of one cell). pandoc, and Word for a cell of several paragraphs,
    end a cell's paragraph with \\par before its \\cell, which striprtf reads as a line end: a
    row came out as "Property", "|Value", each cell a line. A paragraph is in a table from its
    \\intbl to the next \\pard."""
    words = list(_RTF_PARAGRAPH_WORDS.finditer(source))
    ends: list[str | None] = [None] * len(words)  # the next \\par, \\cell or \\row after each word
    following: str | None = None
    for i in range(len(words) - 1, -1, -1):
        ends[i] = following
        if words[i].group(1) in ("par", "cell", "row"):
            following = words[i].group(1)
    pieces: list[str] = []
    start, in_table = 0, False
    for word, end in zip(words, ends):
        name = word.group(1)
        if name == "pard":
            in_table = False
        elif name == "intbl":
            in_table = True
        elif name == "par" and in_table:
            pieces += [source[start:word.start()], "" if end == "cell" else " "]
            start = word.end()
    return "".join(pieces) + source[start:]


def _rtf_heading_styles(source: str) -> dict[str, int]:
    """The paragraph styles of an RTF's stylesheet that mark headings, by number, with their level:
    a style with an outline level (Word writes ``\\outlinelevel0`` there and on each paragraph), or
    named as Word names its heading styles ("heading 2", "Title"). LibreOffice writes only the name,
    and its paragraphs only the style's number (``\\s2``), so its headings were not read."""
    start = source.find("{\\stylesheet", 0, 65536)
    if start < 0:
        return {}
    depth, end = 0, start
    for end in range(start, min(len(source), start + 1_000_000)):  # the stylesheet group, braces balanced
        depth += {"{": 1, "}": -1}.get(source[end], 0)
        if depth == 0:
            break
    styles: dict[str, int] = {}
    for entry in re.finditer(r"\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}", source[start + 1:end]):
        number = _RTF_STYLE.search(entry.group(1))
        if number is None:
            continue
        outline = _RTF_OUTLINE_LEVEL.search(entry.group(1))
        level = int(outline.group(1)) + 1 if outline else word_level(_RTF_STYLE_WORDS.sub("", entry.group(1)).strip(" ;"))
        if level is not None:
            styles[number.group(1)] = level
    return styles


def _rtf_marked(source: str) -> str:
    """The RTF with a private letter put before the text of each heading paragraph (U+E000 plus its
    level: :func:`_rtf_heading_styles`, or an outline level on the paragraph) and into each header
    row (``\\trhdr``), each in a group of its own so that the document's \\uc setting is kept: both
    are known only in the markup, and striprtf keeps only the text."""
    def mark(letter: int) -> str:
        return f"{{\\uc1\\u{letter - 0x10000}?}}"

    styles = _rtf_heading_styles(source)
    source = _RTF_HEADER_ROW.sub(lambda m: f"\\trhdr {mark(_RTF_HEADER_MARK)}", source)
    if styles:
        source = _RTF_STYLE.sub(lambda m: m.group(0) + (f" {mark(_RTF_HEADING_MARK + styles[m.group(1)])}"
                                                        if m.group(1) in styles else ""), source)
    return _RTF_OUTLINE_LEVEL.sub(lambda m: f"\\outlinelevel{m.group(1)} {mark(_RTF_HEADING_MARK + int(m.group(1)) + 1)}", source)


def rtf_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an RTF document (striprtf): a line per paragraph, a table's row a line of its
    cells joined by " | " as a Word table's are; pictures and footnotes are left out. Its letters
    are the code page's it declares (``\\ansicpg``, Windows-1252 by default) and its ``\\u``
    escapes; its title is its own (``{\\info{\\title ...}}``), else its first top-level heading.
    Its headings are the paragraphs with an outline level (``\\outlinelevel0`` is a first-level
    heading) or a heading style (:func:`_rtf_heading_styles`); a table's first row names the columns where it is a header row (``\\trhdr``), as a
    Word table's does."""
    return rtf_text(path.read_bytes(), path)


def rtf_text(raw: bytes, path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """:func:`rtf_to_text` of the RTF ``raw`` (a file's, or an Outlook message's body); ``path`` names it in errors."""
    from striprtf import striprtf

    if not raw.lstrip().startswith(b"{\\rtf"):
        raise DataFormatError(path, "not an RTF document (it does not start with {\\rtf)")
    page = _RTF_CODE_PAGE.search(raw[:4096])
    encoding = f"cp{page.group(1).decode()}" if page else "cp1252"
    try:
        codecs.lookup(encoding)
    except LookupError:
        encoding = "cp1252"
    source = raw.decode("latin-1")  # RTF itself is 7-bit; its escapes carry the other letters

    def plain(rtf: str) -> str:  # a \\u escape holds a UTF-16 unit: a letter past the first 65,536 comes as a pair
        return whole_characters(striprtf.rtf_to_text(rtf, encoding=encoding, errors="replace"))

    try:
        text = plain(_rtf_marked(_rtf_cell_paragraphs(source)))
    except (ValueError, OverflowError) as exc:  # a \\u escape's number too large for a character
        raise DataFormatError(path, f"not a readable RTF document ({exc})") from None
    marks = {chr(_RTF_HEADING_MARK + level): level for level in range(10)}
    header = chr(_RTF_HEADER_MARK)
    unmark = {ord(mark): None for mark in [*marks, header]}
    lines: list[str] = []
    rows: list[list[str]] = []
    headed = False
    headings: list[Heading] = []
    for line in text.splitlines() + [""]:  # a table's rows come as "Plan|Price|"
        level = next((marks[c] for c in line if c in marks), None)
        marked_row = header in line
        line = line.translate(unmark)
        if line.endswith("|"):
            if not rows:  # a table's first row, marked as repeated atop each page: its columns' headings
                headed = marked_row
            rows.append([" ".join(cell.split()) for cell in line[:-1].split("|")])
            continue
        if rows:
            lines.append(table_lines(rows, marked=headed))
            rows, headed = [], False
        lines.append(" ".join(line.split()))
        if level is not None and lines[-1]:
            headings.append(Heading(level, lines[-1]))
    title = _RTF_TITLE.search(source[:65536])
    try:
        own = plain("{\\rtf1 " + title.group(1) + "}") if title else ""
    except (ValueError, OverflowError):
        own = ""
    return (typeset_letters("\n".join(line for line in lines if line)), typeset_letters(own_title(own) or first_heading(headings)),
            tuple(headings))
