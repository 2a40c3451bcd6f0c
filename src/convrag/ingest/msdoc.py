"""The text and headings of a Word 97-2003 document (.doc), the binary format before .docx.

Many organisations' archives of policies, manuals and minutes are .doc files; convrag had listed
them as "not read". olefile opens the file's container (an OLE compound file); the rest is read as
[MS-DOC] describes it:

* the ``WordDocument`` stream opens with the File Information Block (FIB): the character counts of
  the main text, its footnotes and endnotes, and where the structures below are in the table
  stream (``0Table`` or ``1Table``);
* the piece table (the ``Clx``) lists the runs of the text in reading order, each 8-bit
  Windows-1252 ("compressed") or UTF-16;
* in the text, a paragraph ends in ``\\r``; a table's cell ends in ``\\x07``, and so does its row,
  with one more; a field is ``\\x13`` code ``\\x14`` result ``\\x15``, of which the result is what
  the page shows (a hyperlink's words, a date, a page number);
* a paragraph's style is in its properties (the ``PlcBtePapx`` and the 512-byte pages it points
  to), as an index into the style sheet (the ``STSH``), whose built-in identifiers mark "heading 1"
  to "heading 9" and "Title": those paragraphs are the document's headings.

What this does not read: a cell of several paragraphs (its earlier paragraphs read as lines before
the table), text boxes, headers and footers, comments, and Word 6/95 files, which are refused with
a clear reason.
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

#: the first bytes of every OLE compound file (.doc, .xls, .ppt)
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_WORD_IDENT = 0xA5EC
_FIRST_WORD97 = 0x00C1  # nFib of Word 97; earlier versions keep their text otherwise
_COMPRESSED = 0x40000000
_STSH, _PAPX, _CLX = 1, 13, 33  # indexes of the style sheet, the paragraph properties and the piece table in FibRgFcLcb97
#: the most characters a .doc's text is read to: a 1,000-page document holds about 3 million
MAX_CHARACTERS = 50_000_000
#: built-in style identifiers (sti): "heading 1" to "heading 9", and "Title" (level 0)
_HEADING_STI = {**{n: n for n in range(1, 10)}, 62: 0}

#: characters that mark something other than text: a picture, a drawn object, a footnote's or a
#: comment's reference mark, an optional hyphen (dropped); a line, page or column break; a
#: non-breaking hyphen or space
_MARKS = {0x01: "", 0x02: "", 0x05: "", 0x08: "", 0x1F: "", 0x1E: "-", 0x0B: "\n", 0x0C: "\n", 0x0E: "\n", 0xA0: " "}


class WordFileError(ValueError):
    """A .doc this reader cannot read, with the reason a user can act on."""


class Paragraph(NamedTuple):
    """A paragraph's text, and its heading level where its style is a heading's (0 for "Title")."""

    text: str
    level: int | None = None


@dataclass
class WordText:
    """A .doc's text as its blocks, each a paragraph or a table (its rows of cells), and its title."""

    blocks: list[Paragraph | list[list[str]]] = field(default_factory=list)
    title: str = ""


class _Fib(NamedTuple):
    in_1table: bool  # the table stream is 1Table, not 0Table
    places: tuple[tuple[int, int], ...]  # FibRgFcLcb97: each structure's offset in the table stream, and its size
    counts: tuple[int, ...]  # characters of the main text, footnotes, headers, comments, endnotes


def _fib(document: bytes) -> _Fib:
    """The File Information Block, or a :class:`WordFileError` saying why the file is not read."""
    try:
        ident, version = struct.unpack_from("<HH", document, 0)
        flags = struct.unpack_from("<H", document, 0x0A)[0]
        if ident != _WORD_IDENT:
            raise WordFileError("not a Word document (its WordDocument stream does not open as one)")
        if version < _FIRST_WORD97:
            raise WordFileError("a Word 6 or Word 95 document, which is not read; save it as .docx")
        if flags & 0x0100:
            raise WordFileError("locked by a password; save an unlocked copy")
        at = 0x22 + 2 * struct.unpack_from("<H", document, 0x20)[0]  # past FibRgW97
        cslw = struct.unpack_from("<H", document, at)[0]
        text, footnotes, headers, _, comments, endnotes = struct.unpack_from("<6i", document, at + 2 + 3 * 4)
        at += 2 + 4 * cslw  # past FibRgLw97
        places = tuple(struct.unpack_from("<II", document, at + 2 + 8 * k) for k in range(_CLX + 1))
    except struct.error:
        raise WordFileError("its File Information Block is cut short") from None
    return _Fib(bool(flags & 0x0200), places, (text, footnotes, headers, comments, endnotes))


class _Piece(NamedTuple):
    cp: int  # its first character's position in the text
    fc: int  # its first character's offset in the WordDocument stream
    width: int  # bytes a character: 1 (Windows-1252) or 2 (UTF-16)


def _pieces(document: bytes, table: bytes, fc_clx: int, lcb_clx: int, limit: int) -> tuple[str, list[_Piece]]:
    """The text in reading order, from the piece table, up to ``limit`` characters (the FIB's count
    of them: a damaged or crafted table of many pieces, each the whole stream, would otherwise make
    gigabytes of a small file), and where each piece of it lies."""
    clx = table[fc_clx:fc_clx + lcb_clx]
    at = 0
    try:
        while clx[at] == 0x01:  # formatting of pieces (a Prc), passed over
            at += 3 + struct.unpack_from("<H", clx, at + 1)[0]
        if clx[at] != 0x02:
            raise WordFileError("its piece table is not where its header says")
        size = struct.unpack_from("<I", clx, at + 1)[0]
        plc = clx[at + 5:at + 5 + size]
        count = (len(plc) - 4) // 12
        cps = struct.unpack_from(f"<{count + 1}I", plc, 0)
    except (IndexError, struct.error):
        raise WordFileError("its piece table is cut short") from None
    text: list[str] = []
    pieces: list[_Piece] = []
    cp = 0
    for k in range(count):
        if cp >= limit:
            break
        fc = struct.unpack_from("<I", plc, 4 * (count + 1) + 8 * k + 2)[0]
        length = min(max(cps[k + 1] - cps[k], 0), limit - cp)
        if fc & _COMPRESSED:
            start = (fc & ~_COMPRESSED) // 2
            text.append(document[start:start + length].decode("cp1252", errors="replace"))
            pieces.append(_Piece(cp, start, 1))
        else:
            text.append(document[fc:fc + 2 * length].decode("utf-16-le", errors="replace"))
            pieces.append(_Piece(cp, fc, 2))
        cp += len(text[-1])
    return "".join(text), pieces


def _heading_styles(table: bytes, fc: int, lcb: int) -> dict[int, int]:
    """The style sheet's heading styles, istd -> level (0 for "Title"), by each style's built-in
    identifier; a style sheet this cannot read gives none, and the text is read without headings."""
    sheet = table[fc:fc + lcb]
    levels: dict[int, int] = {}
    try:
        at = 2 + struct.unpack_from("<H", sheet, 0)[0]
        for istd in range(struct.unpack_from("<H", sheet, 2)[0]):
            size = struct.unpack_from("<H", sheet, at)[0]
            if size >= 2 and (sti := struct.unpack_from("<H", sheet, at + 2)[0] & 0x0FFF) in _HEADING_STI:
                levels[istd] = _HEADING_STI[sti]
            at += 2 + size
    except struct.error:
        pass
    return levels


def _paragraph_styles(document: bytes, table: bytes, fc: int, lcb: int) -> tuple[list[int], list[int]]:
    """Where each run of paragraph properties begins (offsets in the WordDocument stream, sorted)
    and its style's istd, from the PlcBtePapx and the pages it points to; none where they cannot be read."""
    plc = table[fc:fc + lcb]
    runs: list[tuple[int, int]] = []
    try:
        count = (len(plc) - 4) // 8
        for pn in struct.unpack_from(f"<{count}I", plc, 4 * (count + 1)):
            page = document[(pn & 0x3FFFFF) * 512:(pn & 0x3FFFFF) * 512 + 512]
            crun = page[511]
            bounds = struct.unpack_from(f"<{crun + 1}I", page, 0)
            for k in range(crun):
                offset, istd = 2 * page[4 * (crun + 1) + 13 * k], 0
                if offset:  # a PapxInFkp: its size (one byte, or a zero then one), then the style's istd
                    istd = struct.unpack_from("<H", page, offset + (1 if page[offset] else 2))[0]
                runs.append((bounds[k], istd))
    except (IndexError, struct.error):
        return [], []
    runs.sort()
    return [start for start, _ in runs], [istd for _, istd in runs]


def _levels(text: str, pieces: list[_Piece], styles: tuple[list[int], list[int]], headings: dict[int, int]) -> list[int | None]:
    """Each paragraph's heading level (None: none), by the offset of its paragraph mark in the file."""
    starts, istds = styles
    cps = [piece.cp for piece in pieces]
    levels: list[int | None] = []
    cp = text.find("\r")
    while cp >= 0 and starts and pieces:
        piece = pieces[bisect.bisect_right(cps, cp) - 1]
        run = bisect.bisect_right(starts, piece.fc + (cp - piece.cp) * piece.width) - 1
        levels.append(headings.get(istds[run]) if run >= 0 else None)
        cp = text.find("\r", cp + 1)
    return levels


def _shown(text: str) -> str:
    """``text`` as the page shows it: each field's result kept and its code dropped, marks that are
    no text dropped or made what they stand for. Every paragraph mark is kept, so that the
    paragraphs stay those whose styles were read."""
    out: list[str] = []
    fields: list[bool] = []  # for each open field, whether its result (after \x14) has begun
    for char in text:
        code = ord(char)
        if code == 0x13:
            fields.append(False)
        elif code == 0x14:
            if fields:
                fields[-1] = True
        elif code == 0x15:
            if fields:
                fields.pop()
        elif char == "\r":
            out.append(char)
        elif not all(fields):  # inside a field's code
            continue
        elif char in "\x07\t\n":
            out.append(char)
        elif code in _MARKS:
            out.append(_MARKS[code])
        elif code >= 0x20:
            out.append(char)
    return "".join(out)


def _rows(cells: list[str]) -> list[list[str]]:
    """A table's cells, each ended by ``\\x07``, as rows: a row's end is one more, which reads as
    an empty cell. Where every row has as many cells (the common table), the rows are those groups,
    so an empty cell inside a row stays a cell (where two rows or more agree on the width: one row
    alone cannot tell its empty cells from its end); otherwise each empty cell ends a row."""
    for width in range(1, len(cells)):
        if len(cells) % (width + 1) == 0 and all(not cells[k] for k in range(width, len(cells), width + 1)):
            rows = [cells[k:k + width] for k in range(0, len(cells), width + 1)]
            if len(rows) > 1 or all(rows[0]):
                return rows
    rows, row = [], []
    for cell in cells:
        if cell:
            row.append(cell)
        elif row:
            rows.append(row)
            row = []
    return rows + ([row] if row else [])


def _blocks(text: str, levels: list[int | None]) -> list[Paragraph | list[list[str]]]:
    """Paragraphs and tables: a run of paragraphs ending in ``\\x07`` is a table's cells."""
    blocks: list[Paragraph | list[list[str]]] = []
    cells: list[str] = []
    for index, paragraph in enumerate(text.split("\r")):
        *in_table, after = paragraph.split("\x07")
        if in_table:
            cells += [" ".join(cell.split()) for cell in in_table]
        if after.strip() or not in_table:
            if cells:
                blocks.append(_rows(cells))
                cells = []
            # the \r that ends this piece of the text is the mark of its last paragraph, after any cells
            blocks.append(Paragraph(after, levels[index] if index < len(levels) else None))
    if cells:
        blocks.append(_rows(cells))
    return blocks


def read_word97(path: Path) -> WordText:
    """The main text of a .doc, with its headings, then its footnotes and endnotes, as blocks; its
    title from the file's summary information. Raises :class:`WordFileError` for a file it cannot read."""
    import olefile

    try:
        with olefile.OleFileIO(str(path)) as ole:
            if not ole.exists("WordDocument"):
                raise WordFileError("not a Word document (no WordDocument stream)")
            document = ole.openstream("WordDocument").read()
            fib = _fib(document)
            name = "1Table" if fib.in_1table else "0Table"
            if not ole.exists(name):
                raise WordFileError(f"its {name} stream is missing")
            table = ole.openstream(name).read()
            title = ole.get_metadata().title or b""
    except OSError as exc:  # olefile's "not an OLE2 structured storage file", a damaged container
        raise WordFileError(f"not a readable Word 97-2003 file ({exc})") from None
    if (claimed := sum(max(count, 0) for count in fib.counts)) > MAX_CHARACTERS:
        raise WordFileError(f"it claims {claimed:,} characters, more than the {MAX_CHARACTERS:,} a document is read to")
    whole, pieces = _pieces(document, table, *fib.places[_CLX], limit=claimed)
    main, footnotes, headers, comments, endnotes = fib.counts
    levels = _levels(whole[:main], pieces, _paragraph_styles(document, table, *fib.places[_PAPX]),
                     _heading_styles(table, *fib.places[_STSH]))
    blocks = _blocks(_shown(whole[:main]), levels)
    start = main + footnotes + headers + comments
    for part in (whole[main:main + footnotes], whole[start:start + endnotes]):
        blocks += _blocks(_shown(part), [])
    return WordText(blocks, title.decode("cp1252", errors="replace") if isinstance(title, bytes) else str(title))
