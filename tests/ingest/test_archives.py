"""Zip, tar, 7z and RAR archives read as their files (convrag/ingest/archives.py)."""

import os
import random
from collections import Counter
from pathlib import Path

import pytest

from convrag.errors import DataFormatError
from convrag.ingest import archives
from convrag.ingest.documents import Heading, iter_documents, read_document
from tests.ingest.makers import FIXTURES, read_damaged_copies


def test_a_zip_archive_reads_as_its_files_each_a_section(tmp_path: Path) -> None:
    """A Google Drive folder downloaded, a Notion or Confluence export: a .zip of documents, "not a type
    convrag reads". Each file of a type convrag reads is read as it is alone, under "File: its path", in
    path order; a picture is read by OCR (a photo of a notice); hidden files and macOS's __MACOSX copies are
    left out; a damaged member and one of another type are named with their reasons and the others read."""
    import io
    import zipfile

    from PIL import Image, ImageDraw, ImageFont

    notice = Image.new("RGB", (520, 60), "white")
    ImageDraw.Draw(notice).text((10, 15), "Winter berths close on 1 November.", fill="black", font=ImageFont.load_default(24))
    png = io.BytesIO()
    notice.save(png, format="PNG")

    manual = read_document(FIXTURES / "made_by_pandoc" / "heatpump-manual.docx")
    with zipfile.ZipFile(tmp_path / "export.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("Harbour/Winter/prices.csv", "Boat,Fee\nKayak,2\n")
        archive.write(FIXTURES / "made_by_pandoc" / "heatpump-manual.docx", "Harbour/manual.docx")
        archive.writestr("Harbour/logo.svg", b"<svg/>")
        archive.writestr("Harbour/notice.png", png.getvalue())
        archive.writestr("Harbour/.DS_Store", b"\x00")
        archive.writestr("__MACOSX/Harbour/._manual.docx", b"\x00")
        archive.writestr("Harbour/notes.txt", "")
        archive.writestr("Harbour/broken.pdf", b"%PDF-1.4 broken")
    document = read_document(tmp_path / "export.zip")
    assert document.title == "export"  # its file name, as a folder has no title
    lines = document.text.split("\n")
    assert lines[0] == "File: Harbour/Winter/prices.csv" and lines[1] == "Boat: Kayak | Fee: 2"
    assert lines[2] == "File: Harbour/manual.docx" and "\n".join(lines[3:]).startswith(manual.text + "\n")
    assert lines[-3:-1] == ["File: Harbour/notice.png", "Winter berths close on 1 November."]
    assert lines[-1] == ("Files not read: Harbour/broken.pdf (not a readable PDF (Failed to load document (PDFium: Data format "
                         "error).)), Harbour/logo.svg (not a type convrag reads), Harbour/notes.txt (empty)")
    assert document.headings == (Heading(1, "File: Harbour/Winter/prices.csv", part=True), Heading(1, "File: Harbour/manual.docx", part=True),
                                 *(Heading(h.level + 1, h.text) for h in manual.headings), Heading(1, "File: Harbour/notice.png", part=True))
    # an archive of nothing readable, one of more files than the bound, one that claims a bomb's size
    with zipfile.ZipFile(tmp_path / "pictures.zip", "w") as archive:
        archive.writestr("a.svg", b"<svg/>")
    with pytest.raises(DataFormatError, match=r"pictures.zip: no file in it could be read: a.svg \(not a type convrag reads\)"):
        read_document(tmp_path / "pictures.zip")
    with zipfile.ZipFile(tmp_path / "many.zip", "w") as archive:
        for n in range(4):
            archive.writestr(f"{n}.txt", "x")
    archives.MAX_ARCHIVE_FILES, files = 3, archives.MAX_ARCHIVE_FILES
    try:
        with pytest.raises(DataFormatError, match="many.zip: not read: it holds more than 3 files"):
            read_document(tmp_path / "many.zip")
    finally:
        archives.MAX_ARCHIVE_FILES = files
    with zipfile.ZipFile(tmp_path / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("zeros.txt", b"0" * (2 << 20))
    archives.MAX_ARCHIVE_BYTES, most = 1 << 20, archives.MAX_ARCHIVE_BYTES
    try:
        with pytest.raises(DataFormatError, match="bomb.zip: not read: its documents unpack to more than 1 MB"):
            read_document(tmp_path / "bomb.zip")
    finally:
        archives.MAX_ARCHIVE_BYTES = most
    (tmp_path / "fake.zip").write_bytes(b"not a zip")
    with pytest.raises(DataFormatError, match="fake.zip: not a readable zip archive"):
        read_document(tmp_path / "fake.zip")


def _tar(path: Path, files: dict[str, bytes], mode: str = "w:gz") -> Path:
    """A tar archive of ``files`` (name: bytes), each under "./" as ``tar -C folder -czf x.tgz .`` writes them."""
    import io
    import tarfile

    if mode == "w:zst":  # Python's tarfile writes no zstd; libarchive does
        import libarchive

        with libarchive.file_writer(str(path), "ustar", "zstd") as packed:
            for name, data in files.items():
                packed.add_file_from_memory(f"./{name}", len(data), data)
        return path
    with tarfile.open(path, mode) as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(f"./{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize(("name", "mode"), [("export.tar.gz", "w:gz"), ("export.tgz", "w:gz"), ("export.TAR.BZ2", "w:bz2"),
                                            ("export.tar.xz", "w:xz"), ("export.tar", "w"), ("export.tar.zst", "w:zst"),
                                            ("export.tzst", "w:zst")])
def test_a_tar_archive_reads_as_its_files_each_a_section(tmp_path: Path, name: str, mode: str) -> None:
    """A folder packed on Linux or macOS, a project's docs, a release's sources: a .tar.gz was "not a type
    convrag reads" (".gz"). It reads as a zip does: each file under "File: its path" (without tar's "./"),
    in path order, hidden files left out, the others named; its id and title are its name without both
    suffixes."""
    manual = read_document(FIXTURES / "made_by_pandoc" / "heatpump-manual.docx")
    _tar(tmp_path / name, {"Harbour/Winter/prices.csv": b"Boat,Fee\nKayak,2\n",
                           "Harbour/manual.docx": (FIXTURES / "made_by_pandoc" / "heatpump-manual.docx").read_bytes(),
                           "Harbour/._manual.docx": b"\x00\x05\x16\x07", "Harbour/logo.svg": b"<svg/>"}, mode)
    document = read_document(tmp_path / name)
    assert (document.doc_id, document.title) == ("export", "export")
    lines = document.text.split("\n")
    assert lines[:3] == ["File: Harbour/Winter/prices.csv", "Boat: Kayak | Fee: 2", "File: Harbour/manual.docx"]
    assert "\n".join(lines[3:]) == manual.text + "\nFiles not read: Harbour/logo.svg (not a type convrag reads)"
    assert document.headings[:2] == (Heading(1, "File: Harbour/Winter/prices.csv", part=True), Heading(1, "File: Harbour/manual.docx", part=True))


def test_a_tar_archive_cut_short_or_damaged_reads_as_far_as_it_goes(tmp_path: Path) -> None:
    """A download stopped half way: the files before the cut are read and the cut is named; with none
    before it, or bytes that are no tar, the archive is refused with the reason."""
    whole = _tar(tmp_path / "whole.tar", {"a.md": b"# Fees\n\nBoats pay 5 dollars.\n", "b.txt": b"x" * 20_000, "c.txt": b"late"}, "w")
    (tmp_path / "cut.tar").write_bytes(whole.read_bytes()[:6_000])  # inside b.txt's data
    assert read_document(tmp_path / "cut.tar").text.split("\n") == [
        "File: a.md", "Fees", "Boats pay 5 dollars.", "Files not read: b.txt (it looks damaged (ReadError))",
        "The archive ends early, after b.txt (ReadError: unexpected end of data): any files after it are not read."]
    gz = _tar(tmp_path / "whole.tgz", {"photo.raw": random.Random(0).randbytes(20_000), "a.md": b"# Fees"})
    (tmp_path / "cut.tgz").write_bytes(gz.read_bytes()[:10_000])  # inside the photo, which does not compress
    with pytest.raises(DataFormatError, match=r"cut.tgz: no file in it could be read: photo.raw \(not a type convrag reads\); "
                                              r"the archive ends early, after photo.raw \(EOFError: Compressed file ended"):
        read_document(tmp_path / "cut.tgz")
    (tmp_path / "head.tgz").write_bytes(gz.read_bytes()[:20])
    with pytest.raises(DataFormatError, match="head.tgz: not a readable tar archive"):
        read_document(tmp_path / "head.tgz")
    (tmp_path / "fake.tar.gz").write_text("not a tar")
    with pytest.raises(DataFormatError, match=r"fake.tar.gz: not a readable tar archive \(file could not be opened successfully:\)"):
        read_document(tmp_path / "fake.tar.gz")


def test_a_compressed_tar_is_refused_once_it_unpacks_past_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tar has no table of its files: listing a compressed one unpacks it all, and a gzip bomb unpacks a
    thousandfold. Listing stops, and the archive is refused, once what it unpacks passes the bound; the
    bounds of a zip (files, documents' bytes) hold for a tar too."""
    _tar(tmp_path / "bomb.tgz", {"zeros.bin": b"\0" * (3 << 20), "late.txt": b"late"})
    monkeypatch.setattr(archives, "MAX_STREAM_BYTES", 2 << 20)
    with pytest.raises(DataFormatError, match="bomb.tgz: not read: it unpacks to more than 2 MB"):
        read_document(tmp_path / "bomb.tgz")
    _tar(tmp_path / "bomb.tar", {"zeros.bin": b"\0" * (3 << 20), "late.txt": b"late"}, "w")
    assert read_document(tmp_path / "bomb.tar").text.startswith("File: late.txt\nlate")  # not compressed: its data is passed over unread
    _tar(tmp_path / "many.tgz", {f"{n}.txt": b"x" for n in range(5)})
    monkeypatch.setattr(archives, "MAX_ARCHIVE_FILES", 3)
    with pytest.raises(DataFormatError, match="many.tgz: not read: it holds more than 3 files"):
        read_document(tmp_path / "many.tgz")


def test_a_tar_in_a_folder_or_in_a_zip_reads_as_the_archive_it_is(tmp_path: Path) -> None:
    """In a folder, a .tar.gz was counted as a ".gz" of another type; beside a docs.md its id was "docs.tar".
    In a zip it was "not a type convrag reads". A gzip file of another kind is still not read."""
    import gzip
    import zipfile

    folder = tmp_path / "docs"
    folder.mkdir()
    packed = _tar(folder / "docs.tar.gz", {"fees.md": b"# Fees\n\nBoats pay 5 dollars.\n"})
    (folder / "docs.md").write_text("Moorings open at eight.")
    (folder / "corpus.jsonl.gz").write_bytes(gzip.compress(b'{"_id": "1", "text": "x"}\n'))
    unread: Counter[str] = Counter()
    read = list(iter_documents(folder, [], unread))
    assert [(d.doc_id, d.title) for d in read] == [("docs.md", "docs"), ("docs.tar.gz", "docs")]
    assert read[1].text == "File: fees.md\nFees\nBoats pay 5 dollars." and unread == Counter({".gz": 1})
    with zipfile.ZipFile(tmp_path / "export.zip", "w") as archive:
        archive.write(packed, "Old/docs.tar.gz")
    assert read_document(tmp_path / "export.zip").text.split("\n") == [
        "File: Old/docs.tar.gz", "File: fees.md", "Fees", "Boats pay 5 dollars."]


def test_a_7z_archive_reads_as_its_files_and_a_locked_one_says_so() -> None:
    """7-Zip is how many Windows users pack a folder: a .7z was "not a type convrag reads". It reads as a zip
    does (one solid block of LZMA2, read in its order). Files locked by a password are named so; an archive
    whose file names are locked too is refused with that reason."""
    manual = read_document(FIXTURES / "made_by_pandoc" / "heatpump-manual.docx")
    document = read_document(FIXTURES / "made_by_7zip" / "harbour-export.7z")
    assert (document.doc_id, document.title) == ("harbour-export", "harbour export")
    assert document.text == "\n".join([
        "File: Harbour/Winter/fees.csv", "Boat: Kayak | Fee: 2", "Boat: Dinghy | Fee: 3", "File: Harbour/heatpump-manual.docx",
        manual.text, "File: Harbour/notes.md", "Notes", "The office opens at 8.", "Files not read: Harbour/logo.svg (not a type convrag reads)"])
    assert document.headings[-2:] == (Heading(1, "File: Harbour/notes.md", part=True), Heading(2, "Notes"))
    with pytest.raises(DataFormatError, match=r"harbour-locked.7z: no file in it could be read: Harbour/Winter/fees.csv \(locked by a "
                                              r"password\), Harbour/notes.md \(locked by a password\)$"):
        read_document(FIXTURES / "made_by_7zip" / "harbour-locked.7z")
    with pytest.raises(DataFormatError, match="harbour-hidden.7z: not read: it is locked by a password, its file names too"):
        read_document(FIXTURES / "made_by_7zip" / "harbour-hidden.7z")


def test_a_rar_archive_reads_as_far_as_libarchive_reads_it() -> None:
    """WinRAR's archives, RAR 3 and RAR 5, solid or not, read as a zip does; a RAR 3 solid archive, which
    libarchive reads up to its first file, is read that far and the rest named."""
    assert read_document(FIXTURES / "made_by_rar" / "rar3-subdirs.rar").text.split("\n") == [
        "File: sub/dir1/file1.txt", "file1", "File: sub/dir2/file2.txt", "file2", "File: sub/with space/long fn.txt", "long fn",
        "File: sub/\u00fc\u0235\u0129\u00f6\u1e0b\u00e8/file.txt", "file"]
    lines = read_document(FIXTURES / "made_by_rar" / "rar5-solid.rar").text.split("\n")
    assert lines[0] == "File: stest1.txt" and lines.index("File: stest2.txt") == 1 + 512 and lines[-1] == "511"
    lines = read_document(FIXTURES / "made_by_rar" / "rar3-solid.rar").text.split("\n")
    assert lines[:2] == ["File: stest1.txt", "000"] and "File: stest2.txt" not in lines
    assert lines[-1] == ("The archive ends early, after stest1.txt (ArchiveError: RAR solid archive support unavailable.): "
                         "any files after it are not read.")


def test_a_7z_archive_without_libarchive_is_refused_saying_how_to_install_it(tmp_path: Path) -> None:
    """libarchive-c loads the C library when imported; where it is missing, the archive is skipped with the way to install it."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path\n"
                          "from convrag.ingest.documents import read_document\n"
                          "try:\n    read_document(Path(sys.argv[1]))\nexcept Exception as exc:\n    print(exc)",
                          str(FIXTURES / "made_by_7zip" / "harbour-export.7z")],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "LIBARCHIVE": str(tmp_path / "libarchive.so.13")})
    assert run.stdout.strip().endswith("harbour-export.7z: not read: 7z, RAR and zstd tar archives are read by libarchive, which is not "
                                       "installed (Debian and Ubuntu: apt-get install libarchive13, or libarchive13t64 since "
                                       "Debian 13 and Ubuntu 24.04)"), run.stderr[-2000:]


def test_only_a_tar_is_known_by_two_suffixes() -> None:
    """".gz" alone would claim every gzip file (a BEIR corpus.jsonl.gz beside the documents)."""
    from convrag.ingest.documents import document_stem, document_suffix

    assert [document_suffix(name) for name in ("a.tar.gz", "A.TAR.XZ", "corpus.jsonl.gz", ".tar.gz", "a.b.pdf", "README")] == [
        ".tar.gz", ".tar.xz", ".gz", ".gz", ".pdf", ""]
    assert [document_stem(name) for name in ("docs/a.b.tar.bz2", "a.tgz", "a.pdf")] == ["a.b", "a", "a"]


def test_an_archives_file_names_in_utf8_without_the_flag_read_as_written(tmp_path: Path) -> None:
    """macOS's Archive Utility writes UTF-8 names without the zip's UTF-8 flag; zipfile reads them as code
    page 437, so the section of "Gebühren.md" was headed "File: Geb├╝hren.md"."""
    import zipfile

    with zipfile.ZipFile(tmp_path / "export.zip", "w") as archive:
        archive.writestr("Gebühren.md", "# Gebühren\n\nEin Liegeplatz kostet 40 Euro.\n")
    data = bytearray((tmp_path / "export.zip").read_bytes())
    for signature, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # clear the UTF-8 flag, as such tools leave it
        where = data.find(signature) + at
        data[where:where + 2] = (int.from_bytes(data[where:where + 2], "little") & ~0x800).to_bytes(2, "little")
    (tmp_path / "export.zip").write_bytes(bytes(data))
    assert zipfile.ZipFile(tmp_path / "export.zip").namelist() != ["Gebühren.md"]  # as zipfile reads it
    assert read_document(tmp_path / "export.zip").text.split("\n")[0] == "File: Gebühren.md"


def test_an_archive_member_packed_with_a_method_zipfile_lacks_is_named_with_advice(tmp_path: Path) -> None:
    """Windows packs large files with Deflate64, which zipfile cannot unpack: "it looks damaged (NotImplementedError)"."""
    import zipfile

    with zipfile.ZipFile(tmp_path / "export.zip", "w") as archive:
        archive.writestr("big.md", "# Big\n\nPacked with Deflate64.\n")
        archive.writestr("small.md", "# Small\n\nStored.\n")
    data = bytearray((tmp_path / "export.zip").read_bytes())
    for signature, at in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):  # the first member's method: 9, Deflate64
        where = data.find(signature) + at
        data[where:where + 2] = (9).to_bytes(2, "little")
    (tmp_path / "export.zip").write_bytes(bytes(data))
    lines = read_document(tmp_path / "export.zip").text.split("\n")
    assert lines[:3] == ["File: small.md", "Small", "Stored."]
    assert lines[-1] == ("Files not read: big.md (packed with a method Python's zipfile cannot unpack (9); unpack the archive "
                         "and index the folder)")


def test_archives_nested_in_archives_are_read_three_deep_then_named(tmp_path: Path) -> None:
    import io
    import zipfile

    from convrag.ingest.contained import MAX_NESTING

    inner = b""
    for level in range(6, -1, -1):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            archive.writestr(f"level{level}.txt", f"text of level {level}")
            if inner:
                archive.writestr(f"level{level + 1}.zip", inner)
        inner = out.getvalue()
    (tmp_path / "deep.zip").write_bytes(inner)
    text = read_document(tmp_path / "deep.zip").text
    assert [f"text of level {n}" in text for n in range(7)] == [n <= MAX_NESTING for n in range(7)]
    assert f"level{MAX_NESTING + 1}.zip (an archive nested more than {MAX_NESTING} deep)" in text


@pytest.mark.parametrize(("suffix", "mode"), [(".tar.gz", "w:gz"), (".tar", "w"), (".tar.bz2", "w:bz2"), (".tar.xz", "w:xz"),
                                              (".tar.zst", "w:zst")])
def test_a_damaged_tar_archive_is_skipped_with_its_reason(tmp_path: Path, suffix: str, mode: str) -> None:
    """A tar's headers, or the compressed stream they are in, with random bytes changed: a size of
    terabytes, a checksum that fails, a stream zlib cannot unpack. Read as far as it goes, or refused
    with a reason."""
    _tar(tmp_path / f"export{suffix}", {"berths.md": b"# Berths\n\nBoats pay 40.\n",
                                        "manual.docx": (FIXTURES / "made_by_pandoc" / "heatpump-manual.docx").read_bytes()}, mode)
    assert "Boats pay 40" in read_document(tmp_path / f"export{suffix}").text
    (tmp_path / "copies").mkdir()
    read_damaged_copies(tmp_path / f"export{suffix}", 13, 40, tmp_path / "copies")


def test_a_zipped_sphinx_builds_source_copies_and_index_pages_are_named_not_read(tmp_path: Path) -> None:
    """Read the Docs' HTML zip: each page's reStructuredText copied into _sources and the index pages
    Sphinx makes were sections of the archive beside the pages themselves (convrag/ingest/docs_builds.py)."""
    import zipfile

    archive = tmp_path / "docs-html.zip"
    with zipfile.ZipFile(archive, "w") as packed:
        packed.writestr("html/searchindex.js", "Search.setIndex({})")
        packed.writestr("html/signer.html", "<title>Signing</title><p>A Signer attaches a signature.</p>")
        packed.writestr("html/_sources/signer.rst.txt", ".. module:: signer\n\nA :class:`Signer` attaches a signature.\n")
        packed.writestr("html/genindex.html", "<title>Index</title><p>Signer</p>")
    doc = read_document(archive)
    assert [h.text for h in doc.headings if h.level == 1] == ["File: html/signer.html"]
    assert ".. module::" not in doc.text
    assert doc.text.splitlines()[-1] == ("Files not read: html/_sources/signer.rst.txt (a copy of a page's source (a Sphinx build)), "
                                         "html/genindex.html (an index page made from the pages (a Sphinx build)), "
                                         "html/searchindex.js (not a type convrag reads)")
