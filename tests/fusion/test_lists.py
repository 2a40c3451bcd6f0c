"""fuse_lists: the one routine that fuses ranked hit lists (hybrid, multi-query, evaluation)."""

import pytest

from convrag.errors import ConfigError
from convrag.fusion import FUSIONS, fuse_lists, get_fusion, reciprocal_rank_fusion
from convrag.types import Hit, SourcedHit


def hits(ids: list[str], scores: list[float] | None = None) -> list[Hit]:
    return [Hit(d, (scores or [10.0 - i for i in range(len(ids))])[i], f"text {d}", d, rank=i + 1) for i, d in enumerate(ids)]


def test_rrf_of_lists_equals_rrf_of_runs_and_keeps_first_hits() -> None:
    a, b = hits(["x", "y", "z"]), hits(["y", "w"], [0.9, 0.8])
    fused = fuse_lists([a, b], "rrf", rrf_k=60)
    expected = reciprocal_rank_fusion([{h.doc_id: h.score for h in a}, {h.doc_id: h.score for h in b}], rrf_k=60)
    assert [h.doc_id for h in fused] == sorted(expected, key=lambda d: (-expected[d], d))
    assert [h.score for h in fused] == pytest.approx(sorted(expected.values(), reverse=True))
    assert [h.rank for h in fused] == [1, 2, 3, 4] and fused[0].text == "text y"


def test_depth_weights_and_score_fusion() -> None:
    a, b = hits(["x", "y"], [2.0, 1.0]), hits(["y", "x"], [1.0, 0.0])
    assert [h.doc_id for h in fuse_lists([a, b], "rrf", weights=[1.0, 3.0], depth=1)] == ["y"]
    summed = fuse_lists([a, b], "combsum", weights=[0.8, 0.2])
    assert {h.doc_id: round(h.score, 6) for h in summed} == {"x": 0.8, "y": 0.2}


def test_a_single_list_keeps_its_own_scores() -> None:
    only = hits(["x", "y", "z"], [0.91, 0.85, 0.2])
    assert fuse_lists([only], depth=2) == only[:2]


def test_sourced_hits_fuse_on_passage_id_across_collections() -> None:
    one = [SourcedHit("faq", "p1", "d", "t", score=0.9, rank=1), SourcedHit("faq", "p2", "d", "t", score=0.5, rank=2)]
    two = [SourcedHit("docs", "p2", "d", "t", score=0.7, rank=1)]
    fused = fuse_lists([one, two])
    assert [(h.passage_id, h.collection) for h in fused] == [("p2", "faq"), ("p1", "faq")]


def test_registry_names_every_method() -> None:
    assert set(FUSIONS) == {"rrf", "combsum", "combmnz"}
    with pytest.raises(ConfigError, match="unknown fusion 'score'"):
        get_fusion("score")
