"""Reciprocal Rank Fusion (Cormack, Clarke and Büttcher, SIGIR 2009).

Each list contributes ``weight / (rrf_k + rank)`` for every id it ranks, ranks starting at 1.
It ignores score scales, which is why it is the default way to combine retrievers (and query
renderings) whose scores are not comparable. ``rrf_k`` is the RRF constant, never a depth.
"""

from __future__ import annotations

from collections.abc import Sequence

from .base import Ranking, Run, check_weights

RRF_K = 60.0


def ranked_ids(run: Run) -> list[str]:
    """Ids of a run, best first; equal scores are ordered by id so fusion is deterministic."""
    return [doc_id for doc_id, _ in sorted(run.items(), key=lambda item: (-item[1], item[0]))]


def rrf(rankings: Sequence[Ranking], rrf_k: float = RRF_K, weights: Sequence[float] | None = None) -> dict[str, float]:
    """RRF over rankings taken as they are (list position = rank); a repeated id counts once per list."""
    fused: dict[str, float] = {}
    get = fused.get
    for ranking, weight in zip(rankings, check_weights(weights, len(rankings))):
        seen: set[str] = set()
        rank = 0
        for key in ranking:
            if key in seen:
                continue
            seen.add(key)
            rank += 1
            fused[key] = get(key, 0.0) + weight / (rrf_k + rank)
    return fused


def reciprocal_rank_fusion(runs: Sequence[Run], rrf_k: float = RRF_K, weights: Sequence[float] | None = None) -> dict[str, float]:
    """RRF over scored runs, each ranked by score (ties by id); returns ``{id: fused score}``."""
    return rrf([ranked_ids(run) for run in runs], rrf_k, weights)
