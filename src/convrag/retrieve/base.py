"""The retriever interface every search method implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from ..index.collection import Collection
from ..types import Hit


@runtime_checkable
class Retriever(Protocol):
    """Batched search: one ranked list of at most ``k`` hits per query, best first."""

    name: str

    def search(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]: ...


def hits_from_positions(collection: Collection, positions: np.ndarray, scores: np.ndarray) -> list[Hit]:
    """Turn index positions and scores into :class:`Hit` values carrying the passage's text and title."""
    hits = []
    for rank, (position, score) in enumerate(zip(positions.tolist(), scores.tolist()), start=1):
        passage = collection.passages[position]
        hits.append(Hit(passage.doc_id, float(score), passage.text, passage.title, passage.url, rank))
    return hits
