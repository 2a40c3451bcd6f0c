"""Maximal Marginal Relevance: pick items relevant to a query yet unlike those already picked.

score(s) = lambda * sim(s, query) - (1 - lambda) * max_{t in selected} sim(s, t)
"""

from __future__ import annotations

import numpy as np


def mmr_select(query: np.ndarray, candidates: np.ndarray, k: int, lambda_: float = 0.7) -> list[int]:
    """Indices of ``k`` candidates in selection order. Vectors are L2-normalized (dot = cosine)."""
    n = len(candidates)
    if n == 0 or k <= 0:
        return []
    relevance = candidates @ query
    pairwise = candidates @ candidates.T
    selected: list[int] = []
    remaining = list(range(n))
    while remaining and len(selected) < k:
        if selected:
            redundancy = pairwise[np.ix_(remaining, selected)].max(axis=1)
        else:
            redundancy = np.zeros(len(remaining))
        scores = lambda_ * relevance[remaining] - (1 - lambda_) * redundancy
        best = remaining[int(np.argmax(scores))]
        selected.append(best)
        remaining.remove(best)
    return selected
