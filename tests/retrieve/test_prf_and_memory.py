"""Pseudo-relevance feedback and conversation memory: options that were measured, not defaults."""

import pytest

from convrag.errors import ConfigError
from convrag.retrieve.memory import boost_with_memory
from convrag.retrieve.prf import RM3, Rocchio, expansion_terms
from convrag.retrieve.registry import make_retriever
from convrag.types import Hit


def test_expansion_terms_are_frequent_new_content_words() -> None:
    passages = ["Glendale stadium has a retractable roof.", "The stadium roof opens in spring; Glendale hosts games."]
    assert expansion_terms("where is the stadium", passages, 2) == ["glendale", "roof"]


def test_rm3_and_rocchio_search_with_feedback(tiny_collection, embedder) -> None:
    rm3 = make_retriever("bm25", tiny_collection, prf="rm3")
    assert isinstance(rm3, RM3)
    expanded = rm3.expand(["Cardinals London"])[0]
    assert expanded.startswith("Cardinals London Cardinals London") and len(expanded.split()) > 4
    assert rm3.search(["Cardinals London"], 2)[0][0].doc_id == "p3"
    rocchio = make_retriever("dense", tiny_collection, embedder, prf="rocchio")
    assert isinstance(rocchio, Rocchio) and rocchio.search(["passport renewal fee"], 1)[0][0].doc_id == "p2"
    hybrid = make_retriever("hybrid", tiny_collection, embedder, prf="both")
    assert isinstance(hybrid.sparse, RM3) and isinstance(hybrid.dense, Rocchio)
    with pytest.raises(ConfigError, match="pseudo-relevance"):
        make_retriever("bm25", tiny_collection, prf="magic")


def test_memory_boosts_what_earlier_turns_found() -> None:
    now = [Hit("a", 0.90, "", ""), Hit("b", 0.88, "", ""), Hit("c", 0.50, "", "")]
    before = [[Hit("b", 0.7, "", ""), Hit("x", 0.6, "", "")]]
    boosted = boost_with_memory(now, before, weight=0.05)
    assert [h.doc_id for h in boosted] == ["b", "a", "c"] and [h.rank for h in boosted] == [1, 2, 3]
    assert boost_with_memory(now, [], weight=0.05) == [h._replace(rank=i) for i, h in enumerate(now, start=1)]
