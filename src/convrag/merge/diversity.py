"""Diversity: penalize a passage by its similarity to the passages ranked above it.

final = score x (1 - factor x max similarity to already selected passages) (design note).
Similarity is word-set Jaccard, or embedding cosine when vectors are given. A passage
whose similarity reaches ``drop_at`` is a near-duplicate and is dropped (reason ``diversity``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def word_set(text: str) -> frozenset[str]:
    """Lower-cased whitespace-separated words, as in the design note (cheap: no regex)."""
    return frozenset(text.lower().split())


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    inter = len(a & b)
    union = len(a) + len(b) - inter
    return inter / union if union else 0.0


def max_similarities(texts: Sequence[str], vectors: np.ndarray | None = None) -> list[tuple[float, int]]:
    """For each item, its highest similarity to any item before it, and that item's index (-1 for the first)."""
    out: list[tuple[float, int]] = []
    if vectors is not None:
        sims = vectors @ vectors.T
        for i in range(len(texts)):
            if i == 0:
                out.append((0.0, -1))
            else:
                j = int(np.argmax(sims[i, :i]))
                out.append((float(sims[i, j]), j))
        return out
    sets = [word_set(t) for t in texts]
    for i in range(len(sets)):
        best, who = 0.0, -1
        for j in range(i):
            s = jaccard(sets[i], sets[j])
            if s > best:
                best, who = s, j
        out.append((best, who))
    return out
