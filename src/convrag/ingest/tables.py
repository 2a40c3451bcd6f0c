"""Tables as lines a passage keeps whole: a row is one line of its cells, each named by its column's
heading where the first row is one (:func:`table_lines`). CSV files and Excel workbooks (.xlsx by
openpyxl, .xls by xlrd) read so, a sheet a section; the HTML, Word, OpenDocument and RTF readers
write their tables so too."""

from __future__ import annotations

import datetime
import re
import warnings
from pathlib import Path
from typing import Any

from ..errors import DataFormatError
from .formats import Heading
from .packages import check_unpacked_size
from .titles import own_title
from .typesetting import typeset_letters

#: the separators a CSV file's cells may be parted by (a spreadsheet saved in a comma-decimal locale
#: writes ";")
_CSV_SEPARATORS = ",;\t|"


def table_to_text(raw: str, path: Path) -> str:
    """A CSV (or tab-separated) table, a row to a line, each cell named by its column's heading:
    "Question: Can kayaks moor overnight? | Answer: Yes, for 12 dollars." A row read alone (as a
    passage, or a sentence the answer's compression keeps) then still says what each value is; an
    FAQ or a price list exported from a help desk or a spreadsheet is such a table. The first row is
    the headings where its cells are all filled, all different, and all short labels, not numbers
    (:func:`_headings`); else every row's cells are joined by " | ". A line the reader cannot parse
    is a :class:`DataFormatError` naming it."""
    import csv
    import io

    sample = raw[:65_536]
    try:
        dialect: Any = csv.excel_tab if path.suffix.lower() == ".tsv" else csv.Sniffer().sniff(sample, _CSV_SEPARATORS)
    except csv.Error:  # one column, or too little to tell: commas
        dialect = csv.excel
    reader = csv.reader(io.StringIO(raw, newline=""), dialect)  # a quoted cell may hold line breaks
    try:
        rows = [[" ".join(cell.split()) for cell in row] for row in reader]
    except csv.Error as exc:  # a cell longer than the csv module reads (128 KB)
        raise DataFormatError(path, f"not a readable CSV table ({exc})", reader.line_num) from None
    return table_lines(rows)


def table_lines(rows: list[list[str]], marked: bool | None = None) -> str:
    """A table's rows as lines, each cell named by its column's heading where the first row holds
    headings (:func:`table_to_text`). ``marked`` says whether the table's own markup makes its
    first row the headings (an HTML row of ``th`` cells, a Word row repeated atop each page): then
    it is taken so where its cells are filled and all different; None (a CSV file, a spreadsheet,
    which mark nothing) leaves it to :func:`_headings`. A table that marks nothing, as a Word key
    and value table ("Name | John Smith") does, is not named: its first row is data."""
    rows = [row for row in rows if any(row)]  # a spreadsheet's blank rows between its blocks
    heading = rows[0] if len(rows) > 1 and _headings(rows[0], marked) else None
    if heading is None:
        return "\n".join(line for row in rows for line in row_lines([cell for cell in row if cell]))
    named = ([f"{name}: {cell}" for name, cell in zip(heading, row) if cell] + [cell for cell in row[len(heading):] if cell]
             for row in rows[1:])  # a row longer than the headings keeps its extra cells, unnamed
    return "\n".join(line for cells in named for line in row_lines(cells))


#: the most words of a row's line: a longer row (a sheet of specifications a hundred columns wide) is
#: parted into several lines (:func:`row_lines`); a passage of 512 tokens holds two or three of them
WIDE_ROW_WORDS = 120
#: the most words of a row's first cell that leads each of its lines: a key ("Product: Model X0"), not a text
_KEY_WORDS = 12


def row_lines(cells: list[str]) -> list[str]:
    """A row's cells as one line, or, past :data:`WIDE_ROW_WORDS` words, as several lines, each of
    whole cells and each led by the row's first cell where that is short, its key ("Product: Model
    X0 | Spec 61 (V): 230 | ..."). Such a row was one line longer than a passage: the passages cut
    from it began inside a cell ("W): 703 | Spec 49 ...") and said nowhere what they were about, so
    a question that named the product did not find its values past the first passage."""
    line = " | ".join(cells)
    if len(line.split()) <= WIDE_ROW_WORDS or len(cells) < 2:
        return [line]
    key = cells[0] if len(cells[0].split()) <= _KEY_WORDS else ""
    budget = WIDE_ROW_WORDS - len(key.split()) + (0 if key else 1)  # the first cell of a line without a key has no " | "
    groups: list[list[str]] = [[]]
    size = 0
    for cell in cells[1:] if key else cells:
        words = len(cell.split()) + 1  # and its " | "
        if groups[-1] and size + words > budget:
            groups.append([])
            size = 0
        groups[-1].append(cell)
        size += words
    return [" | ".join([key, *group] if key else group) for group in groups]


#: the most words a column's heading has: a label ("Date of last change"), not a question or an answer
_HEADING_WORDS = 5
_NUMBER = re.compile(r"[-+]?[\d.,]+%?")


def _headings(row: list[str], marked: bool | None = None) -> bool:
    """Whether a table's first row names its columns: every cell filled and all different, and
    where no markup says (``marked`` None, :func:`table_lines`) none a number and each a label of
    at most :data:`_HEADING_WORDS` words. (:meth:`csv.Sniffer.has_header` judges by the columns'
    types, and took "Plan;Price" over "Standard;0,02" for a row of data.)"""
    if not all(row) or len(set(row)) != len(row):
        return False
    if marked is not None:
        return marked
    return not any(_NUMBER.fullmatch(cell) for cell in row) and all(len(cell.split()) <= _HEADING_WORDS for cell in row)


#: a sheet's name that names nothing: Excel's "Sheet1", LibreOffice's "Sheet 1"
_NO_SHEET_NAME = re.compile(r"(?:sheet|tabelle|feuil|hoja|foglio)\s*\d*", re.IGNORECASE)


def xlsx_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an Excel workbook (openpyxl, streamed): each visible sheet a block of its own,
    parted by a blank line and opened by its name where the name says something ("Prices 2025", not
    "Sheet1"); its rows read as a CSV file's are (:func:`table_lines`), a formula as the value Excel
    last computed for it. The title is the workbook's own, else the file's name. A package openpyxl
    fails on is a :class:`DataFormatError`, as a Word document's is."""
    from zipfile import BadZipFile

    import openpyxl

    check_unpacked_size(path, "an Excel workbook")
    try:
        with warnings.catch_warnings():  # what openpyxl cannot keep of a file (its styles, data validation) is no matter to the text
            warnings.simplefilter("ignore")
            book = openpyxl.load_workbook(path, read_only=True, data_only=True)
        try:
            sheets = []
            for sheet in book.worksheets:
                if sheet.sheet_state != "visible":
                    continue
                rows = [[_cell_text(value) for value in row] for row in sheet.iter_rows(values_only=True)]
                table = table_lines(rows)
                if table:
                    sheets.append(sheet_block(sheet.title, table))
            title = (book.properties.title or "").strip()
        finally:
            book.close()
    except (BadZipFile, KeyError) as exc:  # not a package, or one without a workbook part
        raise DataFormatError(path, "not a readable Excel workbook (not an .xlsx package; an old Excel 97-2003 file is read as .xls"
                                    f"{'' if isinstance(exc, BadZipFile) else f': {exc}'})") from None
    except MemoryError:
        raise
    except Exception as exc:  # a damaged part: lxml's or openpyxl's own errors
        raise DataFormatError(path, f"not a readable Excel workbook ({exc or type(exc).__name__})") from None
    return typeset_letters("\n\n".join(sheets)), typeset_letters(own_title(title)), ()


def xls_to_text(path: Path) -> tuple[str, str, tuple[Heading, ...]]:
    """The text of an Excel 97-2003 workbook (.xls, xlrd), as an .xlsx's is (:func:`xlsx_to_text`):
    each visible sheet's rows, named by its first row where that holds labels, a date as a date and
    a formula as the value Excel last computed. The title is the file's own, else its name. A file
    that cannot be read (not an .xls, damaged, locked by a password) is a :class:`DataFormatError`."""
    import io

    import olefile
    import xlrd

    from .msdoc import summary_title

    try:
        # the workbook stream is taken out of its container by olefile: xlrd's own reader follows a
        # damaged file's chain of sectors round a loop, appending to memory until the process is killed
        with olefile.OleFileIO(str(path)) as ole:
            stream = next((name for name in ("Workbook", "Book") if ole.exists(name)), None)
            if stream is None:
                raise DataFormatError(path, "not an Excel workbook (no Workbook stream)")
            workbook = ole.openstream(stream).read()
            title = summary_title(ole)
        book = xlrd.open_workbook(file_contents=workbook, on_demand=True, logfile=io.StringIO())
    except (DataFormatError, MemoryError):
        raise
    except Exception as exc:  # olefile's and xlrd's errors, and what a damaged stream raises
        raise DataFormatError(path, f"not a readable Excel 97-2003 workbook ({exc or type(exc).__name__})") from None
    try:
        sheets = []
        filled = 0
        for index in range(book.nsheets):
            sheet = book.sheet_by_index(index)
            if sheet.visibility != 0:  # hidden, or "very hidden" (only a macro shows it)
                continue
            filled += sheet.nrows * sheet.ncols
            if filled > MAX_SHEET_CELLS:
                raise DataFormatError(path, f"not read: it holds more than {MAX_SHEET_CELLS:,} cells; save the sheets that "
                                            "matter as .csv")
            rows = [[_xls_cell(cell, book.datemode) for cell in sheet.row(r)] for r in range(sheet.nrows)]
            table = table_lines(rows)
            if table:
                sheets.append(sheet_block(sheet.name, table))
            book.unload_sheet(index)
    except (DataFormatError, MemoryError):
        raise
    except Exception as exc:
        raise DataFormatError(path, f"not a readable Excel 97-2003 workbook ({exc or type(exc).__name__})") from None
    finally:
        book.release_resources()
    return typeset_letters("\n\n".join(sheets)), typeset_letters(own_title(title)), ()


def _xls_cell(cell: Any, datemode: int) -> str:
    """An .xls cell as :func:`_cell_text` reads an .xlsx's: a date is a number there, marked by its format."""
    import xlrd

    if cell.ctype == xlrd.XL_CELL_DATE:
        try:
            return _cell_text(xlrd.xldate.xldate_as_datetime(cell.value, datemode))
        except (ValueError, OverflowError):  # a date Excel cannot show either (before 1900, or negative)
            return _cell_text(cell.value)
    if cell.ctype == xlrd.XL_CELL_BOOLEAN:
        return _cell_text(bool(cell.value))
    if cell.ctype == xlrd.XL_CELL_ERROR:
        return xlrd.error_text_from_code.get(cell.value, "")
    return _cell_text(cell.value if cell.ctype != xlrd.XL_CELL_EMPTY else None)


def sheet_block(name: str, table: str) -> str:
    """A workbook's sheet as a block of text: its rows, opened by its name where the name says
    something ("Prices 2025", not "Sheet1"), for an Excel and an OpenDocument workbook alike."""
    name = name.strip()
    return f"{name}\n{table}" if name and not _NO_SHEET_NAME.fullmatch(name) else table


def _cell_text(value: Any) -> str:
    """A cell's value as a reader sees it: 12 for 12.0, a date without a midnight time, nothing for none."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime.datetime) and value.time() == datetime.time():
        return value.date().isoformat()
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return " ".join(str(value).split())


#: the most filled cells a workbook is read to (an .ods, repeats counted, and an .xls): a few kilobytes of
#: an .ods's XML can claim a row of a thousand filled cells repeated a thousand times, and the workbook is
#: refused past this
MAX_SHEET_CELLS = 2_000_000
