"""PowerPoint decks (convrag/ingest/powerpoint.py)."""

from collections.abc import Callable
from pathlib import Path

import pytest

from convrag.errors import DataFormatError
from convrag.ingest import packages
from convrag.ingest.documents import read_document
from tests.ingest.makers import make_deck


def test_powerpoint_decks_are_read_slide_by_slide_with_tables_groups_and_notes(tmp_path: Path) -> None:
    """A .pptx, with .docx the commonest office document in a team's folder, was skipped ("not read ... .pptx (1)")."""
    doc = read_document(make_deck(tmp_path / "fees.pptx", title="PowerPoint Presentation"))
    # the title: PowerPoint's default names nothing, so the first slide's title; a blank line parts the slides;
    # each slide's title first, its shapes top to bottom, a table's row a line, then its notes; no footer
    assert (doc.title, doc.doc_id) == ("Harbour fees 2025", "fees")
    assert doc.text == ("Harbour fees 2025\nMoorings and ramps\n\nMoorings\nDraft\nKayaks pay 12 dollars a night\n"
                        "Yachts pay 40 dollars a night\nPlan: Season pass | Spring: 300 | Summer: 300\nPlan: Day pass | Spring: 12 | "
                        "Summer: 15\nPlan: Day pass | Spring: 10 | Summer: 10\nRamps open at 6\n"
                        "Fees rise by 5 percent in spring.")
    assert read_document(make_deck(tmp_path / "own.pptx", title="Harbour fee schedule")).title == "Harbour fee schedule"


def test_a_slides_table_is_named_by_its_header_row_only_where_it_has_one(tmp_path: Path) -> None:
    """A table's rows were read as bare cells ("Day pass | 12 | 15"): a row read alone, as a passage or
    a sentence the answer's compression keeps, did not say which figure was the summer's. PowerPoint's
    "Header Row" option (on for a new table) marks the first row as the columns' names; a table with it
    off (a key and value table) keeps its first row as data."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])  # blank
    for top, header, rows in ((0, True, [["Plan", "Summer"], ["Day pass", "15"]]), (3, False, [["Owner", "Ann Lee"], ["Berth", "B12"]])):
        table = slide.shapes.add_table(2, 2, Inches(1), Inches(1 + top), Inches(4), Inches(1)).table
        table.first_row = header
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                table.cell(r, c).text = text
    deck.save(str(tmp_path / "fees.pptx"))
    assert read_document(tmp_path / "fees.pptx").text.split("\n") == ["Plan: Day pass | Summer: 15", "Owner | Ann Lee", "Berth | B12"]


def test_a_slides_columns_are_read_one_at_a_time(tmp_path: Path) -> None:
    """A slide with its text on the left and a table beside it that begins a little higher (PowerPoint's
    "Content with Caption" layout; pandoc lays a slide with a table out so) was read the table first,
    and a text in two columns row by row, its sentences interleaved."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])  # a title only
    slide.shapes.title.text = "Fees"
    slide.shapes.add_textbox(Inches(0.5), Inches(2.0), Inches(3), Inches(1)).text_frame.text = "Moorings are paid at the office."
    slide.shapes.add_textbox(Inches(0.5), Inches(3.1), Inches(3), Inches(1)).text_frame.text = "Cash is not taken."
    table = slide.shapes.add_table(2, 2, Inches(4), Inches(1.8), Inches(5), Inches(3)).table
    for (row, col), text in {(0, 0): "Boat", (0, 1): "Fee", (1, 0): "Kayak", (1, 1): "12 dollars"}.items():
        table.cell(row, col).text = text
    slide.shapes.add_textbox(Inches(0.5), Inches(6), Inches(9), Inches(0.5)).text_frame.text = "Prices from 1 May."  # below both
    deck.save(tmp_path / "columns.pptx")
    assert read_document(tmp_path / "columns.pptx").text.split("\n") == [
        "Fees", "Moorings are paid at the office.", "Cash is not taken.", "Boat: Kayak | Fee: 12 dollars", "Prices from 1 May."]


@pytest.mark.parametrize("part, damage", [
    ("ppt/slides/slide2.xml", lambda xml: xml[: len(xml) // 2]),  # cut short: lxml's XMLSyntaxError
    ("[Content_Types].xml", lambda xml: xml.replace(b"slide+xml", b"slid+xml")),  # python-pptx's AttributeError
], ids=["xml-cut-short", "wrong-content-type"])
def test_a_damaged_or_too_large_powerpoint_deck_is_refused_with_its_reason(tmp_path: Path, part: str, damage: Callable[[bytes], bytes],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import zipfile

    make_deck(tmp_path / "good.pptx")
    with zipfile.ZipFile(tmp_path / "good.pptx") as good, zipfile.ZipFile(tmp_path / "bad.pptx", "w") as bad:
        for name in good.namelist():
            bad.writestr(name, damage(good.read(name)) if name == part else good.read(name))
    with pytest.raises(DataFormatError, match=r"bad\.pptx: not a readable PowerPoint deck \(.+\)"):
        read_document(tmp_path / "bad.pptx")
    monkeypatch.setattr(packages, "MAX_DOCX_XML_BYTES", 1000)  # a deck is an Office package as a Word document is
    with pytest.raises(DataFormatError, match=r"good\.pptx: not read: it unpacks to .* more than a PowerPoint deck is read to"):
        read_document(tmp_path / "good.pptx")
