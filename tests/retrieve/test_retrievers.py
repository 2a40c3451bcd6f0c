import pytest

from convrag.errors import ConfigError
from convrag.index.collection import Collection
from convrag.retrieve import RETRIEVERS, Retriever, make_retriever
from convrag.retrieve.hybrid import HybridRetriever


@pytest.mark.parametrize("name", sorted(RETRIEVERS))
def test_each_retriever_finds_the_obvious_passage(tiny_collection: Collection, name: str) -> None:
    retriever = make_retriever(name, tiny_collection)
    assert isinstance(retriever, Retriever) and retriever.name == name
    results = retriever.search(["how much does a passport renewal cost", "Cardinals played in London"], 3)
    assert results[0][0].doc_id == "p2"
    assert results[1][0].doc_id == "p3"
    for hits in results:
        assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert all(h.text and h.title for h in hits)


@pytest.mark.parametrize("name", sorted(RETRIEVERS))
def test_batched_equals_one_at_a_time(tiny_collection: Collection, name: str) -> None:
    retriever = make_retriever(name, tiny_collection)
    queries = ["index funds fees", "object storage buckets", "court fees"]
    batched = retriever.search(queries, 4)
    single = [retriever.search([q], 4)[0] for q in queries]
    assert [[h.doc_id for h in hits] for hits in batched] == [[h.doc_id for h in hits] for hits in single]


def test_empty_query_list_and_empty_query(tiny_collection: Collection) -> None:
    for name in RETRIEVERS:
        retriever = make_retriever(name, tiny_collection)
        assert retriever.search([], 5) == []
    assert make_retriever("bm25", tiny_collection).search([""], 5) == [[]]


def test_hybrid_rrf_scores(tiny_collection: Collection) -> None:
    hybrid = make_retriever("hybrid", tiny_collection, fusion="rrf", alpha=None)
    hits = hybrid.search(["passport renewal cost"], 6)[0]
    # p2 is first in both lists: 2 / (60 + 1)
    assert hits[0].doc_id == "p2" and hits[0].score == pytest.approx(2 / 61)


def test_hybrid_weighted_rrf(tiny_collection: Collection) -> None:
    plain = make_retriever("hybrid", tiny_collection, fusion="rrf", alpha=None).search(["passport renewal cost"], 6)[0]
    dense_only = make_retriever("hybrid", tiny_collection, fusion="rrf", alpha=1.0).search(["passport renewal cost"], 6)[0]
    dense = make_retriever("dense", tiny_collection).search(["passport renewal cost"], 6)[0]
    assert [h.doc_id for h in dense_only] == [h.doc_id for h in dense]
    assert dense_only[0].score == pytest.approx(2 / 61) and plain[0].score == pytest.approx(2 / 61)


def test_hybrid_score_fusion_option(tiny_collection: Collection) -> None:
    hybrid = make_retriever("hybrid", tiny_collection, fusion="combsum", alpha=0.5)
    top = hybrid.search(["passport renewal cost"], 3)[0][0]
    assert top.doc_id == "p2" and top.score == pytest.approx(1.0)  # max-normalized in both lists
    with pytest.raises(ConfigError, match="unknown fusion"):
        HybridRetriever(hybrid.sparse, hybrid.dense, fusion="magic")


def test_unknown_retriever(tiny_collection: Collection) -> None:
    with pytest.raises(ConfigError, match="unknown retriever 'elser'"):
        make_retriever("elser", tiny_collection)


def test_the_default_hybrid_is_dense_weighted_score_fusion(tiny_collection: Collection) -> None:
    hybrid = make_retriever("hybrid", tiny_collection)
    assert (hybrid.fusion, hybrid.alpha) == ("combsum", 0.7)
    hits = hybrid.search(["passport renewal cost"], 6)[0]
    assert hits[0].doc_id == "p2" and hits[0].score == pytest.approx(1.0)  # best of both lists: 0.3 + 0.7


@pytest.mark.parametrize("name", sorted(RETRIEVERS))
def test_a_retriever_keeps_searching_its_version_after_a_newer_build(tmp_path, tiny_passages, embedder, name) -> None:
    """A retriever loads its index when it is made: a build published later (an upload indexed while a
    question is being rewritten) removes the version it searches, which used to fail at its first search."""
    path = tmp_path / "c"
    retriever = make_retriever(name, Collection.build(path, tiny_passages, embedder=embedder))
    newer = Collection.build(path, tiny_passages[:1], embedder=embedder)
    assert retriever.search(["how much does a passport renewal cost"], 3)[0][0].doc_id == "p2"
    assert [h.doc_id for h in make_retriever(name, newer).search(["Cardinals home games stadium"], 3)[0]] == ["p1"]
