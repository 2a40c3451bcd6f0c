"""Prompt order: strongest passages at the edges, where models attend most ("lost in the middle").

Best first, second best last, the rest in between in score order (design note).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

ORDERINGS = ("score", "edges")


def edges_first(ranked: Sequence[T]) -> list[T]:
    """``ranked`` is best first; returns best, 3rd, 4th, …, 2nd."""
    if len(ranked) <= 2:
        return list(ranked)
    return [ranked[0], *ranked[2:], ranked[1]]
