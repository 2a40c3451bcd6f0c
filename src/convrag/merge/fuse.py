"""Fusing ranked lists from several collections into one score per passage.

RRF (constant ``rrf_k``, 60) ignores score scales, so collections searched with different models
or retrievers combine fairly; score fusion (CombSUM / CombMNZ over min-max or z-score
normalized scores) uses the scores themselves. Both are the :mod:`convrag.fusion` methods
(parity-tested against ranx), applied with one weight per collection; what this module adds is
the merge's need to keep every collection's copy of a passage for attribution.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence

from ..fusion import RRF_K, get_fusion
from ..types import SourcedHit


def fuse(
    results: Mapping[str, Sequence[SourcedHit]],
    method: str = "rrf",
    weights: Mapping[str, float] | None = None,
    rrf_k: float = RRF_K,
    norm: str = "minmax",
    top: int | None = None,
) -> tuple[list[SourcedHit], dict[str, float]]:
    """Hits in fused order (best first; ties by collection order then rank) and the fused score
    per passage id. With ``top``, only the hits of the ``top`` best passage ids (every collection's
    copy of each, so duplicates can still be attributed)."""
    names = [name for name in results if results[name]]
    w = [float((weights or {}).get(n, 1.0)) for n in names]
    fused = get_fusion(method)([[(h.key, h.score) for h in results[n]] for n in names], w, rrf_k=rrf_k, norm=norm)
    order = {n: i for i, n in enumerate(names)}
    if top is not None and top < len(fused):
        best = set(heapq.nlargest(top, fused, key=fused.__getitem__))
        every = [h for n in names for h in results[n] if h.key in best]
    else:
        every = [h for n in names for h in results[n]]
    every.sort(key=lambda h: (-fused[h.key], order[h.collection], h.rank))
    return every, fused
