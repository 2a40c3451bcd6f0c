import pytest

from convrag.embeddings import Embedder
from convrag.ingest.chunking import chunk_document, chunk_spans, token_spans
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


def test_a_word_the_tokenizer_cannot_split_is_counted_by_its_length(embedder: Embedder) -> None:
    """WordPiece reads a word of over 100 characters as one unknown token, however long: a 1 MB run
    of letters and digits made one 1 MB passage, which no answer prompt can hold, and the sentences
    around it went with it. It is now counted as a token every 2 characters."""
    import random
    import string

    rng = random.Random(3)
    blob = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(200_000))
    text = "Moorings cost 40 euros a night. " * 20 + blob + "\n\nKayaks need no permit."
    passages = chunk_document(Document("harbour", "Harbour", text), embedder.tokenizer)
    assert max(len(p.text) for p in passages) < 1_500  # no longer than a passage of English text
    assert passages[-1].text.endswith("Kayaks need no permit.")
    assert passages[0].text.startswith("Moorings cost 40 euros")
    covered = sorted((int(p.doc_id.rsplit("-", 2)[1]), int(p.doc_id.rsplit("-", 2)[2])) for p in passages)
    assert covered[0][0] == 0 and covered[-1][1] == len(text)  # nothing left out: the windows overlap, no gap
    assert all(b[0] <= a[1] for a, b in zip(covered, covered[1:], strict=False))


def test_ordinary_text_is_chunked_by_its_tokens_alone(embedder: Embedder) -> None:
    """Words the tokenizer splits (up to 100 characters) keep their tokens: the rule above changes
    nothing for ordinary text."""
    text = "Antidisestablishmentarianism " * 30 + "x" * 100 + " ends here."
    encoding = embedder.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    assert token_spans(encoding["offset_mapping"]) == [(a, b) for a, b in encoding["offset_mapping"] if b > a]


def test_a_long_document_is_tokenized_in_pieces_with_the_same_tokens(embedder: Embedder) -> None:
    """One call on a 23 MB text took 3.5 GB of memory; pieces cut before a space give the same spans."""
    from convrag.ingest.chunking import document_spans

    text = ("Boats pay 60 euros a night.\nKayaks—free; café «Lite» plan: 25 GB. 港口费用每晚六十欧元。 "
            "Antidisestablishmentarianism x" + "y" * 150 + " ends.  Two  spaces\n\nnew paragraph ") * 40
    whole = embedder.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    seen: list[int] = []

    def recording(piece: str, **kwargs: object) -> object:
        seen.append(len(piece))
        return embedder.tokenizer(piece, **kwargs)

    for piece_chars in (200, 333, 10_000):  # each longer than the longest word (151 characters)
        seen.clear()
        assert document_spans(text, recording, piece_chars) == token_spans(whole), piece_chars
        assert max(seen) <= piece_chars and (len(seen) > 1) == (piece_chars < len(text))
