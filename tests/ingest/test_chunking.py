import pytest

from convrag.embeddings import Embedder
from convrag.ingest.chunking import chunk_document, chunk_spans
from convrag.ingest.documents import Document


def test_spans_overlap_and_cover() -> None:
    offsets = [(i * 2, i * 2 + 1) for i in range(10)]
    assert chunk_spans(offsets, 4, 1) == [(0, 7), (6, 13), (12, 19)]
    assert chunk_spans(offsets[:3], 4, 1) == [(0, 5)]
    assert chunk_spans([], 4, 1) == []
    with pytest.raises(ValueError):
        chunk_spans(offsets, 4, 4)


def test_chunks_are_512_model_tokens_with_100_overlap(embedder: Embedder) -> None:
    text = " ".join(f"token{i % 50} word{i}" for i in range(800))
    passages = chunk_document(Document("doc-7", "Title", text, "http://x"), embedder.tokenizer)
    tokenizer = embedder.tokenizer
    lengths = [len(tokenizer(p.text, add_special_tokens=False)["input_ids"]) for p in passages]
    assert len(passages) > 2 and all(n <= 512 for n in lengths[:-1]) and lengths[0] >= 510
    first_ids = tokenizer(passages[0].text, add_special_tokens=False)["input_ids"]
    second_ids = tokenizer(passages[1].text, add_special_tokens=False)["input_ids"]
    assert first_ids[-100:] == second_ids[:100]
    for passage in passages:
        _, start, end = passage.doc_id.rsplit("-", 2)
        assert passage.doc_id.startswith("doc-7-") and text[int(start) : int(end)] == passage.text
        assert passage.title == "Title" and passage.url == "http://x"


def test_empty_document_gives_no_passages(embedder: Embedder) -> None:
    assert chunk_document(Document("d", "t", "   \n"), embedder.tokenizer) == []
