from pathlib import Path

from convrag.index.bm25 import BM25Index, BM25Params

TEXTS = ["the cat sat on the mat", "dogs are running fast", "cats and dogs", "nothing relevant here"]


def test_stemmed_search_ranks_and_drops_zero_scores() -> None:
    index = BM25Index.build(TEXTS)
    (positions,), (scores,) = index.search(["running cats"], 10)
    assert positions.tolist()[0] in (1, 2)  # 'running' -> 'run', 'cats' -> 'cat'
    assert 3 not in positions.tolist(), "passages with score 0 are not results"
    assert list(scores) == sorted(scores, reverse=True)


def test_unknown_empty_and_stopword_queries_return_nothing() -> None:
    index = BM25Index.build(TEXTS)
    positions, scores = index.search(["zzzz qqqq", "", "the and"], 5)
    assert [len(p) for p in positions] == [0, 0, 0]


def test_k_larger_than_corpus_and_batch_equals_single() -> None:
    index = BM25Index.build(TEXTS)
    batch, _ = index.search(["cat", "dogs"], 50)
    single = [index.search([q], 50)[0][0] for q in ["cat", "dogs"]]
    assert [b.tolist() for b in batch] == [s.tolist() for s in single]


def test_save_and_load(tmp_path: Path) -> None:
    index = BM25Index.build(TEXTS, BM25Params(k1=1.2, b=0.5))
    index.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25")
    assert loaded.params == BM25Params(k1=1.2, b=0.5)
    a, sa = index.search(["dogs running"], 3)
    b, sb = loaded.search(["dogs running"], 3)
    assert a[0].tolist() == b[0].tolist() and sa[0].tolist() == sb[0].tolist()
