"""EPUB books (convrag/ingest/epub.py)."""

from pathlib import Path

import pytest

from convrag.errors import DataFormatError
from convrag.ingest.documents import read_document
from tests.ingest.makers import make_epub


def test_an_epub_book_is_read_page_by_page_in_reading_order(tmp_path: Path) -> None:
    """An EPUB was "not read ... of other types"; the service refused it as not text."""
    pages = {"ch2.xhtml": "<h1>Fees</h1><p>Moorings cost 40 dollars a night.</p>",
             "ch1.xhtml": "<h1>Arriving</h1><p>Call the harbour office on channel 12.</p>",
             "notes.xhtml": "<p>A footnote read apart.</p>",
             "blank.xhtml": "<p> </p>"}
    book = make_epub(tmp_path / "harbour.epub", pages, ["ch1.xhtml", "blank.xhtml", "ch2.xhtml", "notes.xhtml:no"], title="The Harbour Book")
    doc = read_document(book)
    assert doc.title == "The Harbour Book"
    assert doc.text == "Arriving\nCall the harbour office on channel 12.\n\nFees\nMoorings cost 40 dollars a night."
    # a package file at the zip's root, and a book without a title: its file name names it
    root = make_epub(tmp_path / "guide_book.epub", {"a b.xhtml": "<p>Kayaks pay less.</p>"}, ["a b.xhtml"], opf="content.opf")
    assert (read_document(root).title, read_document(root).text) == ("guide book", "Kayaks pay less.")
    # LibreOffice's EPUB export (libepubgen) writes "Unknown Title" for a document without one: that names nothing
    placeholder = make_epub(tmp_path / "rules.epub", {"a.xhtml": "<h1>Harbour rules</h1><p>Kayaks pay less.</p>"}, ["a.xhtml"],
                            title="Unknown Title")
    assert read_document(placeholder).title == "Harbour rules"


def test_a_damaged_epub_says_what_is_wrong(tmp_path: Path) -> None:
    import zipfile

    with zipfile.ZipFile(tmp_path / "nocontainer.epub", "w") as book:
        book.writestr("mimetype", "application/epub+zip")
    with pytest.raises(DataFormatError, match="not a readable EPUB book: there is no item named 'META-INF/container.xml'"):
        read_document(tmp_path / "nocontainer.epub")
    missing = make_epub(tmp_path / "missing.epub", {"a.xhtml": "<p>Text.</p>"}, ["a.xhtml"], named="OEBPS/gone.opf")
    with pytest.raises(DataFormatError, match="no item named 'OEBPS/gone.opf'"):
        read_document(missing)
    (tmp_path / "text.epub").write_text("not a zip at all")
    with pytest.raises(DataFormatError, match="not a readable EPUB book"):
        read_document(tmp_path / "text.epub")
