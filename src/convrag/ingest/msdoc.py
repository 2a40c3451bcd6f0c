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
* a paragraph's properties (the ``PlcBtePapx`` and the 512-byte pages it points to) give its
  style, as an index into the style sheet (the ``STSH``), whose built-in identifiers mark "heading 1"
  to "heading 9" and "Title": those paragraphs are the document's headings; and whether it is in a
  table, ends a row, and ends the header row (a row repeated atop each page), which names the
  table's columns as a .docx's header row does.

What this does not read: text boxes, headers and footers, comments, and Word 6/95 files, which are
refused with a clear reason.
"""

from __future__ import annotations

import bisect
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

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


def summary_title(ole: Any) -> str:
    """The title an OLE file's summary information holds (8-bit, Windows-1252), "" where there is none:
    the one reading of it that .doc, .xls and .ppt share."""
    title = ole.get_metadata().title or b""
    return title.decode("cp1252", errors="replace") if isinstance(title, bytes) else str(title)


class WordFileError(ValueError):
    """A .doc this reader cannot read, with the reason a user can act on."""


class Paragraph(NamedTuple):
    """A paragraph's text, and its heading level where its style is a heading's (0 for "Title")."""

    text: str
    level: int | None = None


class Table(NamedTuple):
    """A table's rows of cells, and whether its first row is marked as its header row (None: the
    file's properties could not say)."""

    rows: list[list[str]]
    header: bool | None


@dataclass
class WordText:
    """A .doc's text as its blocks, each a paragraph or a table, and its title."""

    blocks: list[Paragraph | Table] = field(default_factory=list)
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


class _Props(NamedTuple):
    """What a paragraph's properties say about it."""

    istd: int = 0  # its style
    in_table: bool = False  # it is in a table's cell (sprmPFInTable)
    row_end: bool = False  # it is a row's end mark (sprmPFTtp)
    header: bool = False  # that row repeats atop each page: the table's header row (sprmTTableHeader)


_NO_PROPS = _Props()
#: operand sizes by a sprm's spra (its top three bits); 6 is variable, its size in its first byte
_SPRA_SIZE = {0: 1, 1: 1, 2: 2, 3: 4, 4: 2, 5: 2, 7: 3}
_IN_TABLE, _TTP, _TABLE_HEADER, _DEF_TABLE = 0x2416, 0x2417, 0x3404, 0xD608


def _props(grpprl: bytes, istd: int) -> _Props:
    """A paragraph's properties from its list of sprms (the part of them this reader needs)."""
    found: dict[int, int] = {}
    at = 0
    while at + 2 <= len(grpprl):
        sprm = struct.unpack_from("<H", grpprl, at)[0]
        at += 2
        spra = sprm >> 13
        if spra == 6:  # variable: a byte of size, or two for a table's definition
            size = (struct.unpack_from("<H", grpprl, at)[0] + 1) if sprm == _DEF_TABLE and at + 2 <= len(grpprl) else \
                (grpprl[at] + 1 if at < len(grpprl) else 0)
        else:
            size = _SPRA_SIZE[spra]
        if sprm in (_IN_TABLE, _TTP, _TABLE_HEADER) and at < len(grpprl):
            found[sprm] = grpprl[at]
        at += size
    return _Props(istd, bool(found.get(_IN_TABLE)), bool(found.get(_TTP)), bool(found.get(_TABLE_HEADER)))


def _paragraph_props(document: bytes, table: bytes, fc: int, lcb: int) -> tuple[list[int], list[_Props]]:
    """Where each run of paragraph properties begins (offsets in the WordDocument stream, sorted)
    and what they say, from the PlcBtePapx and the 512-byte pages it points to; none where they
    cannot be read (the text is then read without headings, and its tables by their marks alone)."""
    plc = table[fc:fc + lcb]
    runs: list[tuple[int, _Props]] = []
    try:
        count = (len(plc) - 4) // 8
        for pn in struct.unpack_from(f"<{count}I", plc, 4 * (count + 1)):
            page = document[(pn & 0x3FFFFF) * 512:(pn & 0x3FFFFF) * 512 + 512]
            crun = page[511]
            bounds = struct.unpack_from(f"<{crun + 1}I", page, 0)
            for k in range(crun):
                offset, props = 2 * page[4 * (crun + 1) + 13 * k], _NO_PROPS
                if offset:  # a PapxInFkp: its size in words (one byte, or a zero then one), the style's istd, its sprms
                    size, start = (2 * page[offset] - 1, offset + 1) if page[offset] else (2 * page[offset + 1], offset + 2)
                    grpprl = page[start:start + size]
                    props = _props(grpprl[2:], struct.unpack_from("<H", grpprl, 0)[0])
                runs.append((bounds[k], props))
    except (IndexError, struct.error):
        return [], []
    runs.sort(key=lambda run: run[0])
    return [start for start, _ in runs], [props for _, props in runs]


_ENDS = re.compile("[\r\x07]")


def _marks(text: str, offset: int, pieces: list[_Piece], runs: tuple[list[int], list[_Props]]) -> list[_Props]:
    """The properties of each paragraph mark (``\\r``, or a cell's or row's ``\\x07``) of ``text``,
    which begins ``offset`` characters into the document's text; found by the mark's place in the file."""
    starts, props = runs
    if not starts or not pieces:
        return []
    cps = [piece.cp for piece in pieces]
    found: list[_Props] = []
    for mark in _ENDS.finditer(text):
        cp = offset + mark.start()
        piece = pieces[bisect.bisect_right(cps, cp) - 1]
        run = bisect.bisect_right(starts, piece.fc + (cp - piece.cp) * piece.width) - 1
        found.append(props[run] if run >= 0 else _NO_PROPS)
    return found


def _shown(text: str) -> str:
    """``text`` as the page shows it: each field's result kept and its code dropped, marks that are
    no text dropped or made what they stand for. Every paragraph mark (``\\r``, ``\\x07``) is kept,
    so that the paragraphs stay those whose properties were read."""
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
        elif char in "\r\x07":
            out.append(char)
        elif not all(fields):  # inside a field's code
            continue
        elif char in "\t\n":
            out.append(char)
        elif code in _MARKS:
            out.append(_MARKS[code])
        elif code >= 0x20:
            out.append(char)
    return "".join(out)


def _rows(cells: list[str]) -> list[list[str]]:
    """A table's cells as rows where no properties say which mark ends a row: a row's end is one
    more mark, which reads as an empty cell. Where every row has as many cells (the common table),
    the rows are those groups, so an empty cell inside a row stays a cell (where two rows or more
    agree on the width: one row alone cannot tell its empty cells from its end); otherwise each
    empty cell ends a row."""
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


def _blocks(text: str, marks: list[_Props], headings: dict[int, int]) -> list[Paragraph | Table]:
    """Paragraphs and tables, from the shown text and its marks' properties. A paragraph in a table
    belongs to the cell its next cell mark ends (a cell may hold several paragraphs), a row ends at a
    row-end mark, and the first row names the columns where it is marked as the header row. Without
    properties, a run of marks ``\\x07`` is a table's cells, their rows found by :func:`_rows`."""
    pieces = _ENDS.split(text)
    ends = _ENDS.findall(text)
    blocks: list[Paragraph | Table] = []
    rows: list[list[str]] = []
    row: list[str] = []
    cell: list[str] = []
    header: bool | None = None
    loose: list[str] = []  # cells without properties to place them

    def close() -> None:
        nonlocal rows, row, header, loose
        if loose:
            blocks.append(Table(_rows(loose), None))
        elif rows or row:
            blocks.append(Table(rows + ([row] if row else []), header))
        rows, row, header, loose = [], [], None, []

    for index, piece in enumerate(pieces):
        end = ends[index] if index < len(ends) else "\r"
        props = marks[index] if index < len(marks) else None
        words = " ".join(piece.split())
        if props is None and end == "\x07":
            loose.append(words)
        elif props is not None and (props.in_table or props.row_end):
            if props.row_end:
                if header is None:
                    header = props.header
                rows.append(row)
                row = []
            elif end == "\x07":
                row.append(" ".join([*cell, words]).strip())
                cell = []
            elif words:
                cell.append(words)
        else:
            close()
            level = headings.get(props.istd) if props is not None else None
            blocks.append(Paragraph(piece, level))
    close()
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
            title = summary_title(ole)
    except (WordFileError, MemoryError):
        raise
    except Exception as exc:  # olefile's "not an OLE2 structured storage file", and what a damaged container raises
        raise WordFileError(f"not a readable Word 97-2003 file ({exc or type(exc).__name__})") from None
    if (claimed := sum(max(count, 0) for count in fib.counts)) > MAX_CHARACTERS:
        raise WordFileError(f"it claims {claimed:,} characters, more than the {MAX_CHARACTERS:,} a document is read to")
    whole, pieces = _pieces(document, table, *fib.places[_CLX], limit=claimed)
    runs = _paragraph_props(document, table, *fib.places[_PAPX])
    headings = _heading_styles(table, *fib.places[_STSH])
    main, footnotes, headers, comments, endnotes = fib.counts
    blocks: list[Paragraph | Table] = []
    endnotes_at = main + footnotes + headers + comments
    for start, size, styled in ((0, main, True), (main, footnotes, False), (endnotes_at, endnotes, False)):
        part = whole[start:start + size]
        blocks += _blocks(_shown(part), _marks(part, start, pieces, runs), headings if styled else {})
    return WordText(blocks, title)
