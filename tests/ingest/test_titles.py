"""A document's title where its metadata gives none that names it (convrag/ingest/titles.py)."""

from pathlib import Path

import pytest

from convrag.ingest.documents import read_document
from tests.pdfs import make_pdf


@pytest.mark.parametrize("metadata, title", [
    ("Microsoft Word - harbour_rules.docx", "harbour rules"),  # Word's PDF printer names the file it printed
    ("C:\\Users\\ann\\Desktop\\berth-fees 2024.doc", "berth fees 2024"),
    ("Microsoft Word - Document1", "scan 0042"), ("Untitled", "scan 0042"), ("Slide 1", "scan 0042"),  # the file's own name
    ("Rules of the east harbour", "Rules of the east harbour"), ("Document management policy", "Document management policy"),
])
def test_a_title_a_tool_wrote_gives_way_to_a_name(tmp_path: Path, metadata: str, title: str) -> None:
    # citations showed "[1] Microsoft Word - Document1"
    (tmp_path / "scan_0042.pdf").write_bytes(make_pdf(["Boats pay 5 dollars a night."], title=metadata))
    assert read_document(tmp_path / "scan_0042.pdf").title == title


@pytest.mark.parametrize(("name", "lines", "title"), [
    # a name a program made: the first line, which a reader sees as the title, names it
    ("2403.12345.pdf", ["Mooring Fees in Small Harbours", "A. Author, B. Author", "Boats pay by the night."], "Mooring Fees in Small Harbours"),
    ("scan0001.pdf", ["Harbour Rules 2025", "Boats pay by the night."], "Harbour Rules 2025"),
    # a first line that is a sentence is no title: the name stays
    ("doc_48213.pdf", ["Boats pay by the night.", "Kayaks pay less."], "doc 48213"),
    # a name a person gave stays the title
    ("harbour_rules.pdf", ["Harbour Rules 2025", "Boats pay by the night."], "harbour rules"),
])
def test_a_pdf_without_a_title_saved_under_a_made_name_is_titled_by_its_first_line(tmp_path: Path, name: str, lines: list[str],
                                                                                    title: str) -> None:
    (tmp_path / name).write_bytes(make_pdf(lines))
    assert read_document(tmp_path / name).title == title


@pytest.mark.parametrize(("name", "text", "title"), [
    # a first line set apart as a title names a file whose name says little
    ("club.txt", "Greenbay Sailing Club membership\n\nFull membership costs 300 dollars a year.\n", "Greenbay Sailing Club membership"),
    ("0042.txt", "  Harbour Rules 2025\n\n\nBoats pay by the night.\nKayaks pay less.\n", "Harbour Rules 2025"),
    # a first line that runs on into the next line is a paragraph's start, not a title
    ("notes.txt", "Moorings are booked at the office\nwhich opens at 7am.\n\nKayaks pay less.\n", "notes"),
    ("notes.txt", "Boats pay by the night.\n\nKayaks pay less.\n", "notes"),  # a sentence is no title
    ("notes.txt", "Harbour Rules\n\n", "notes"),  # a title over nothing: the text is the one line
    # a name a person gave stays the title
    ("harbour_rules.txt", "Harbour Rules 2025\n\nBoats pay by the night.\n", "harbour rules"),
])
def test_a_plain_text_under_a_name_that_says_little_is_titled_by_its_first_line(tmp_path: Path, name: str, text: str,
                                                                                 title: str) -> None:
    (tmp_path / name).write_text(text)
    assert read_document(tmp_path / name).title == title
