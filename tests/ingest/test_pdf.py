"""PDFs: text layer, title, bookmarks, forms, bounds (convrag/ingest/pdf.py)."""

import logging
import re
from pathlib import Path

import pytest

from convrag.errors import DataFormatError
from convrag.ingest import pdf
from convrag.ingest.documents import iter_documents, read_document
from tests.ingest.makers import pdf_of_pages
from tests.pdfs import make_pdf


def test_pdf_text_layer_and_title(tmp_path: Path) -> None:
    (tmp_path / "fees.pdf").write_bytes(make_pdf(["Passport renewal costs 130 dollars.", "Apply by mail."], title="Passport fees"))
    doc = read_document(tmp_path / "fees.pdf", url="https://example.org/fees")
    assert doc.title == "Passport fees" and doc.url == "https://example.org/fees"
    assert "Passport renewal costs 130 dollars." in doc.text and "Apply by mail." in doc.text


def test_a_pdf_title_wrapped_over_two_lines_is_titled_by_its_bookmark(tmp_path: Path) -> None:
    """LibreOffice's PDF of a manual (no title in its metadata) was titled by its first line, half
    its title: "Solenne HX-9 Air-to-Water Heat Pump: Owners". Its first bookmark says it whole; a
    bookmark the first line does not begin is not taken."""
    lines = ["Solenne HX-9 Air-to-Water Heat Pump: Owners", "Manual", "Keep it near the control box."]
    (tmp_path / "manual.pdf").write_bytes(make_pdf(lines, outline=["Solenne HX-9 Air-to-Water Heat Pump: Owners Manual"]))
    assert read_document(tmp_path / "manual.pdf").title == "Solenne HX-9 Air-to-Water Heat Pump: Owners Manual"
    (tmp_path / "slides.pdf").write_bytes(make_pdf(["Solenne HX-9 Air-to-Water Heat Pump:", "Owners Manual", "Keep it near."],
                                                   outline=["Solenne HX-9 Air-to-Water Heat Pump: Owners Manual"]))
    assert read_document(tmp_path / "slides.pdf").title == "Solenne HX-9 Air-to-Water Heat Pump: Owners Manual"
    (tmp_path / "guide.pdf").write_bytes(make_pdf(lines, outline=["1. Safety"]))
    assert read_document(tmp_path / "guide.pdf").title == "Solenne HX-9 Air-to-Water Heat Pump: Owners"


def test_broken_pdf_is_a_clear_error(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "x.pdf").write_bytes(b"%PDF-1.4 this is not a pdf")
    with caplog.at_level(logging.WARNING), pytest.raises(DataFormatError, match="not a readable PDF"):
        read_document(tmp_path / "x.pdf")
    assert not caplog.records  # the one error names the file; nothing is printed beside it


def test_justified_pdf_text_keeps_its_words_whole(tmp_path: Path) -> None:
    """A justifying writer (groff) widens each space by word spacing (``Tw``) and places a line's
    later words with a move. pypdf measured the words before the move without that spacing, took
    the gap for one between words and cut them: "Keep it near the contr ol box." The font is Courier,
    7.2 points a letter at 12 points, so the move below is exact: 22 letters, and 4 spaces 3 points wider."""
    line = "3 Tw 72 720 Td (Keep it near the contr) Tj 170.4 0 Td (ol box.) Tj"
    (tmp_path / "justified.pdf").write_bytes(make_pdf([], operators=line, font="Courier"))
    assert read_document(tmp_path / "justified.pdf").text == "Keep it near the control box."


def test_a_pdfs_bookmarks_are_its_headings(tmp_path: Path) -> None:
    """A PDF carried no headings into chunking: its passages were cut wherever the count fell and
    titled by the document alone. Its outline (the bookmarks pane) names its sections."""
    lines = ["Fees", "Boats pay 5 dollars a night.", "Kayaks", "Kayaks pay 2 dollars."]
    (tmp_path / "fees.pdf").write_bytes(make_pdf(lines, title="Harbour fees", outline=["Fees", "Kayaks", " "]))
    document = read_document(tmp_path / "fees.pdf")
    assert [(h.level, h.text) for h in document.headings] == [(1, "Fees"), (1, "Kayaks")]  # a blank entry names nothing
    assert document.title == "Harbour fees"


def test_a_pdf_that_cannot_be_opened_is_skipped_with_its_reason(tmp_path: Path) -> None:
    """Damaged files raised far beyond the PDF library's own errors (found by mutating a good one);
    those escaped as tracebacks, ended `convrag index` of a folder and failed every file of an upload."""
    pdf = make_pdf(["Passport renewal costs 130 dollars."])
    (tmp_path / "a.pdf").write_bytes(re.sub(rb"trailer\n<< /Size \d+ ", b"trailer", pdf))  # no trailer dictionary
    (tmp_path / "b.md").write_text("# Fees\n\nRenewal costs 130 dollars.")
    with pytest.raises(DataFormatError, match="a.pdf: not a readable PDF"):
        read_document(tmp_path / "a.pdf")
    skipped: list[str] = []
    assert [d.doc_id for d in iter_documents(tmp_path, skipped=skipped)] == ["b"]
    assert len(skipped) == 1 and skipped[0].startswith("a.pdf: not")
    # a cross-reference table that claims 65,535 entries (pypdf refused it) is repaired and read
    (tmp_path / "a.pdf").write_bytes(re.sub(rb"xref\n0 \d+", b"xref\n0 65535", pdf))
    assert read_document(tmp_path / "a.pdf").text == "Passport renewal costs 130 dollars."
    # a PDF locked by a password says so; one only its owner's password restricts (printing, copying) is read
    import io

    from pypdf import PdfWriter

    for user, name in (("secret", "locked.pdf"), ("", "restricted.pdf")):
        writer = PdfWriter(clone_from=io.BytesIO(pdf))
        writer.encrypt(user, "owner")
        writer.write(str(tmp_path / name))
    with pytest.raises(DataFormatError, match="locked.pdf: not a readable PDF .*password"):
        read_document(tmp_path / "locked.pdf")
    assert read_document(tmp_path / "restricted.pdf").text == "Passport renewal costs 130 dollars."


def test_a_pdf_that_takes_too_long_to_read_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crafted PDF of a few kilobytes can repeat a slow page thousands of times; reading stops at a
    time budget, looked at before each page. The clock is a counter, one tick per look, so the test
    does not depend on this machine's speed."""
    ticks = iter(range(10**6))
    monkeypatch.setattr(pdf, "_clock", lambda: float(next(ticks)))
    words = "moorings kayaks yachts ramps fuel water power showers keys boats laundry parking wifi bins dogs guests tours nets sails oars".split()
    path = pdf_of_pages(tmp_path / "slow.pdf", [[f"The {word} of the fees.", "Paid at the office."] for word in words])
    monkeypatch.setattr(pdf, "MAX_PDF_SECONDS", 1_000.0)
    assert read_document(path).text.count("of the fees") == 20  # the budget is far from spent
    monkeypatch.setattr(pdf, "MAX_PDF_SECONDS", 5.0)  # spent after five pages
    with pytest.raises(DataFormatError, match=r"slow.pdf: not read: its pages took more than 5 s to read"):
        read_document(path)


def test_a_pdf_whose_text_map_gives_half_a_character_is_indexed(tmp_path: Path) -> None:
    """A ToUnicode map can give a lone surrogate (half of a UTF-16 pair), which no passage file can
    hold: `convrag index` ended with a UnicodeEncodeError. A whole pair is joined, half of one is U+FFFD."""
    (tmp_path / "map.pdf").write_bytes(make_pdf(["Fee A, smile BC."], to_unicode={"41": "D800", "42": "D83D", "43": "DE00"}))
    document = read_document(tmp_path / "map.pdf")
    assert document.text == "Fee \ufffd, smile \U0001f600." and document.text.encode("utf-8")


def test_a_filled_pdf_form_reads_with_its_answers(tmp_path: Path) -> None:
    """PDFium's text layer holds a form's printed questions, not what was typed into its fields: a filled
    application read as its blank form. Each answer is a line, named by the field's tooltip, else by the
    last part of its name; ticked boxes say yes; empty fields and unticked boxes are left out."""
    from tests.pdfs import with_form

    pdf = with_form(make_pdf(["Mooring application. Boat name: Owner: Length:"]), [
        {"/FT": "/Tx", "/T": "topmostSubform[0].Page1[0].f1_01[0]", "/TU": "Boat name", "/V": "Sea Swallow"},
        {"/FT": "/Tx", "/T": "form1[0].owner[0]", "/V": "Ann Lee"},
        {"/FT": "/Tx", "/T": "length", "/V": ""},
        {"/FT": "/Btn", "/T": "Winter berth", "/V": "/Yes", "/AS": "/Yes"},
        {"/FT": "/Btn", "/T": "Electricity", "/V": "/Off", "/AS": "/Off"},
    ])
    (tmp_path / "application.pdf").write_bytes(pdf)
    assert read_document(tmp_path / "application.pdf").text.split("\n") == [
        "Mooring application. Boat name: Owner: Length:", "Boat name: Sea Swallow", "owner: Ann Lee", "Winter berth: yes"]
