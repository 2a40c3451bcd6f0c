"""Fusing ranked lists from several collections into one score per passage.

RRF (k = 60) ignores score scales, so collections searched with different models or
retrievers combine fairly; score fusion (CombSUM / CombMNZ over min-max or z-score
normalized scores) uses the scores themselves. Both are the ``convrag.fusion`` functions
(parity-tested against ranx), applied with one weight per collection.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence

from ..fusion.score import combmnz, combsum
from .base import SourcedHit

FUSIONS = ("rrf", "combsum", "combmnz")


def _run(hits: Sequence[SourcedHit]) -> dict[str, float]:
    """One collection's list as ``{passage id: score}``, first occurrence winning."""
    run: dict[str, float] = {}
    for h in hits:
        run.setdefault(hit_key(h), h.score)
    return run


def hit_key(hit: SourcedHit) -> str:
    """Passages are fused by passage id: the same passage found in two collections is one passage."""
    return hit.passage_id


def rrf_by_position(lists: Sequence[Sequence[SourcedHit]], k: float, weights: Sequence[float]) -> dict[str, float]:
    """RRF straight from list order (each list is already ranked): ``sum weight / (k + rank)``.
    Equal to :func:`convrag.fusion.rrf.reciprocal_rank_fusion` on the same rankings (tested),
    without re-sorting lists that are sorted already."""
    fused: dict[str, float] = {}
    get = fused.get
    for hits, weight in zip(lists, weights):
        seen: set[str] = set()
        add = seen.add
        for rank, hit in enumerate(hits, start=1):
            key = hit.passage_id
            if key not in seen:
                add(key)
                fused[key] = get(key, 0.0) + weight / (k + rank)
    return fused


def fuse(
    results: Mapping[str, Sequence[SourcedHit]],
    method: str = "rrf",
    weights: Mapping[str, float] | None = None,
    k: float = 60.0,
    norm: str = "minmax",
    top: int | None = None,
) -> tuple[list[SourcedHit], dict[str, float]]:
    """Hits in fused order (best first; ties by collection order then rank) and the fused score
    per passage id. With ``top``, only the hits of the ``top`` best passage ids (every collection's
    copy of each, so duplicates can still be attributed)."""
    names = [name for name in results if results[name]]
    runs = [_run(results[n]) for n in names] if method != "rrf" else []
    w = [float((weights or {}).get(n, 1.0)) for n in names]
    if method == "rrf":
        fused = rrf_by_position([results[n] for n in names], k, w)
    elif method == "combsum":
        fused = combsum(runs, w, norm)
    elif method == "combmnz":
        fused = combmnz(runs, w, norm)
    else:
        raise ValueError(f"unknown fusion {method!r}; expected one of {', '.join(FUSIONS)}")
    order = {n: i for i, n in enumerate(names)}
    if top is not None and top < len(fused):
        best = set(heapq.nlargest(top, fused, key=fused.__getitem__))
        every = [h for n in names for h in results[n] if hit_key(h) in best]
    else:
        every = [h for n in names for h in results[n]]
    every.sort(key=lambda h: (-fused[hit_key(h)], order[h.collection], h.rank))
    return every, fused
