"""The ``k`` best positions of a score vector, deterministically: ties go to the lower position.

Shared by the BM25 and dense indexes so that both rank equal scores the same way (the order
trec_eval would give is by document id, which evaluation applies on top).
"""

from __future__ import annotations

import numpy as np


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` largest values of the 1-d ``scores``, best first, ties by position."""
    n = scores.shape[0]
    k = min(k, n)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    candidates = np.arange(n) if k >= n else np.argpartition(-scores, k - 1)[:k]
    return candidates[np.lexsort((candidates, -scores[candidates]))]
