"""Fusion methods by name, each ``method(runs, weights, rrf_k=..., norm=...) -> {id: score}``.

``rrf`` ranks each run by its order (scores are ignored), ``combsum`` and ``combmnz`` add
normalized scores. Runs are lists of ``(id, score)`` pairs in rank order, so that a method
that needs ranks and one that needs scores read the same input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..errors import ConfigError
from .rrf import RRF_K, rrf
from .score import combmnz, combsum

Pairs = Sequence[tuple[str, float]]
Fusion = Callable[..., dict[str, float]]


def _first(pairs: Pairs) -> dict[str, float]:
    run: dict[str, float] = {}
    for key, score in pairs:
        run.setdefault(key, score)
    return run


def _rrf(runs: Sequence[Pairs], weights: Sequence[float] | None = None, rrf_k: float = RRF_K, norm: str = "minmax") -> dict[str, float]:
    return rrf([[key for key, _ in pairs] for pairs in runs], rrf_k, weights)


def _combsum(runs: Sequence[Pairs], weights: Sequence[float] | None = None, rrf_k: float = RRF_K, norm: str = "minmax") -> dict[str, float]:
    return combsum([_first(p) for p in runs], weights, norm)


def _combmnz(runs: Sequence[Pairs], weights: Sequence[float] | None = None, rrf_k: float = RRF_K, norm: str = "minmax") -> dict[str, float]:
    return combmnz([_first(p) for p in runs], weights, norm)


FUSIONS: dict[str, Fusion] = {"rrf": _rrf, "combsum": _combsum, "combmnz": _combmnz}


def get_fusion(name: str) -> Fusion:
    if name not in FUSIONS:
        raise ConfigError(f"unknown fusion {name!r}; expected one of {', '.join(FUSIONS)}")
    return FUSIONS[name]
