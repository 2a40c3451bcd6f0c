"""A document made of other documents' passages (convrag/ingest/compilations.py)."""

from convrag.ingest.compilations import COPIED_SHARE, Compilation, compilations_summary, drop_compilations
from convrag.types import Passage


def _passages(doc_id: str, *texts: str) -> tuple[str, list[Passage]]:
    return doc_id, [Passage(f"{doc_id}-{i}-{i + 1}", text, doc_id.title()) for i, text in enumerate(texts)]


FS = _passages("fs", "Read a file with readFile.", "Make a folder with mkdir.", "Watch a file with watch.")
HTTP = _passages("http", "Create a server with createServer.", "Send a request with request.")


def test_a_page_gathering_the_others_is_left_out_and_they_are_kept() -> None:
    # Node.js's all.html: its pages' passages word for word (white space aside), and one where two pages meet
    gathered = _passages("all", "Read a file  with\nreadFile.", "Make a folder with mkdir.", "Watch a file with watch.",
                         "Create a server with createServer.", "Send a request with request. About this documentation.")
    passages, left_out = drop_compilations([gathered, FS, HTTP])
    assert left_out == [Compilation("all", 5, 4)] and 4 / 5 >= COPIED_SHARE
    assert [p.doc_id for p in passages] == ["fs-0-1", "fs-1-2", "fs-2-3", "http-0-1", "http-1-2"]


def test_documents_sharing_a_passage_or_two_are_kept() -> None:
    # a note that repeats one paragraph of the fs page, and a page of which 3 in 5 passages are others'
    note = _passages("note", "Read a file with readFile.", "Our own advice on reading files.")
    mixed = _passages("mixed", "Read a file with readFile.", "Make a folder with mkdir.", "Send a request with request.",
                      "Something else.", "And more.")
    passages, left_out = drop_compilations([FS, HTTP, note, mixed])
    assert left_out == [] and len(passages) == 3 + 2 + 2 + 5


def test_of_two_copies_the_one_of_the_shorter_name_then_the_first_is_kept() -> None:
    texts = ("Boats pay 60 euros a night.", "Kayaks pay nothing.")
    for given in ([_passages("fees (copy)", *texts), _passages("fees", *texts)], [_passages("fees", *texts), _passages("old/fees", *texts)]):
        passages, left_out = drop_compilations(given)
        assert {p.doc_id.rsplit("-", 2)[0] for p in passages} == {"fees"} and len(left_out) == 1
    passages, left_out = drop_compilations([_passages("a", *texts), _passages("b", *texts), _passages("c", *texts)])
    assert [c.doc_id for c in left_out] == ["c", "b"] and {p.doc_id[0] for p in passages} == {"a"}


def test_a_document_without_passages_is_no_copy() -> None:
    passages, left_out = drop_compilations([("empty", []), FS])
    assert left_out == [] and len(passages) == 3


def test_the_report_names_a_few_and_counts_the_rest() -> None:
    left_out = [Compilation(f"all{i}", 10, 9) for i in range(4)]
    assert compilations_summary(left_out[:1]).endswith("which are indexed: all0 (9 of its 10 passages)")
    assert compilations_summary(left_out).startswith("4 document(s)") and compilations_summary(left_out).endswith(" and 1 more")
