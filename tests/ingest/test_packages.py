"""Office packages: what is no package, macro-enabled files, templates, slide shows (convrag/ingest/packages.py)."""

from pathlib import Path

import pytest

from convrag.errors import DataFormatError
from convrag.ingest.documents import read_document


@pytest.mark.parametrize(("suffix", "what"), [
    (".docx", r"Word document \(not a .docx package; an old Word 97-2003 file is read as .doc\)"),
    (".pptx", r"PowerPoint deck \(not a .pptx package; an old PowerPoint 97-2003 file is read as .ppt\)"),
    (".xlsx", r"Excel workbook \(not an .xlsx package; an old Excel 97-2003 file is read as .xls\)"),
])
@pytest.mark.parametrize("content", [b"\xd0\xcf\x11\xe0 an older binary file renamed", b"PK\x03\x04 a package cut short"],
                         ids=["renamed", "cut-short"])
def test_an_office_file_that_is_no_package_is_refused_naming_the_format_to_save_it_in(tmp_path: Path, suffix: str, what: str,
                                                                                     content: bytes) -> None:
    (tmp_path / f"file{suffix}").write_bytes(content)
    with pytest.raises(DataFormatError, match=f"file\\{suffix}: not a readable {what}"):
        read_document(tmp_path / f"file{suffix}")


_PANDOC_DECK = "made_by_pandoc/heatpump-manual.pptx"


_SHOW_TYPES = {".ppsx": "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml",
               ".potx": "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml"}


@pytest.mark.parametrize("name, like", [
    ("made_by_libreoffice/heatpump-manual.docm", "made_by_pandoc/heatpump-manual.docx"),
    ("made_by_libreoffice/heatpump-manual.dotx", "made_by_pandoc/heatpump-manual.docx"),
    ("made_by_libreoffice/harbour-prices.xlsm", "made_by_libreoffice/harbour-prices.xls"),
    *((suffix, _PANDOC_DECK) for suffix in _SHOW_TYPES),
])
def test_a_macro_enabled_package_a_template_or_a_slide_show_reads_as_its_document(tmp_path: Path, name: str, like: str) -> None:
    """A .docm, .dotx, .xlsm or .ppsx was "not a type convrag reads", and python-docx and python-pptx refuse
    a package whose main part is a macro-enabled document's, a template's or a slide show's. A slide show
    is the deck with its main part's content type changed, as PowerPoint saves one (LibreOffice's .ppsx keeps
    the deck's)."""
    import zipfile

    folder = Path(__file__).parent
    if name in _SHOW_TYPES:
        deck = "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
        with zipfile.ZipFile(folder / like) as source, zipfile.ZipFile(tmp_path / f"show{name}", "w") as show:
            for item in source.infolist():
                data = source.read(item)
                show.writestr(item, data.replace(deck.encode(), _SHOW_TYPES[name].encode()) if item.filename == "[Content_Types].xml" else data)
        path = tmp_path / f"show{name}"
    else:
        path = folder / name
    read, expected = read_document(path), read_document(folder / like)
    assert (read.text, read.title, read.headings) == (expected.text, expected.title, expected.headings)
    assert len(read.text) > 150
