"""Score fusion: normalize each run's scores, then add them (CombSUM) or add and scale by hits (CombMNZ).

Raw BM25 scores (unbounded) and cosine similarities (at most 1) cannot be added
as they are; normalization puts every run on a comparable scale first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .base import Run, check_weights

NORMALIZERS = ("minmax", "zscore", "max", "none")


def normalize(run: Run, method: str = "minmax") -> dict[str, float]:
    """Rescale one run's scores. ``minmax`` maps to [0, 1]; a run with equal scores maps to 1."""
    if not run or method == "none":
        return dict(run)
    values = list(run.values())
    if method == "minmax":
        low, high = min(values), max(values)
        if high == low:
            return {doc_id: 1.0 for doc_id in run}
        return {doc_id: (score - low) / (high - low) for doc_id, score in run.items()}
    if method == "zscore":
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        if std == 0:
            return {doc_id: 0.0 for doc_id in run}
        return {doc_id: (score - mean) / std for doc_id, score in run.items()}
    if method == "max":
        high = max(values)
        return {doc_id: (score / high if high else 0.0) for doc_id, score in run.items()}
    raise ValueError(f"unknown normalization {method!r}; expected one of {', '.join(NORMALIZERS)}")


def combsum(runs: Sequence[Run], weights: Sequence[float] | None = None, norm: str = "minmax") -> dict[str, float]:
    """Weighted sum of normalized scores; a document missing from a run gets nothing from it."""
    fused: dict[str, float] = {}
    for run, weight in zip(runs, check_weights(weights, len(runs))):
        for doc_id, score in normalize(run, norm).items():
            fused[doc_id] = fused.get(doc_id, 0.0) + weight * score
    return fused


def combmnz(runs: Sequence[Run], weights: Sequence[float] | None = None, norm: str = "minmax") -> dict[str, float]:
    """CombSUM multiplied by the number of runs that retrieved the document."""
    summed = combsum(runs, weights, norm)
    hits = {doc_id: sum(1 for run in runs if doc_id in run) for doc_id in summed}
    return {doc_id: score * hits[doc_id] for doc_id, score in summed.items()}
