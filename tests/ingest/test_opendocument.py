"""OpenDocument texts, spreadsheets and presentations (convrag/ingest/opendocument.py)."""

import re
from pathlib import Path

import pytest

from convrag.errors import DataFormatError
from convrag.ingest.documents import read_document
from tests.ingest.makers import FIXTURES, ODT_NS, make_odt


def test_an_opendocument_spreadsheet_is_read_as_an_excel_workbook_is(tmp_path: Path) -> None:
    """An .ods (LibreOffice Calc's own format) was "not read ... of other types". A cell or a row
    repeated is one element: a sheet's unused columns and rows are one each, repeated a million
    times, and read once; a filled cell repeated is read as many times; a hidden sheet is left out."""
    import zipfile

    ns = ODT_NS + ' xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"'

    def cells(*texts: str, repeat: int = 1) -> str:
        repeated = f' table:number-columns-repeated="{repeat}"' if repeat > 1 else ""
        return "".join(f"<table:table-cell{repeated}>" + (f"<text:p>{t}</text:p>" if t else "") + "</table:table-cell>"
                       for t in texts)

    rows = (f"<table:table-row>{cells('Plan', 'Price', 'Storage')}{cells('', repeat=16381)}</table:table-row>"
            f"<table:table-row>{cells('Lite')}{cells('Free', repeat=2)}{cells('', repeat=16381)}</table:table-row>"
            f'<table:table-row table:number-rows-repeated="1048570">{cells("", repeat=16384)}</table:table-row>')
    body = (f'<table:table table:name="Prices 2025">{rows}</table:table>'
            f'<table:table table:name="Sheet2"><table:table-row>{cells("Plan", "Note")}</table:table-row>'
            f'<table:table-row>{cells("Pro", "Best value")}</table:table-row></table:table>'
            f'<table:table table:name="Old" table:style-name="ta2"><table:table-row>{cells("Gone")}</table:table-row></table:table>')
    with zipfile.ZipFile(tmp_path / "prices.ods", "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        package.writestr("content.xml", f'<?xml version="1.0"?><office:document-content {ns}><office:automatic-styles>'
                                        '<style:style style:name="ta2" style:family="table"><style:table-properties table:display="false"/>'
                                        '</style:style></office:automatic-styles><office:body><office:spreadsheet>'
                                        f'{body}</office:spreadsheet></office:body></office:document-content>')
    document = read_document(tmp_path / "prices.ods")
    assert document.text == ("Prices 2025\nPlan: Lite | Price: Free | Storage: Free\n\n"  # "Sheet2" names nothing
                             "Plan: Pro | Note: Best value")
    assert document.title == "prices"
    # a row of a thousand filled cells repeated a thousand times, in a few kilobytes: refused, not read to gigabytes
    bomb = (f'<table:table table:name="A"><table:table-row table:number-rows-repeated="1000">'
            f'{cells("x" * 100, repeat=1000) * 3}</table:table-row></table:table>')
    with zipfile.ZipFile(tmp_path / "bomb.ods", "w") as package:
        package.writestr("content.xml", f'<?xml version="1.0"?><office:document-content {ns}><office:body><office:spreadsheet>'
                                        f'{bomb}</office:spreadsheet></office:body></office:document-content>')
    with pytest.raises(DataFormatError, match=r"bomb.ods: not read: it holds more than 2,000,000 filled cells"):
        read_document(tmp_path / "bomb.ods")
    with zipfile.ZipFile(tmp_path / "prices.ods") as package, zipfile.ZipFile(tmp_path / "text.ods", "w") as text:
        text.writestr("content.xml", package.read("content.xml").replace(b"office:spreadsheet", b"office:text"))
    with pytest.raises(DataFormatError, match="text.ods: not a readable OpenDocument spreadsheet: it holds no spreadsheet body"):
        read_document(tmp_path / "text.ods")


def test_an_opendocument_presentations_shapes_are_read_in_reading_order(tmp_path: Path) -> None:
    """Frames were read in the order the file keeps them (the order they were drawn in), and a
    shape's own text (a labelled box) and a group's were not read at all. They are read as a
    deck's shapes are: top to bottom, side by side a column at a time; the notes come last."""
    import zipfile

    ns = (ODT_NS + ' xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"'
          ' xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"')

    def frame(text: str, x: str, y: str, width: str = "8cm", height: str = "2cm", cls: str = "") -> str:
        kind = f' presentation:class="{cls}"' if cls else ""
        return (f'<draw:frame svg:x="{x}" svg:y="{y}" svg:width="{width}" svg:height="{height}"{kind}>'
                f"<draw:text-box><text:p>{text}</text:p></draw:text-box></draw:frame>")

    page = ('<draw:page draw:name="page1">'
            + frame("Prices from 1 May.", "1cm", "15cm", width="20cm", height="1cm")  # drawn first, at the foot
            + frame("Moorings are paid at the office.", "1cm", "4cm")
            + '<draw:custom-shape svg:x="1cm" svg:y="6.5cm" svg:width="8cm" svg:height="2cm"><text:p>Cash is not taken.</text:p>'
              '</draw:custom-shape>'
            + f'<draw:g>{frame("Kayaks pay 12 dollars.", "100mm", "1.5in", height="6cm")}</draw:g>'  # beside them, a little higher
            + frame("Fees", "1cm", "1cm", width="20cm", cls="title")
            + '<presentation:notes><draw:frame><draw:text-box><text:p>Say the prices twice.</text:p></draw:text-box></draw:frame>'
              "</presentation:notes></draw:page>")
    with zipfile.ZipFile(tmp_path / "fees.odp", "w") as package:
        package.writestr("content.xml", f'<?xml version="1.0"?><office:document-content {ns}><office:body><office:presentation>'
                                        f"{page}</office:presentation></office:body></office:document-content>")
    document = read_document(tmp_path / "fees.odp")
    assert document.text.split("\n") == ["Fees", "Moorings are paid at the office.", "Cash is not taken.", "Kayaks pay 12 dollars.",
                                         "Prices from 1 May.", "Say the prices twice."]
    assert (document.title, [h.text for h in document.headings]) == ("Fees", ["Fees"])


def test_an_opendocument_presentation_reads_as_the_powerpoint_deck_it_was_saved_from() -> None:
    """An .odp (LibreOffice Impress's own format) was "not read ... of other types". LibreOffice's
    .odp of pandoc's PowerPoint deck reads as the deck: the same lines, title and slide titles."""
    deck = read_document(FIXTURES / "made_by_pandoc" / "heatpump-manual.pptx")
    odp = read_document(FIXTURES / "made_by_libreoffice" / "heatpump-manual.odp")
    # but for its table's column names: the deck's table has PowerPoint's "Header Row" on, which LibreOffice
    # 7.4 did not carry into the .odp (no table:use-first-row-styles), so there its first row is data
    unnamed = re.sub(r"Property: (.*) \| Value: ", r"\1 | ", deck.text).replace("Heating capacity", "Property | Value\nHeating capacity", 1)
    assert unnamed != deck.text and "Property: COP at A7/W35 | Value: 4.9" in deck.text
    assert (odp.text, odp.title, odp.headings) == (unnamed, deck.title, deck.headings)
    assert odp.text.startswith("Solenne HX-9 Air-to-Water Heat Pump: Owner\u2019s Manual\nThis manual covers")
    assert odp.text.count("\n\n") == 1 and "Heating capacity at A7/W35 | 9.1 kW" in odp.text  # two slides; the table's rows


def test_an_opendocument_text_is_read_as_a_word_document_is(tmp_path: Path) -> None:
    """An .odt (LibreOffice's, Google Docs' export) was "not read ... of other types"."""
    body = (
        '<text:tracked-changes><text:changed-region><text:deletion><text:p>thirty</text:p></text:deletion></text:changed-region></text:tracked-changes>'
        '<text:table-of-content><text:index-body><text:p>Fees ..... 1</text:p></text:index-body></text:table-of-content>'
        '<text:h text:outline-level="1">Fees</text:h>'
        '<text:p>Moorings cost <text:span>40</text:span> dollars<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation>'
        '<text:note-body><text:p>Boats under 12 metres.</text:p></text:note-body></text:note> a<text:s text:c="3"/>night.'
        '<office:annotation><text:p>Check this price.</text:p></office:annotation><text:line-break/>Pay at the office.</text:p>'
        '<text:list><text:list-item><text:p>Kayaks pay 5 dollars.</text:p></text:list-item></text:list>'
        '<table:table><table:table-header-rows><table:table-row><table:table-cell><text:p>Plan</text:p></table:table-cell>'
        '<table:table-cell><text:p>Price</text:p></table:table-cell></table:table-row></table:table-header-rows>'
        '<table:table-row><table:table-cell><text:p>Lite</text:p></table:table-cell><table:table-cell><text:p>Free</text:p></table:table-cell>'
        '<table:table-cell table:number-columns-repeated="3"/></table:table-row></table:table>'
        '<table:table><table:table-row><table:table-cell><text:p>Name</text:p></table:table-cell>'
        '<table:table-cell><text:p>Harbour office</text:p></table:table-cell></table:table-row></table:table>'
        '<table:table table:use-first-row-styles="true"><table:table-row><table:table-cell><text:p>Boat</text:p></table:table-cell>'
        '</table:table-row><table:table-row><table:table-cell><text:p>Kayak</text:p></table:table-cell></table:table-row></table:table>'
        '<text:p>See the map.<draw:frame><draw:text-box><text:p>Open 7am to 7pm.</text:p></draw:text-box></draw:frame></text:p>'
    )
    doc = read_document(make_odt(tmp_path / "fees.odt", body, title="Harbour fees"))
    assert doc.title == "Harbour fees"
    assert doc.text.split("\n") == [
        "Fees", "Moorings cost 40 dollars a night. Pay at the office.", "Kayaks pay 5 dollars.",
        "Plan: Lite | Price: Free", "Name | Harbour office",  # a table that marks no header rows is not named
        "Boat: Kayak",  # one whose template sets its first row apart (Impress's "Header row") is
        "See the map.", "Open 7am to 7pm.", "Boats under 12 metres.",
    ]
    # without a title of its own (or with the one an authoring tool wrote), its first heading names it
    assert read_document(make_odt(tmp_path / "untitled.odt", '<text:h>Kayak rules</text:h><text:p>Text.</text:p>')).title == "Kayak rules"
    assert read_document(make_odt(tmp_path / "u.odt", '<text:h>Kayak rules</text:h><text:p>Text.</text:p>', title="Untitled")).title == "Kayak rules"


def test_a_damaged_opendocument_text_says_what_is_wrong(tmp_path: Path) -> None:
    import zipfile

    # a count of spaces that is no number, or a billion, is a space (it was int() of it, and a string that long)
    odd = make_odt(tmp_path / "odd.odt", '<text:p>Moorings<text:s text:c="many"/>cost<text:s text:c="1000000000"/>40 dollars.</text:p>')
    assert read_document(odd).text == "Moorings cost 40 dollars."

    with zipfile.ZipFile(tmp_path / "empty.odt", "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.text")
    with pytest.raises(DataFormatError, match="not a readable OpenDocument text: it has no content.xml"):
        read_document(tmp_path / "empty.odt")
    with zipfile.ZipFile(tmp_path / "sheet.odt", "w") as package:  # a spreadsheet renamed
        package.writestr("content.xml", f'<office:document-content {ODT_NS}><office:body><office:spreadsheet/></office:body></office:document-content>')
    with pytest.raises(DataFormatError, match="holds no text body"):
        read_document(tmp_path / "sheet.odt")
    with zipfile.ZipFile(tmp_path / "cut.odt", "w") as package:
        package.writestr("content.xml", f'<office:document-content {ODT_NS}><office:body><office:text><text:p>Moor')
    with pytest.raises(DataFormatError, match="damaged XML"):
        read_document(tmp_path / "cut.odt")
