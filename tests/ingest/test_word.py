"""Word documents (convrag/ingest/word.py)."""

from collections.abc import Callable
from pathlib import Path

import pytest

from convrag.errors import DataFormatError
from convrag.ingest import packages
from convrag.ingest.documents import iter_documents, read_document


def test_word_documents_keep_paragraphs_tables_and_title(tmp_path: Path) -> None:
    """A .docx, the commonest office document, was not read at all ("not read ... .docx (1)")."""
    import docx

    word = docx.Document()
    word.add_heading("Harbour rules", 1)
    word.add_paragraph("Boats may   moor in the east harbour from April to October.")
    table = word.add_table(rows=2, cols=2)
    for (row, col), text in {(0, 0): "Permit", (0, 1): "Price", (1, 0): "Mooring", (1, 1): "120 euros"}.items():
        table.cell(row, col).text = text
    word.add_paragraph("Kayaks need no permit.")
    word.save(tmp_path / "harbour.docx")
    doc = read_document(tmp_path / "harbour.docx")
    assert doc.title == "Harbour rules" and doc.doc_id == "harbour"
    # in reading order, the table between the paragraphs it stands between, a row to a line
    assert doc.text == ("Harbour rules\nBoats may moor in the east harbour from April to October.\nPermit | Price\n"
                        "Mooring | 120 euros\nKayaks need no permit.")
    word.core_properties.title = "Rules of the east harbour"  # the document's own title comes first
    word.save(tmp_path / "titled.docx")
    assert read_document(tmp_path / "titled.docx").title == "Rules of the east harbour"
    word.core_properties.title = "Document1"  # a template's, not the author's: the first heading is the title
    word.save(tmp_path / "templated.docx")
    assert read_document(tmp_path / "templated.docx").title == "Harbour rules"
    untitled = docx.Document()
    untitled.add_paragraph("Just a line.")
    untitled.save(tmp_path / "berth_list.docx")
    assert read_document(tmp_path / "berth_list.docx").title == "berth list"


W_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


#: a paragraph whose text box Word writes twice: as DrawingML, and again as VML for older readers
TEXT_BOX = (f'<w:p {W_NS} xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" xmlns:v="urn:schemas-microsoft-com:vml">'
            '<w:r><w:t>See the box.</w:t></w:r><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wps:txbx '
            'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><w:txbxContent><w:p><w:r>'
            '<w:t>Fuel is sold at the pier.</w:t></w:r></w:p></w:txbxContent></wps:txbx></w:drawing></mc:Choice><mc:Fallback>'
            '<w:pict><v:shape><v:textbox><w:txbxContent><w:p><w:r><w:t>Fuel is sold at the pier.</w:t></w:r></w:p>'
            '</w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>')


FOOTNOTES = (f'<w:footnotes {W_NS}><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
             '<w:footnote w:id="1"><w:p><w:r><w:t>Prices include tax.</w:t></w:r></w:p></w:footnote></w:footnotes>')


def _with_footnotes(path: Path) -> None:
    """``path`` (a python-docx document, which cannot write notes) given a footnotes part, as Word writes one."""
    import zipfile

    parts = {}
    with zipfile.ZipFile(path) as package:
        for name in package.namelist():
            parts[name] = package.read(name)
    parts["word/footnotes.xml"] = FOOTNOTES.encode()
    parts["[Content_Types].xml"] = parts["[Content_Types].xml"].replace(b"</Types>", (
        b'<Override PartName="/word/footnotes.xml" ContentType="application/vnd.openxmlformats-officedocument.'
        b'wordprocessingml.footnotes+xml"/></Types>'))
    parts["word/_rels/document.xml.rels"] = parts["word/_rels/document.xml.rels"].replace(b"</Relationships>", (
        b'<Relationship Id="rIdNotes" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes" '
        b'Target="footnotes.xml"/></Relationships>'))
    with zipfile.ZipFile(path, "w") as package:
        for name, data in parts.items():
            package.writestr(name, data)


def test_word_text_in_tracked_changes_content_controls_text_boxes_merged_cells_and_notes_is_read(tmp_path: Path) -> None:
    """python-docx's paragraphs hold plain runs and links only: a document under review read "Moorings
    cost dollars." (its tracked insertion "40" gone), a template's content controls and a text box
    were not read at all, and its footnotes neither."""
    import docx
    from lxml import etree

    word = docx.Document()
    body = word.element.body
    for xml in (
        f'<w:p {W_NS}><w:r><w:t xml:space="preserve">Moorings cost </w:t></w:r><w:del w:id="1" w:author="a"><w:r>'
        '<w:delText>30</w:delText></w:r></w:del><w:ins w:id="2" w:author="a"><w:r><w:t>40</w:t></w:r></w:ins><w:r>'
        '<w:t xml:space="preserve"> dollars</w:t></w:r><w:r><w:tab/><w:t>a night.</w:t></w:r></w:p>',
        f'<w:p {W_NS}><w:r><w:t xml:space="preserve">Ramp fee: </w:t></w:r><w:sdt><w:sdtContent><w:r><w:t>12 dollars</w:t>'
        '</w:r></w:sdtContent></w:sdt></w:p>',
        f'<w:sdt {W_NS}><w:sdtPr/><w:sdtContent><w:p><w:r><w:t>Harbour office, 2025</w:t></w:r></w:p></w:sdtContent></w:sdt>',
        TEXT_BOX,
    ):
        body.insert(len(body) - 1, etree.fromstring(xml))  # before the section properties, which end a body
    table = word.add_table(rows=3, cols=3)
    for (row, col), text in {(0, 0): "Boat", (0, 1): "Spring", (0, 2): "Summer", (1, 0): "Yacht", (1, 1): "40",
                             (1, 2): "45", (2, 1): "40", (2, 2): "40"}.items():
        table.cell(row, col).text = text
    table.cell(1, 0).merge(table.cell(2, 0))  # "Yacht" merged down two rows
    repeating = etree.fromstring(f'<w:sdt {W_NS}><w:sdtContent><w:tr><w:tc><w:p><w:r><w:t>Kayak</w:t></w:r></w:p></w:tc>'
                                 '<w:tc><w:p><w:r><w:t>12</w:t></w:r></w:p></w:tc></w:tr></w:sdtContent></w:sdt>')
    table._tbl.append(repeating)  # a repeating section's row: the rows of a content control
    word.save(tmp_path / "fees.docx")
    _with_footnotes(tmp_path / "fees.docx")
    assert read_document(tmp_path / "fees.docx").text == (
        "Moorings cost 40 dollars a night.\nRamp fee: 12 dollars\nHarbour office, 2025\nSee the box.\n"
        "Fuel is sold at the pier.\nBoat | Spring | Summer\nYacht | 40 | 45\nYacht | 40 | 40\nKayak | 12\nPrices include tax.")


def test_a_word_table_whose_first_row_is_marked_as_its_heading_names_each_cell(tmp_path: Path) -> None:
    """A row repeated atop each page ("Repeat as header row") names its columns, as an HTML row of th cells does."""
    import docx
    from docx.oxml import OxmlElement

    word = docx.Document()
    table = word.add_table(rows=3, cols=2)
    for (row, col), text in {(0, 0): "Permit", (0, 1): "Price", (1, 0): "Mooring", (1, 1): "120 euros", (2, 0): "Kayak",
                             (2, 1): "12 euros"}.items():
        table.cell(row, col).text = text
    word.save(tmp_path / "unmarked.docx")
    table.rows[0]._tr.get_or_add_trPr().append(OxmlElement("w:tblHeader"))
    word.save(tmp_path / "marked.docx")
    assert read_document(tmp_path / "unmarked.docx").text == "Permit | Price\nMooring | 120 euros\nKayak | 12 euros"
    assert read_document(tmp_path / "marked.docx").text == "Permit: Mooring | Price: 120 euros\nPermit: Kayak | Price: 12 euros"


def test_a_word_document_s_heading_is_found_by_its_style_far_down(tmp_path: Path) -> None:
    """The first Title or Heading 1 paragraph titles an untitled document wherever it stands. (Each
    paragraph's style was once looked up by python-docx's search of every style: 90 of the 100 seconds
    a 56,000-paragraph document took to read; paragraphs are now read from the XML, their style by its id.)"""
    import docx

    word = docx.Document()
    for i in range(300):
        word.add_paragraph(f"Berth {i} is free on Mondays.")
    word.add_heading("Harbour rules", 1)  # the first Heading 1, well down the document
    word.add_heading("Winter rules", 1)
    word.save(tmp_path / "berths.docx")
    doc = read_document(tmp_path / "berths.docx")
    assert doc.title == "Harbour rules" and doc.text.count("\n") == 301


@pytest.mark.parametrize("part, damage", [
    ("word/document.xml", lambda xml: xml[: len(xml) // 2]),  # cut short: lxml's XMLSyntaxError
    ("[Content_Types].xml", lambda xml: xml.replace(b"core-properties+xml", b"core-propertie+xml")),  # AttributeError
], ids=["xml-cut-short", "wrong-content-type"])
def test_a_damaged_word_package_is_skipped_with_its_reason(tmp_path: Path, part: str, damage: Callable[[bytes], bytes]) -> None:
    """Damaged parts raised lxml's and python-docx's own errors, which escaped as tracebacks: one
    such file ended `convrag index` of a folder and failed every file of an upload with it."""
    import zipfile

    import docx

    word = docx.Document()
    word.add_paragraph("Boats may moor in the east harbour.")
    word.save(tmp_path / "good.docx")
    with zipfile.ZipFile(tmp_path / "good.docx") as good, zipfile.ZipFile(tmp_path / "bad.docx", "w") as bad:
        for name in good.namelist():
            bad.writestr(name, damage(good.read(name)) if name == part else good.read(name))
    with pytest.raises(DataFormatError, match="bad.docx: not a readable Word document"):
        read_document(tmp_path / "bad.docx")
    skipped: list[str] = []
    assert [d.doc_id for d in iter_documents(tmp_path, skipped=skipped)] == ["good"]
    assert len(skipped) == 1 and skipped[0].startswith("bad.docx: not a readable Word document")


def test_a_word_package_that_unpacks_to_too_much_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A .docx is a zip package: a 375 KB upload held 100 MB of paragraphs, which python-docx read
    whole while the indexing job stayed busy for over ten minutes."""
    import zipfile

    import docx

    word = docx.Document()
    word.add_paragraph("Moorings cost forty dollars a night. " * 2000)
    word.save(tmp_path / "big.docx")
    with zipfile.ZipFile(tmp_path / "big.docx") as package:
        xml = sum(p.file_size for p in package.infolist() if p.filename.endswith((".xml", ".rels")))
    assert (tmp_path / "big.docx").stat().st_size < xml  # it unpacks to more than it is
    monkeypatch.setattr(packages, "MAX_DOCX_XML_BYTES", xml - 1)
    with pytest.raises(DataFormatError, match=r"big\.docx: not read: it unpacks to .* MB of XML and .* more than a Word document is read to"):
        read_document(tmp_path / "big.docx")
    monkeypatch.setattr(packages, "MAX_DOCX_XML_BYTES", xml)
    assert read_document(tmp_path / "big.docx").text.startswith("Moorings cost forty dollars a night.")
    with zipfile.ZipFile(tmp_path / "big.docx") as package:
        ratio = sum(p.file_size for p in package.infolist()) / (tmp_path / "big.docx").stat().st_size
    monkeypatch.setattr(packages, "MAX_DOCX_BYTES", xml - 1)  # all the parts together: past the size, the ratio decides
    monkeypatch.setattr(packages, "MAX_DOCX_RATIO", ratio + 1)  # pictures, stored compressed, unpack to about their size
    assert read_document(tmp_path / "big.docx").text
    monkeypatch.setattr(packages, "MAX_DOCX_RATIO", ratio - 1)
    with pytest.raises(DataFormatError, match="not read: it unpacks to"):
        read_document(tmp_path / "big.docx")


def test_a_word_package_whose_main_part_is_no_document_is_named(tmp_path: Path) -> None:
    import zipfile

    word = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
    with zipfile.ZipFile(Path(__file__).parent / "made_by_pandoc/heatpump-manual.docx") as source, \
            zipfile.ZipFile(tmp_path / "odd.docx", "w") as odd:
        for item in source.infolist():
            data = source.read(item)
            odd.writestr(item, data.replace(word.encode(), b"application/vnd.example.glossary+xml") if item.filename == "[Content_Types].xml" else data)
    with pytest.raises(DataFormatError, match=r"odd.docx: not a readable Word document \(its main part \(application/vnd.example.glossary\+xml\) is no document"):
        read_document(tmp_path / "odd.docx")


def test_a_word_tables_header_row_is_the_one_its_design_sets_apart(tmp_path: Path) -> None:
    """Few Word tables mark their first row "Repeat as header row", so nearly every table was read bare
    ("Day pass | 12 | 15"). A table design that formats the first row apart, with its "Header Row" option
    on, shows that row as the headings; the plain "Table Grid", or a design with the option off, does not."""
    import docx
    from docx.oxml.ns import qn

    document = docx.Document()
    for style, header in (("Light Grid Accent 1", True), ("Table Grid", True), ("Light Grid Accent 1", False)):
        table = document.add_table(rows=2, cols=2)
        table.style = style
        table._tbl.tblPr.find(qn("w:tblLook")).set(qn("w:firstRow"), "1" if header else "0")
        for r, row in enumerate([("Plan", "Summer"), ("Day pass", "15")]):
            for c, text in enumerate(row):
                table.cell(r, c).text = text
    document.save(str(tmp_path / "fees.docx"))
    assert read_document(tmp_path / "fees.docx").text.split("\n") == [
        "Plan: Day pass | Summer: 15", "Plan | Summer", "Day pass | 15", "Plan | Summer", "Day pass | 15"]
