import pytest
from ranx import Run, fuse

from convrag.fusion.rrf import ranked_ids, reciprocal_rank_fusion, rrf


def test_hand_computed() -> None:
    a = {"x": 3.0, "y": 2.0}
    b = {"y": 0.9, "z": 0.1}
    fused = reciprocal_rank_fusion([a, b], rrf_k=60)
    assert fused == pytest.approx({"x": 1 / 61, "y": 1 / 62 + 1 / 61, "z": 1 / 62})


def test_weights_and_validation() -> None:
    fused = reciprocal_rank_fusion([{"x": 1.0}, {"x": 1.0}], rrf_k=0, weights=[2.0, 0.5])
    assert fused["x"] == pytest.approx(2.5)
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([{"x": 1.0}], weights=[1.0, 2.0])


def test_ties_are_broken_by_id() -> None:
    assert ranked_ids({"b": 1.0, "a": 1.0, "c": 2.0}) == ["c", "a", "b"]


def test_parity_with_ranx() -> None:
    runs = [
        {"q": {"a": 9.0, "b": 7.5, "c": 3.0, "d": 1.0}},
        {"q": {"c": 0.9, "e": 0.8, "a": 0.2}},
        {"q": {"f": 12.0, "a": 11.0, "b": 10.0}},
    ]
    ours = reciprocal_rank_fusion([r["q"] for r in runs], rrf_k=60)
    theirs = fuse([Run(r, name=f"r{i}") for i, r in enumerate(runs)], method="rrf", params={"k": 60}).to_dict()["q"]
    assert ours == pytest.approx(theirs)


def test_rankings_count_each_id_once_per_list() -> None:
    assert rrf([["a", "b", "a"], ["b"]], rrf_k=0) == pytest.approx({"a": 1.0, "b": 0.5 + 1.0})
