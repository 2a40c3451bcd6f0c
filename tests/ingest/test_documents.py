"""Reading any file and a folder of them (convrag/ingest/documents.py): ids, unsupported and
unreadable files named, links, headings across formats, documents other tools made, damaged copies."""

import re
from collections import Counter
from pathlib import Path

import pytest

from convrag.errors import DataFormatError
from convrag.ingest import documents
from convrag.ingest.documents import Heading, iter_documents, read_document
from tests.ingest.makers import FIXTURES, make_deck, make_epub, make_odt, read_damaged_copies
from tests.pdfs import make_pdf


def test_text_and_folder_ids(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "notes_2024.txt").write_text("plain words")
    (tmp_path / "a.md").write_text("no heading here")
    (tmp_path / "skip.bin").write_bytes(b"\x00\x01")
    docs = list(iter_documents(tmp_path))
    assert [d.doc_id for d in docs] == ["a", "sub/notes_2024"]
    assert docs[1].title == "notes 2024" and docs[1].text == "plain words"


def test_unsupported_type(tmp_path: Path) -> None:
    (tmp_path / "x.key").write_bytes(b"PK\x03\x04")  # a Keynote deck
    with pytest.raises(DataFormatError, match="unsupported document type '.key'"):
        read_document(tmp_path / "x.key")


_MANUAL = Path(__file__).parents[2] / "tools" / "data" / "heatpump-manual.md"


@pytest.mark.parametrize("made", ["made_by_pandoc/heatpump-manual.docx", "made_by_pandoc/heatpump-manual.odt",
                                  "made_by_pandoc/heatpump-manual.rst",
                                  "made_by_pandoc/heatpump-manual.epub", "made_by_pandoc/heatpump-manual.rtf",
                                  "made_by_libreoffice/heatpump-manual.rtf", "made_by_libreoffice/heatpump-manual.pdf"])
def test_a_document_made_by_another_tool_reads_as_the_markdown_it_was_made_from(made: str) -> None:
    """Every other reader test builds its file by hand; these files are what pandoc and LibreOffice
    wrote. Pandoc's RTF table came out a cell per line and its headings not at all, nor did
    LibreOffice's (it marks them by style only); the EPUB and the RTFs (no title in their metadata)
    were titled by their file name, "heatpump manual"; the PDF, read by pypdf, had no headings."""
    def plain(text: str) -> str:  # the writers' typographic apostrophe
        return text.replace("\u2019", "'")

    source = read_document(_MANUAL)
    document = read_document(FIXTURES / made)
    assert plain(document.title) == source.title == "Solenne HX-9 Air-to-Water Heat Pump: Owner's Manual"
    assert [(h.level, plain(h.text)) for h in document.headings] == [(h.level, h.text) for h in source.headings]
    assert len(source.headings) == 13
    if made.endswith(".pdf"):  # a page's lines; the table's cells in a row, parted by spaces, its header row on each page
        words = re.sub(r"Property Value\s", "", plain(document.text)).split()
        assert words == [w for w in source.text.split() if w not in ("|", "Property:", "Value:")]
        return
    lines = [plain(line) for line in document.text.split("\n") if line]
    # a table's row is one line; Markdown's rows name each cell by its column, which an RTF may not mark
    assert [line for line in lines if " | " not in line] == [line for line in source.text.split("\n") if " | " not in line]
    rows = [line for line in lines if " | " in line]
    assert len(rows) in (10, 11) and any(line.endswith("Heating capacity at A7/W35 | Value: 9.1 kW")
                                         or line == "Heating capacity at A7/W35 | 9.1 kW" for line in rows)


def test_a_folder_names_the_files_that_hold_no_text(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("# Fees\n\nRenewal costs 130 dollars.")
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "blank.md").write_text("  \n\n")
    (tmp_path / "scan.pdf").write_bytes(make_pdf([""], title="A scanned form"))  # a page with no text layer, and no picture
    skipped: list[str] = []
    counted: list[int] = []
    assert [d.doc_id for d in iter_documents(tmp_path, skipped, advance=counted.append)] == ["good"]
    assert skipped == ["blank.md: no text", "empty.txt: no text",
                       "scan.pdf: no text (no text layer, and no words OCR could read in its pictures)"]
    # a progress bar counts the files before they are read, and each one read or skipped
    assert [p.name for p in documents.document_paths(tmp_path)] == ["blank.md", "empty.txt", "good.md", "scan.pdf"]
    assert counted == [1, 1, 1, 1]


def test_a_link_to_a_document_that_is_gone_is_named(tmp_path: Path) -> None:
    """A link whose target was moved or deleted is not a file, and was passed over without a word."""
    (tmp_path / "good.md").write_text("# Fees\n\nRenewal costs 130 dollars.")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "moved.pdf").symlink_to(tmp_path / "archive" / "moved.pdf")
    (tmp_path / "sub" / "loop").symlink_to(tmp_path)  # a link to a folder above is not walked into, and named
    skipped: list[str] = []
    assert [d.doc_id for d in iter_documents(tmp_path, skipped)] == ["good"]
    assert skipped == [f"sub/loop: a link to {tmp_path.resolve()}, a folder read already",
                       f"sub/moved.pdf: a link to {tmp_path / 'archive' / 'moved.pdf'}, which does not exist"]
    with pytest.raises(DataFormatError, match="moved.pdf: a link to .*, which does not exist"):
        list(iter_documents(tmp_path))


def test_files_of_other_types_are_counted_by_suffix_and_hidden_ones_left_out(tmp_path: Path) -> None:
    """A .key or .json in the folder used to be passed over without a word."""
    (tmp_path / "good.md").write_text("# Fees\n\nRenewal costs 130 dollars.")
    (tmp_path / "form.KEY").write_bytes(b"PK\x03\x04")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.json").write_text("{}")
    (tmp_path / "sub" / "b.json").write_text("{}")
    (tmp_path / "Makefile").write_text("all:")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]")
    (tmp_path / ".DS_Store").write_bytes(b"\0")
    unread: Counter[str] = Counter()
    assert [d.doc_id for d in iter_documents(tmp_path, unread=unread)] == ["good"]
    assert unread == {".key": 1, ".json": 2, "(no suffix)": 1}


def test_a_file_name_that_is_not_utf8_is_read_with_its_bytes_escaped(tmp_path: Path) -> None:
    """A Latin-1 file name (an old archive's) reaches Python as lone surrogates, which cannot be
    encoded: one such file ended `convrag index` of its folder with a UnicodeEncodeError."""
    import json
    import os

    try:
        (Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9 menu.txt"))).write_text("The cafe opens at nine.")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system takes only UTF-8 names")
    (tmp_path / "ok.txt").write_text("The harbour opens at eight.")
    documents = list(iter_documents(tmp_path))
    assert [(d.doc_id, d.title) for d in documents] == [("caf\\xe9 menu", "caf\\xe9 menu"), ("ok", "ok")]
    json.dumps([d.doc_id for d in documents], ensure_ascii=False).encode("utf-8")  # what the index writes
    assert documents[0].url.endswith("/caf%E9%20menu.txt")  # the file's own address, byte for byte
    binary = Path(os.fsdecode(os.fsencode(tmp_path) + b"/bin\xe9.txt"))
    binary.write_bytes(b"\x00\x01\xff" * 50)
    with pytest.raises(DataFormatError) as error:  # and an error names it as the listing does, not as "\udce9"
        read_document(binary)
    assert str(error.value).startswith(f"{tmp_path}/bin\\xe9.txt: not text")


def test_the_documents_of_a_linked_folder_are_read(tmp_path: Path) -> None:
    """rglob passed over a link to a folder: its documents were left out without a word."""
    (tmp_path / "shared" / "fees").mkdir(parents=True)
    (tmp_path / "shared" / "fees" / "boats.txt").write_text("Larger boats pay 60 euros a night.")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "kayaks.txt").write_text("Kayaks need no permit.")
    (tmp_path / "docs" / "linked").symlink_to(tmp_path / "shared")
    (tmp_path / "docs" / "other").symlink_to(tmp_path / "shared")  # the same folder twice is read once
    skipped: list[str] = []
    assert [d.doc_id for d in iter_documents(tmp_path / "docs", skipped)] == ["kayaks", "linked/fees/boats"]
    assert skipped == [f"other: a link to {(tmp_path / 'shared').resolve()}, a folder read already"]


def test_documents_differing_only_in_suffix_keep_their_suffix_in_their_ids(tmp_path: Path) -> None:
    """report.pdf beside report.docx were both document "report": one document to the citations, and
    where two of their passages began and ended alike, the build failed on a duplicate passage id."""
    (tmp_path / "notes.txt").write_text("The harbour opens at eight.")
    (tmp_path / "notes.md").write_text("The harbour shuts at eight.")  # as long: the same passage offsets
    (tmp_path / "fees.md").write_text("Boats pay 60 euros a night.")
    documents = list(iter_documents(tmp_path))
    assert [(d.doc_id, d.title) for d in documents] == [("fees", "fees"), ("notes.md", "notes"), ("notes.txt", "notes")]


def test_a_document_beside_its_source_is_indexed_once_under_its_name(tmp_path: Path) -> None:
    """Node.js's API docs hold each page's Markdown source beside the HTML built from it: indexed twice,
    each passage stood twice in a search's ten. The file whose words the other holds is left out and
    the user told so; the one kept has the name alone for its id. A failed twin leaves its name too."""
    (tmp_path / "fees.md").write_text("# Fees\n\nBoats pay 60 euros a night.\n")
    (tmp_path / "fees.html").write_text("<title>Fees | Harbour</title><h1>Fees<a href='#fees'>#</a></h1>"
                                        "<p>Added in: 2024.</p><p>Boats pay 60 euros a night.</p>")
    (tmp_path / "notes.txt").write_text("The harbour opens at eight.")
    (tmp_path / "notes.md").write_text("The harbour shuts at eight.")  # another document of the same name
    (tmp_path / "rules.md").write_text("No swimming in the harbour.")
    (tmp_path / "rules.pdf").write_bytes(b"not a PDF")
    skipped: list[str] = []
    documents = list(iter_documents(tmp_path, skipped))
    assert [(d.doc_id, d.title) for d in documents] == [("fees", "Fees | Harbour"), ("notes.md", "notes"), ("notes.txt", "notes"),
                                                       ("rules", "rules")]
    assert documents[0].url.endswith("fees.html")
    assert skipped[0] == "fees.md: the same document as fees.html in another format (100% of its words are there), which is indexed"
    assert [line.split(":")[0] for line in skipped] == ["fees.md", "rules.pdf"]
    skipped, twins = [], []
    assert [d.doc_id for d in iter_documents(tmp_path, skipped, twins=twins)] == ["fees", "notes.md", "notes.txt", "rules"]
    assert [(t.left_out.doc_id, t.held_by.doc_id, t.share) for t in twins] == [("fees.md", "fees.html", 1.0)]
    assert [line.split(":")[0] for line in skipped] == ["rules.pdf"]


def test_a_sphinx_builds_source_copies_and_index_pages_are_left_out(tmp_path: Path) -> None:
    """A Sphinx build (the HTML zip Read the Docs offers, unpacked) copies each page's source into _sources and
    makes index pages from the pages: the raw source ("..  module::") stood second in a search's ten."""
    (tmp_path / "searchindex.js").write_text("Search.setIndex({})")
    (tmp_path / "signer.html").write_text("<title>Signing</title><h1>Signing</h1><p>A Signer attaches a signature.</p>")
    (tmp_path / "genindex.html").write_text("<title>Index</title><p>BadSignature Signer</p>")
    (tmp_path / "search.html").write_text("<title>Search</title><p>Please activate JavaScript.</p>")
    (tmp_path / "_sources").mkdir()
    (tmp_path / "_sources" / "signer.rst.txt").write_text(".. module:: signer\n\nSigning\n=======\n\nA :class:`Signer` attaches a signature.\n")
    built: list = []
    assert [d.doc_id for d in iter_documents(tmp_path, [], built=built)] == ["signer"]
    assert sorted(f.path.relative_to(tmp_path).as_posix() for f in built) == ["_sources/signer.rst.txt", "genindex.html", "search.html"]
    assert documents.document_paths(tmp_path) == [tmp_path / "signer.html"]  # what the progress bar counts
    (tmp_path / "searchindex.js").unlink()  # no Sphinx build: each is a page
    assert [d.doc_id for d in iter_documents(tmp_path, [])] == ["_sources/signer.rst", "genindex", "search", "signer"]


def test_the_headings_a_document_marks_are_kept_with_their_levels(tmp_path: Path) -> None:
    """A passage that begins inside a section is titled by it (:mod:`convrag.ingest.chunking`): the
    readers that know a heading for sure (Markdown, HTML, Word, OpenDocument, PowerPoint, EPUB) keep
    each as the line it reads as, with its level; plain text and PDF keep none."""
    import docx


    (tmp_path / "fees.md").write_text("# Harbour guide\n\nIntro.\n\n## Fees *2025*\n\nBoats pay.\n\n### Kayaks\n\nFree.\n\n"
                                      "```\n# not a heading\n```\n", encoding="utf-8")
    assert read_document(tmp_path / "fees.md").headings == (Heading(1, "Harbour guide"), Heading(2, "Fees 2025"), Heading(3, "Kayaks"))
    (tmp_path / "fees.html").write_text("<title>Guide</title><h2>Fees <em>now</em></h2><p>Boats pay.</p><h4>Late</h4><p>x</p>",
                                        encoding="utf-8")
    assert read_document(tmp_path / "fees.html").headings == (Heading(2, "Fees now"), Heading(4, "Late"))
    word = docx.Document()
    word.add_heading("Harbour guide", 0)  # the Title style
    word.add_paragraph("Intro.")
    word.add_heading("Fees", 1)
    word.add_heading("Kayaks", 2)
    word.add_paragraph("Free.")
    word.save(tmp_path / "fees.docx")
    assert read_document(tmp_path / "fees.docx").headings == (Heading(0, "Harbour guide"), Heading(1, "Fees"), Heading(2, "Kayaks"))
    body = ('<text:table-of-content><text:index-body><text:h>Fees 1</text:h></text:index-body></text:table-of-content>'
            '<text:h text:outline-level="1">Fees</text:h><text:p>Boats pay.</text:p>'
            '<text:section><text:h text:outline-level="2">Kayaks</text:h></text:section><text:h text:outline-level="x">Odd</text:h>')
    assert read_document(make_odt(tmp_path / "fees.odt", body)).headings == (Heading(1, "Fees"), Heading(2, "Kayaks"), Heading(1, "Odd"))
    assert [h.text for h in read_document(make_deck(tmp_path / "fees.pptx")).headings] == ["Harbour fees 2025", "Moorings"]
    book = make_epub(tmp_path / "b.epub", {"a.xhtml": "<h1>Arriving</h1><p>Call.</p>", "b.xhtml": "<h2>Fees</h2><p>40.</p>"},
                     ["a.xhtml", "b.xhtml"])
    assert read_document(book).headings == (Heading(1, "Arriving"), Heading(2, "Fees"))
    (tmp_path / "fees.txt").write_text("Fees\n\nBoats pay 40 dollars a night.\n", encoding="utf-8")
    assert read_document(tmp_path / "fees.txt").headings == ()


@pytest.mark.parametrize("name, seed, count", [
    ("made_by_libreoffice/harbour-prices.xls", 1, 120), ("made_by_libreoffice/heatpump-manual.doc", 3, 100),
    *((f"made_by_pandoc/heatpump-manual.{kind}", 7, 40) for kind in ("docx", "odt", "epub", "pptx", "rtf", "rst")),
    ("made_by_libreoffice/heatpump-manual.odp", 7, 40), ("made_by_libreoffice/heatpump-manual.pdf", 7, 40),
    ("made_by_libreoffice/heatpump-manual.ppt", 7, 40), ("made_by_aspose/harbour-mail.msg", 7, 40),
    ("made_by_aspose/harbour-rtf-mail.msg", 5, 40),
    ("made_by_zipfile/harbour-export.zip", 7, 60), ("made_by_pillow_heif/slipway-notice.heic", 11, 40),
    ("made_by_7zip/harbour-export.7z", 7, 80), ("made_by_rar/rar5-solid.rar", 7, 60), ("made_by_rar/rar3-subdirs.rar", 7, 60),
])
def test_a_damaged_file_is_skipped_with_its_reason_not_a_crash(tmp_path: Path, name: str, seed: int, count: int) -> None:
    """Files with random bytes changed are each a :class:`DataFormatError`, which names the file and lets a
    folder's other files be indexed. A damaged Office or OpenDocument package raised what zipfile and zlib
    raise (a UnicodeDecodeError for a file name in the zip, "Error -3 while decompressing", "That compression
    method is not supported"), which ended `convrag index` of the folder; xlrd's container reader followed a
    damaged .xls's chain of sectors round a loop until the process was killed for its memory; olefile raised
    a ValueError formatting a .doc's sector size of 2**40000."""
    read_damaged_copies(Path(__file__).parent / name, seed, count, tmp_path)


_TEXT_FORMATS = {
    ".ipynb": '{"cells": [{"cell_type": "markdown", "source": ["# Berths\\n", "Boats pay 40."]}, {"cell_type": "code", '
              '"source": ["print(40)"], "outputs": [{"output_type": "stream", "text": ["40\\n"]}]}], "metadata": {}, "nbformat": 4}',
    ".tex": "\\documentclass{article}\\title{Berths}\\begin{document}\\section{Fees}Boats pay $40$.\\footnote{Yearly.}\\end{document}",
    ".adoc": "= Berths\n\n== Fees\n\nBoats pay 40.\n\nTIP: Pay yearly.\n\n|===\n|Plan |Price\n|Day |15\n|===\n",
    ".mbox": "From MAILER-DAEMON Mon Mar  3 09:30:00 2025\nFrom: Ann <ann@harbour.example>\nSubject: Fees\n\nBoats pay 40.\n\n"
             "From MAILER-DAEMON Mon Mar  3 09:31:00 2025\nSubject: More\nContent-Type: text/html\n\n<p>Kayaks pay 2.</p>\n",
    ".mdx": "import Tabs from '@theme/Tabs';\n\n# Berths\n\n<Tabs>\n<TabItem label=\"Day\">\nBoats pay 40.\n</TabItem>\n</Tabs>\n",
}


@pytest.mark.parametrize("suffix", sorted(_TEXT_FORMATS))
def test_a_damaged_notebook_or_markup_file_is_skipped_with_its_reason(tmp_path: Path, suffix: str) -> None:
    """A notebook's JSON, markup pandoc reads, or a mailbox, with random bytes changed: read, or refused with a reason."""
    (tmp_path / f"berths{suffix}").write_text(_TEXT_FORMATS[suffix])
    assert "Boats pay 40" in read_document(tmp_path / f"berths{suffix}").text
    (tmp_path / "copies").mkdir()
    read_damaged_copies(tmp_path / f"berths{suffix}", 9, 40, tmp_path / "copies")


@pytest.mark.parametrize("suffix", [".gif", ".avif"])
def test_a_damaged_gif_or_avif_is_skipped_with_its_reason(tmp_path: Path, suffix: str) -> None:
    """GIF and AVIF are opened by Pillow in the process, as PNG and JPEG are (a HEIC photo is decoded
    in a child process: its decoder crashed on a damaged one); a damaged one is refused with a reason."""
    from PIL import Image, ImageDraw, ImageFont

    picture = Image.new("RGB", (520, 120), (245, 243, 236))
    draw = ImageDraw.Draw(picture)
    for i, line in enumerate(["Harbour notice", "The slipway is closed from 3 to 14 March."]):
        draw.text((16, 16 + i * 44), line, fill=(25, 25, 25), font=ImageFont.load_default(26))
    picture.save(tmp_path / f"notice{suffix}")
    assert "slipway is closed" in read_document(tmp_path / f"notice{suffix}").text
    (tmp_path / "copies").mkdir()
    read_damaged_copies(tmp_path / f"notice{suffix}", 5, 60, tmp_path / "copies")
