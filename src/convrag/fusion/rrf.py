"""Reciprocal Rank Fusion (Cormack, Clarke and Büttcher, SIGIR 2009).

Each list contributes ``weight / (k + rank)`` for every document it ranks, ranks
starting at 1. It ignores score scales, which is why it is the default way to
combine retrievers (and collections) whose scores are not comparable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Run = Mapping[str, float]


def ranked_ids(run: Run) -> list[str]:
    """Document ids of a run, best first; equal scores are ordered by id so fusion is deterministic."""
    return [doc_id for doc_id, _ in sorted(run.items(), key=lambda item: (-item[1], item[0]))]


def reciprocal_rank_fusion(
    runs: Sequence[Run], k: float = 60.0, weights: Sequence[float] | None = None
) -> dict[str, float]:
    """Fuse runs by RRF; returns ``{doc_id: fused score}`` (unsorted)."""
    if weights is not None and len(weights) != len(runs):
        raise ValueError(f"{len(weights)} weights for {len(runs)} runs")
    fused: dict[str, float] = {}
    for index, run in enumerate(runs):
        weight = 1.0 if weights is None else weights[index]
        for rank, doc_id in enumerate(ranked_ids(run), start=1):
            fused[doc_id] = fused.get(doc_id, 0.0) + weight / (k + rank)
    return fused
