"""Word 97-2003 documents (.doc) and Excel 97-2003 workbooks (.xls), which were "not read"."""

from __future__ import annotations

import datetime
import re
import struct
from pathlib import Path

import pytest

from convrag.errors import DataFormatError
from convrag.ingest.documents import read_document
from convrag.ingest.msdoc import Paragraph, Table, WordFileError, _blocks, _fib, _rows, _shown, read_word97

MADE = Path(__file__).parent / "made_by_libreoffice"


def test_a_doc_reads_as_the_word_document_it_was_saved_from() -> None:
    """LibreOffice's .doc of pandoc's Word version of the manual: the same lines (its table's rows
    named by the header row), the same headings from its "Heading 1/2" styles, the same title."""
    doc = read_document(MADE / "heatpump-manual.doc")
    docx = read_document(MADE.parent / "made_by_pandoc" / "heatpump-manual.docx")
    assert (doc.text, doc.title, doc.headings) == (docx.text, docx.title, docx.headings)
    assert "Property: COP at A7/W35 | Value: 4.9" in doc.text and len(doc.headings) == 13
    assert doc.headings[-1].text == "12. Disposal"  # the heading right after the table


def _tables_docx(path: Path) -> Path:
    """The Word file LibreOffice saved as ``harbour-tables.doc`` (made_by_libreoffice/README.md): a key and
    value table without a header row, and a price table whose first row is marked as its header row, with an
    empty cell and a cell of two paragraphs."""
    from docx import Document
    from docx.oxml import OxmlElement

    doc = Document()
    doc.add_heading("Harbour office", level=1)
    doc.add_paragraph("Who to ask.")
    keys = doc.add_table(rows=2, cols=2)
    for r, (key, value) in enumerate([("Name", "Ann Lee"), ("Opens", "8:00")]):
        keys.cell(r, 0).text, keys.cell(r, 1).text = key, value
    doc.add_heading("Fees", level=2)
    prices = doc.add_table(rows=3, cols=3)
    prices.rows[0]._tr.get_or_add_trPr().append(OxmlElement("w:tblHeader"))
    for r, row in enumerate([("Plan", "Price", "Note"), ("Lite", "10", ""), ("Pro", "35", None)]):
        for c, text in enumerate(row):
            if text is not None:
                prices.cell(r, c).text = text
    prices.cell(2, 2).text = "Paid yearly."
    prices.cell(2, 2).add_paragraph("Boats under 12 m.")
    doc.add_paragraph("Fees rise in May.")
    doc.save(str(path))
    return path


def test_a_docs_tables_are_read_by_their_rows_and_header_row_marks(tmp_path: Path) -> None:
    """A table's cells, rows and header row are in its paragraphs' properties. Read from the marks alone,
    the key and value table was named by its first row ("Name: Opens | Ann Lee: 8:00"), and a cell of
    two paragraphs had its first read as a line before the table."""
    doc = read_document(MADE / "harbour-tables.doc")
    docx = read_document(_tables_docx(tmp_path / "harbour-tables.docx"))
    assert (doc.text, doc.title, doc.headings) == (docx.text, docx.title, docx.headings)
    assert doc.text.split("\n") == ["Harbour office", "Who to ask.", "Name | Ann Lee", "Opens | 8:00", "Fees",
                                    "Plan: Lite | Price: 10", "Plan: Pro | Price: 35 | Note: Paid yearly. Boats under 12 m.",
                                    "Fees rise in May."]


def test_without_properties_a_tables_cells_are_placed_by_their_marks() -> None:
    # a file whose paragraph properties cannot be read: its cells by their marks, the header left to the labels
    blocks = _blocks("Fees\rPlan\x07Price\x07\x07Lite\x0710\x07\x07After.\r", [], {})
    assert blocks == [Paragraph("Fees"), Table([["Plan", "Price"], ["Lite", "10"]], None), Paragraph("After."), Paragraph("")]


def test_a_tables_rows_keep_an_empty_cell_in_its_place() -> None:
    # "Plan | (empty) | Price": each cell ends in \x07 and each row in one more, so the empty cell reads as a row's end too
    cells = ["Plan", "Note", "Price", "", "Lite", "", "10", "", "Pro", "new", "35", ""]
    assert _rows(cells) == [["Plan", "Note", "Price"], ["Lite", "", "10"], ["Pro", "new", "35"]]
    # rows of different widths (merged cells): an empty cell ends a row
    assert _rows(["Fees", "", "Boat", "5", ""]) == [["Fees"], ["Boat", "5"]]


def test_fields_show_their_result_and_marks_are_what_they_stand_for() -> None:
    # a hyperlink: its code (the address) dropped, its words kept; a field inside another's result too
    text = ('See \x13 HYPERLINK "http://x" \x14the fees page\x15 now.\rDate: \x13 DATE \x14\x13 X \x142025\x15\x15.'
            "\ra\x1fb non\x1ebreaking\x0bline\x01\x08")
    assert _shown(text) == "See the fees page now.\rDate: 2025.\rab non-breaking\nline"
    assert _shown("\x13 TOC \r\x14Fees\x15") == "\rFees"  # a paragraph mark stays, so the paragraphs keep their styles


def _fib_bytes(ident: int = 0xA5EC, version: int = 0x00C1, flags: int = 0) -> bytes:
    return struct.pack("<HHHHHH", ident, version, 0, 0, 0, flags) + bytes(2000)


@pytest.mark.parametrize("fib, reason", [
    (_fib_bytes(version=0x0065), "Word 6 or Word 95"),
    (_fib_bytes(flags=0x0100), "locked by a password"),
    (_fib_bytes(ident=0x1234), "not a Word document"),
    (_fib_bytes()[:40], "cut short"),
])
def test_a_doc_this_cannot_read_says_why(fib: bytes, reason: str) -> None:
    with pytest.raises(WordFileError, match=reason):
        _fib(fib)


def test_a_damaged_or_misnamed_doc_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "renamed.doc").write_bytes((MADE.parent / "made_by_pandoc" / "heatpump-manual.docx").read_bytes())
    with pytest.raises(DataFormatError, match="renamed.doc: not a readable Word 97-2003 file"):
        read_document(tmp_path / "renamed.doc")
    whole = (MADE / "heatpump-manual.doc").read_bytes()
    for size in (600, 5000, 20000):  # the container, the streams or the piece table cut short
        (tmp_path / "cut.doc").write_bytes(whole[:size])
        with pytest.raises(DataFormatError, match="cut.doc: "):
            read_document(tmp_path / "cut.doc")
    with pytest.raises(WordFileError):
        read_word97(tmp_path / "renamed.doc")
    # a text count no document has (a few bytes changed) is refused, not read to gigabytes
    fib = whole.find(b"\xec\xa5")  # the WordDocument stream opens with its FIB
    at = fib + 0x22 + 2 * struct.unpack_from("<H", whole, fib + 0x20)[0] + 2 + 3 * 4  # ccpText
    (tmp_path / "huge.doc").write_bytes(whole[:at] + struct.pack("<i", 2_000_000_000) + whole[at + 4:])
    with pytest.raises(DataFormatError, match="claims 2,000,0"):
        read_document(tmp_path / "huge.doc")


def _workbook(path: Path) -> Path:
    """The workbook LibreOffice saved as ``harbour-prices.xls`` (made_by_libreoffice/README.md)."""
    import openpyxl

    book = openpyxl.Workbook()
    prices = book.active
    prices.title = "Prices 2025"
    for row in (["Plan", "Price", "From"], ["Lite", 0, datetime.datetime(2025, 1, 1)], [], ["Standard", 12.5, None],
                ["Pro", True, datetime.datetime(2025, 3, 1, 9, 30)]):
        prices.append(row)
    berths = book.create_sheet("Sheet2")
    for row in (["Berth", "Boat"], [1, "Kayak"]):
        berths.append(row)
    book.create_sheet("Notes").sheet_state = "hidden"
    book["Notes"].append(["not shown to readers"])
    book.save(path)
    return path


def test_an_xls_reads_as_the_xlsx_it_was_saved_from(tmp_path: Path) -> None:
    """Its sheets and rows, named by the first row; a date as a date (a number in the file, marked by
    its format); a hidden sheet left out; a sheet named "Sheet2" not named."""
    xls = read_document(MADE / "harbour-prices.xls")
    xlsx = read_document(_workbook(tmp_path / "harbour-prices.xlsx"))
    assert (xls.text, xls.title) == (xlsx.text, xlsx.title)
    assert xls.text == ("Prices 2025\nPlan: Lite | Price: 0 | From: 2025-01-01\nPlan: Standard | Price: 12.5\n"
                        "Plan: Pro | Price: True | From: 2025-03-01T09:30:00\n\nBerth: 1 | Boat: Kayak")


def test_a_damaged_or_misnamed_xls_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "renamed.xls").write_bytes(_workbook(tmp_path / "book.xlsx").read_bytes())
    (tmp_path / "cut.xls").write_bytes((MADE / "harbour-prices.xls").read_bytes()[:3000])
    for name in ("renamed.xls", "cut.xls"):
        with pytest.raises(DataFormatError, match=f"{name}: not a readable Excel 97-2003 workbook"):
            read_document(tmp_path / name)



def test_a_ppt_reads_as_the_deck_it_was_saved_from() -> None:
    """LibreOffice's .ppt of pandoc's deck (a PowerPoint 97-2003 deck was "not read"): the same lines,
    slide by slide. LibreOffice wrote its shapes as plain text boxes, with no title placeholders and
    no header-row mark, so the .ppt has no slide titles (it is titled by its file name) and its table's
    rows are not named."""
    ppt = read_document(MADE / "heatpump-manual.ppt")
    deck = read_document(MADE.parent / "made_by_pandoc" / "heatpump-manual.pptx")
    unnamed = re.sub(r"Property: (.*) \| Value: ", r"\1 | ", deck.text).replace("Heating capacity", "Property | Value\nHeating capacity", 1)
    assert ppt.text == unnamed and ppt.text.count("\n\n") == 1
    assert (ppt.title, ppt.headings) == ("heatpump manual", ())


def _record(kind: int, body: bytes = b"", instance: int = 0, container: bool = False) -> bytes:
    return struct.pack("<HHI", (instance << 4) | (0xF if container else 0), kind, len(body)) + body


def _text_box(kind: int, text: str = "", ref: int | None = None) -> bytes:
    atom = _record(0x0F9E, struct.pack("<i", ref)) if ref is not None else _record(0x0FA0, text.encode("utf-16-le"))
    return _record(0xF00D, _record(0x0F9F, struct.pack("<I", kind)) + atom, container=True)


def test_a_ppt_slides_titles_placeholders_tables_and_notes() -> None:
    """As PowerPoint writes a deck: a placeholder's text in the slide list, referred to from the slide
    (its title); a text box of its own; a table, a group of cells placed by their anchors; the notes."""
    from convrag.ingest.msppt import Slide, _drawing_lines, _slide_lists, _Stream

    def cell(left: int, top: int, text: str) -> bytes:
        return _record(0xF004, _record(0xF00F, struct.pack("<iiii", left, top, left + 10, top + 1)) + _text_box(4, text), container=True)

    table = _record(0xF003, _record(0xF004, b"", container=True) + cell(0, 0, "Plan") + cell(10, 0, "Price") + cell(0, 1, "Lite")
                    + cell(10, 1, "10") + cell(10, 2, "*"), container=True)
    shapes = (_record(0xF004, b"", container=True) + _record(0xF004, _text_box(0, ref=0), container=True)
              + _record(0xF004, _text_box(1, "Kayaks pay 2 dollars.\rBoats pay\x0b5 dollars."), container=True) + table)
    slide = _record(0x03EE, _record(0x040C, _record(0xF002, _record(0xF003, shapes, container=True), container=True),
                                     container=True), container=True)
    slide_list = _record(0x0FF0, _record(0x03F3, struct.pack("<IIiII", 5, 0, 0, 256, 0)) + _record(0x0F9F, struct.pack("<I", 0))
                         + _record(0x0FA0, "Harbour fees".encode("utf-16-le")), instance=0, container=True)
    document = _record(0x03E8, slide_list, container=True)
    stream = _Stream(document + slide)
    lists = _slide_lists(stream, stream.record(0))
    assert [(persist, slide_id) for persist, slide_id, _ in lists[0]] == [(5, 256)]
    read = Slide()
    lines = _drawing_lines(stream, stream.record(len(document)), lists[0][0][2], read)
    assert read.title == "Harbour fees"
    assert lines == ["Harbour fees", "Kayaks pay 2 dollars.", "Boats pay", "5 dollars.", "Plan | Price", "Lite | 10"]
