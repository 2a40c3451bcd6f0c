"""Collection routing: which of several collections a conversational turn is about.

Rank fusion across collections gives every collection's top hit the same weight, so off-topic
collections crowd out the relevant one (on MT-RAG's four domains as four collections, RRF fell to
less than half of the per-domain score). Dense cosines, unlike BM25 scores, are comparable across
collections embedded with one model, so each collection is scored by the mean cosine of its best
``top`` passages for the current query, plus the same for the user's earlier questions with
weight ``decay``, ``decay**2``, ... (a conversation rarely changes collection between turns). The
turn searches the collections within ``margin`` (scaled by the weights used) of the best; the
others are dropped from the merge and named in the trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RoutingSettings:
    """Chosen on the dev split (docs/benchmarks.md): margin 0.05, decay 0.8, three earlier questions."""

    top: int = 3
    decay: float = 0.8
    earlier: int = 3
    margin: float = 0.05


@dataclass(frozen=True)
class Routing:
    """Per collection: its score, and whether the turn kept it."""

    scores: dict[str, float]
    kept: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {"scores": {k: round(v, 4) for k, v in self.scores.items()}, "kept": list(self.kept),
                "dropped": [n for n in self.scores if n not in self.kept]}


def evidence(similarities: np.ndarray, top: int) -> float:
    """Mean of the ``top`` highest cosines of one query against one collection."""
    if similarities.size == 0:
        return 0.0
    k = min(top, similarities.size)
    return float(np.mean(np.partition(similarities, -k)[-k:]))


def route(
    current: Mapping[str, float], earlier: Sequence[Mapping[str, float]] = (), settings: RoutingSettings = RoutingSettings()
) -> Routing:
    """Collections to keep from per-collection evidence for the current query and for the earlier
    questions (most recent first); collections without evidence (no dense index) are always kept."""
    weights = [settings.decay ** (j + 1) for j in range(min(len(earlier), settings.earlier))]
    scores = {name: value + sum(w * e.get(name, 0.0) for w, e in zip(weights, earlier)) for name, value in current.items()}
    if not scores:
        return Routing({}, ())
    best = max(scores.values())
    margin = settings.margin * (1 + sum(weights))
    return Routing(scores, tuple(name for name, score in scores.items() if score >= best - margin))
