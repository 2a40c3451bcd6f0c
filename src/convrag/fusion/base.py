"""What fusion works on: runs (``{id: score}``), rankings (ids best first), and ranked hits.

A ranked hit is any result type with a ``key`` (the id fusion matches on), a ``score`` and a
``rank`` that can be copied with new values (``_replace``): :class:`convrag.types.Hit` (a passage
of one collection) and :class:`convrag.types.SourcedHit` (a passage with its collection).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

Run = Mapping[str, float]
Ranking = Sequence[str]


class Ranked(Protocol):
    @property
    def key(self) -> str: ...

    @property
    def score(self) -> float: ...

    @property
    def rank(self) -> int: ...

    def _replace(self, **fields: Any) -> Any: ...


H = TypeVar("H", bound=Ranked)


def check_weights(weights: Sequence[float] | None, n: int) -> list[float]:
    """One weight per list (1.0 each when none are given)."""
    if weights is None:
        return [1.0] * n
    if len(weights) != n:
        raise ValueError(f"{len(weights)} weights for {n} runs")
    return [float(w) for w in weights]
