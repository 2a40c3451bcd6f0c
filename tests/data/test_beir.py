import gzip
import zipfile
from pathlib import Path

import pytest

from convrag.data.beir import read_corpus, read_qrels, read_queries, strip_user_prefix
from convrag.errors import DataFormatError
from tests.helpers import write_jsonl

ROWS = [{"_id": "a", "title": "A", "text": "alpha", "url": "u"}, {"_id": "b", "text": "beta"}]


@pytest.mark.parametrize("kind", ["jsonl", "gz", "zip"])
def test_read_corpus_formats(tmp_path: Path, kind: str) -> None:
    if kind == "jsonl":
        path = write_jsonl(tmp_path / "c.jsonl", ROWS)
    elif kind == "gz":
        path = write_jsonl(tmp_path / "c.jsonl.gz", ROWS, compress=True)
    else:
        inner = write_jsonl(tmp_path / "c.jsonl", ROWS)
        path = tmp_path / "c.jsonl.zip"
        with zipfile.ZipFile(path, "w") as archive:
            archive.write(inner, "clapnq.jsonl")
    passages = list(read_corpus(path))
    assert [p.doc_id for p in passages] == ["a", "b"]
    assert passages[0].title == "A" and passages[0].url == "u"
    assert passages[1].title == "" and passages[1].text == "beta"


def test_pyserini_and_ir_datasets_corpora_are_read_as_they_are(tmp_path: Path) -> None:
    """Pyserini's {"id", "contents"} and ir_datasets' {"doc_id", "text"} were "missing field '_id'"."""
    rows = [{"id": "p1", "contents": "Kayak moorings cost 12 dollars."}, {"doc_id": 7, "text": "Ramps open at 6."},
            {"docid": "t3", "text": "Fuel is sold at the pier."}, {"_id": "b1", "id": "ignored", "text": "BEIR's id first."}]
    passages = list(read_corpus(write_jsonl(tmp_path / "c.jsonl", rows)))
    assert [(p.doc_id, p.text[:4]) for p in passages] == [("p1", "Kaya"), ("7", "Ramp"), ("t3", "Fuel"), ("b1", "BEIR")]


def test_truncated_json_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"_id": "a", "text": "x"}\n{"_id": "b", "text": "trunc\n')
    with pytest.raises(DataFormatError, match=r"c\.jsonl:2: invalid JSON"):
        list(read_corpus(path))


def test_missing_field_and_duplicate_id(tmp_path: Path) -> None:
    with pytest.raises(DataFormatError, match=r":1: missing field 'text' or 'contents'"):
        list(read_corpus(write_jsonl(tmp_path / "m.jsonl", [{"_id": "a"}])))
    with pytest.raises(DataFormatError, match=r":1: missing field '_id' or 'id' or 'doc_id' or 'docid'"):
        list(read_corpus(write_jsonl(tmp_path / "n.jsonl", [{"text": "x"}])))
    with pytest.raises(DataFormatError, match=r":2: duplicate passage id 'a'"):
        list(read_corpus(write_jsonl(tmp_path / "d.jsonl", [{"_id": "a", "text": "x"}, {"_id": "a", "text": "y"}])))


def test_a_passage_with_neither_text_nor_title_is_left_out_and_named(tmp_path: Path) -> None:
    """Indexed, a blank passage matched no word, but dense search ranked it like any other, so a
    hybrid list (and the passages shown to the model) could hold a blank."""
    rows = [{"_id": "a", "text": "alpha"}, {"_id": "b", "text": " \n", "title": ""}, {"_id": 7, "text": "", "title": "Only a title"},
            {"_id": "c", "text": ""}]
    empty: list[str] = []
    passages = list(read_corpus(write_jsonl(tmp_path / "c.jsonl", rows), empty))
    assert [p.doc_id for p in passages] == ["a", "7"] and empty == ["b", "c"]
    with pytest.raises(DataFormatError, match=r":5: duplicate passage id 'b'"):  # a left-out id is still an id
        list(read_corpus(write_jsonl(tmp_path / "d.jsonl", [*rows, {"_id": "b", "text": "beta"}])))


@pytest.mark.parametrize("kind", ["jsonl", "gz", "zip"])
def test_a_byte_order_mark_is_skipped(tmp_path: Path, kind: str) -> None:
    """A UTF-8 file that starts with a byte-order mark (Notepad, PowerShell 5) was refused at line 1
    as invalid JSON ("Unexpected UTF-8 BOM"), and a qrels file's header as wrong."""
    body = b"\xef\xbb\xbf" + write_jsonl(tmp_path / "rows.jsonl", ROWS).read_bytes()
    path = tmp_path / f"c.{kind}"
    if kind == "jsonl":
        path.write_bytes(body)
    elif kind == "gz":
        path.write_bytes(gzip.compress(body))
    else:
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("clapnq.jsonl", body)
    assert [p.doc_id for p in read_corpus(path)] == ["a", "b"]
    qrels = tmp_path / "dev.tsv"
    qrels.write_bytes("\ufeffquery-id\tcorpus-id\tscore\nq1\td1\t1\n".encode("utf-8"))
    assert read_qrels(qrels) == {"q1": {"d1": 1}}


def test_qrels_not_saved_as_utf8_is_named_with_the_byte(tmp_path: Path) -> None:
    """A qrels file in Latin-1 raised a bare UnicodeDecodeError; JSONL files already said what was wrong."""
    path = tmp_path / "dev.tsv"
    path.write_bytes("query-id\tcorpus-id\tscore\nq1\tcaf\u00e9\t1\n".encode("latin-1"))
    with pytest.raises(DataFormatError, match=r"dev\.tsv: not UTF-8 text \(byte 0xe9\); save it as UTF-8"):
        read_qrels(path)


def test_zip_with_two_members_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "two.jsonl.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a.jsonl", "{}")
        archive.writestr("b.jsonl", "{}")
    with pytest.raises(DataFormatError, match="expected one file"):
        list(read_corpus(path))


def test_queries_strip_user_prefixes(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "q.jsonl", [{"_id": "c<::>2", "text": "|user|: first\n|user|: second?"}])
    assert read_queries(path) == {"c<::>2": "first\nsecond?"}
    assert strip_user_prefix("|user|:   spaced ") == "spaced"
    assert strip_user_prefix("no prefix") == "no prefix"


def test_qrels(tmp_path: Path) -> None:
    path = tmp_path / "dev.tsv"
    path.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t2\nq2\td3\t1\n")
    assert read_qrels(path) == {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}}


def test_qrels_wrong_header(tmp_path: Path) -> None:
    path = tmp_path / "dev.tsv"
    path.write_text("qid docid rel\nq1 d1 1\n")
    with pytest.raises(DataFormatError, match=r"dev\.tsv:1: expected header"):
        read_qrels(path)


def test_qrels_bad_rows(tmp_path: Path) -> None:
    path = tmp_path / "dev.tsv"
    path.write_text("query-id\tcorpus-id\tscore\nq1\td1\tyes\n")
    with pytest.raises(DataFormatError, match=r":2: relevance grade 'yes'"):
        read_qrels(path)
    path.write_text("query-id\tcorpus-id\tscore\nq1\td1\n")
    with pytest.raises(DataFormatError, match=r":2: expected 3"):
        read_qrels(path)
    path.write_text("query-id\tcorpus-id\tscore\nq1\t" + "d" * 200_000 + "\t1\n")  # the csv module's error was a traceback
    with pytest.raises(DataFormatError, match=r"dev\.tsv: not a qrels row \(field larger than field limit"):
        read_qrels(path)


def test_a_corpus_line_with_half_a_character_is_mended(tmp_path: Path) -> None:
    """A JSON escape of half a UTF-16 pair ("\\udce9") gave a passage no index file could hold:
    `convrag index` ended with a UnicodeEncodeError. It becomes U+FFFD; the rest of the passage reads."""
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "a", "text": "caf\\udce9 opens", "title": "T\\ud83d\\ude00"}\n')
    [passage] = read_corpus(path)
    assert (passage.text, passage.title) == ("caf\ufffd opens", "T\U0001f600")
