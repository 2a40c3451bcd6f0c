"""Fusing ranked lists of hits into one ranked list: the one routine behind hybrid retrieval
(BM25 + dense), multi-query fusion (several renderings of a turn) and evaluation runs.

Each list is taken in its order; the fused list holds each key once (its first hit, with the
fused score and its new rank), best first, equal scores ordered by key, cut at ``depth``. A
single list is returned as it is (its own scores kept: a caller may compare them across lists
of other collections, as the pipeline does with raw dense cosines).
"""

from __future__ import annotations

from collections.abc import Sequence

from .base import H
from .registry import get_fusion
from .rrf import RRF_K


def fuse_lists(
    lists: Sequence[Sequence[H]],
    method: str = "rrf",
    weights: Sequence[float] | None = None,
    rrf_k: float = RRF_K,
    norm: str = "minmax",
    depth: int | None = None,
) -> list[H]:
    if len(lists) == 1:
        return list(lists[0][:depth] if depth is not None else lists[0])
    fused = get_fusion(method)([[(h.key, h.score) for h in hits] for hits in lists], weights, rrf_k=rrf_k, norm=norm)
    first: dict[str, H] = {}
    for hits in lists:
        for h in hits:
            first.setdefault(h.key, h)
    ranked = sorted(fused, key=lambda key: (-fused[key], key))
    if depth is not None:
        ranked = ranked[:depth]
    return [first[key]._replace(score=fused[key], rank=i) for i, key in enumerate(ranked, start=1)]
