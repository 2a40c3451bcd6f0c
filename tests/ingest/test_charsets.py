"""Text in any encoding read as written, binary files refused (convrag/ingest/charsets.py)."""

import codecs
from pathlib import Path

import pytest

from convrag.errors import DataFormatError
from convrag.ingest.documents import iter_documents, read_document


@pytest.mark.parametrize("encoding, text", [
    ("utf-8-sig", "Café au lait, naïve résumé."),
    ("utf-16", "Café au lait, naïve résumé."),  # with a byte-order mark, as Windows editors save it
    ("utf-16", "这是一个测试文档，里面有中文文本。"),  # one script, however far from Latin
    ("utf-16", 'Price: €5.00 😀 {"plan": "Lite"}\n\tDone.'),
    ("cp1252", "Café – naïve “quoted” text about the Lite plan and its storage."),
    ("latin-1", "Grüße aus Köln: the Lite plan is free."),
    ("shift_jis", "日本語のテキストです。これはテストの文書です。"),
    ("gbk", "这是一个测试文档，里面有中文文本。"),
    ("cp1251", "Привет, это тестовый документ на русском языке."),
])
def test_text_in_other_encodings_is_read_as_written(tmp_path: Path, encoding: str, text: str) -> None:
    path = tmp_path / "note.txt"
    path.write_bytes(text.encode(encoding))
    assert read_document(path).text == text


def test_binary_files_are_refused_and_a_folder_skips_them(tmp_path: Path) -> None:
    (tmp_path / "good.txt").write_text("The Lite plan is free.")
    (tmp_path / "image.txt").write_bytes(bytes(range(256)) * 20)  # NUL bytes: binary
    (tmp_path / "noise.md").write_bytes(bytes((i * 97 + 13) % 256 for i in range(1, 4000) if (i * 97 + 13) % 256))
    # a UTF-16 mark, then bytes that decode (no lone surrogates) to code points of many scripts
    (tmp_path / "marked.txt").write_bytes(codecs.BOM_UTF16_LE + bytes((i * 37 + 11) % 256 or 1 for i in range(60)))
    assert (tmp_path / "marked.txt").read_bytes()[2:].decode("utf-16-le")  # it does decode: only the check refuses it
    for name in ("image.txt", "noise.md", "marked.txt"):
        with pytest.raises(DataFormatError, match="not text"):
            read_document(tmp_path / name)
    with pytest.raises(DataFormatError, match="image.txt: not text"):
        list(iter_documents(tmp_path))
    skipped: list[str] = []
    assert [d.doc_id for d in iter_documents(tmp_path, skipped)] == ["good"]
    assert skipped == ["image.txt: not text (binary data: it holds NUL bytes)",
                       "marked.txt: not text: it starts with a utf-16 mark but reads as a jumble of scripts",
                       "noise.md: not text (binary data, or an encoding that could not be recognised)"]


@pytest.mark.parametrize("data, reason", [
    (b"H#\xc1\x00\x9e\xcc@\xfc", "mixes CJK, HANGUL letters"),  # eight bytes of binary data: read as UTF-16, 䠣섀黌䃼
    (b"\x14\xfeQ\x00\x82\xff\xee}", "no space or line break"),  # ︔Qﾂ緮: one script, but no text runs on like that
    (bytes(range(1, 128)) * 4, "control codes"),  # bytes under 0x80 are valid UTF-8
    (bytes((i * 37) % 31 + 1 for i in range(64)), "control codes"),
])
def test_short_and_seven_bit_binary_files_are_not_read_as_text(tmp_path: Path, data: bytes, reason: str) -> None:
    """A binary file of a few bytes with a NUL among them was read as UTF-16 (four characters of Han
    and Hangul indexed as a document), and one of bytes under 0x80 as UTF-8 control codes."""
    path = tmp_path / "blob.txt"
    path.write_bytes(data)
    with pytest.raises(DataFormatError, match=f"not text.*{reason}"):
        read_document(path)


@pytest.mark.parametrize(("meta", "encoding"), [
    ('<meta charset="iso-8859-2">', "iso-8859-2"),
    ('<meta http-equiv="Content-Type" content="text/html; charset=windows-1250">', "cp1250"),
    ("<META CHARSET=ISO-8859-1>", "cp1252"),  # the web's reading of Latin-1: Windows-1252
    ('<meta charset="iso-8859-1">', "utf-8"),  # UTF-8 whatever the page declares: an editor saved it again
    ('<meta charset="x-unknown">', "utf-8"),
])
def test_an_html_page_is_read_in_the_charset_it_declares(tmp_path: Path, meta: str, encoding: str) -> None:
    """A short page in a Central European code page read as Western text ("\u00a3odzie p\u00b3ac\u00b9 40 z\u00b3."),
    though its <meta> named its charset, as a browser reads it."""
    text = "\u0141odzie p\u0142ac\u0105 40 z\u0142, kajaki 2 z\u0142." if encoding != "cp1252" else "Caf\u00e9: 40 \u20ac."
    (tmp_path / "fees.html").write_bytes(f"<html><head>{meta}</head><body><p>{text}</p></body></html>".encode(encoding))
    assert read_document(tmp_path / "fees.html").text == text


@pytest.mark.parametrize("text", [
    "Passport renewal costs 130 dollars.\nApply by mail.",
    "Привет, это документ.\nВторая строка.",
    "日本語のテキストです。\n二行目です。",
])
@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_mark_is_still_read(tmp_path: Path, text: str, encoding: str) -> None:
    path = tmp_path / "note.txt"
    path.write_bytes(text.encode(encoding))
    assert read_document(path).text == text


def test_layout_codes_in_text_are_text(tmp_path: Path) -> None:
    text = "Page one of the handbook.\f\nPage two: \x1b[1mbold\x1b[0m terms.\x0b Done."
    (tmp_path / "paged.txt").write_text(text)
    assert read_document(tmp_path / "paged.txt").text == text
