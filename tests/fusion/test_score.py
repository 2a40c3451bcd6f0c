import pytest
from ranx import Run, fuse

from convrag.fusion.score import combmnz, combsum, normalize


def test_normalizers() -> None:
    run = {"a": 10.0, "b": 5.0, "c": 0.0}
    assert normalize(run, "minmax") == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert normalize(run, "max") == {"a": 1.0, "b": 0.5, "c": 0.0}
    z = normalize(run, "zscore")
    assert sum(z.values()) == pytest.approx(0.0) and z["a"] > z["b"] > z["c"]
    assert normalize({"a": 2.0, "b": 2.0}, "minmax") == {"a": 1.0, "b": 1.0}
    assert normalize({}, "minmax") == {}
    with pytest.raises(ValueError, match="unknown normalization"):
        normalize(run, "softmax")


RUNS = [{"q": {"a": 9.0, "b": 7.5, "c": 3.0}}, {"q": {"c": 0.9, "e": 0.8, "a": 0.2}}]


def test_combsum_parity_with_ranx() -> None:
    ours = combsum([r["q"] for r in RUNS])
    theirs = fuse([Run(r, name=f"r{i}") for i, r in enumerate(RUNS)], norm="min-max", method="sum").to_dict()["q"]
    assert ours == pytest.approx(theirs)


def test_combmnz_parity_with_ranx() -> None:
    ours = combmnz([r["q"] for r in RUNS])
    theirs = fuse([Run(r, name=f"r{i}") for i, r in enumerate(RUNS)], norm="min-max", method="mnz").to_dict()["q"]
    assert ours == pytest.approx(theirs)


def test_weighted_sum() -> None:
    fused = combsum([{"a": 1.0, "b": 0.0}, {"b": 1.0, "a": 0.0}], weights=[0.8, 0.2])
    assert fused == pytest.approx({"a": 0.8, "b": 0.2})
