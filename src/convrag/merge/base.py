"""The values every merge step passes along: hits that remember where they came from, merged
results that say why they were kept, and the record of what was dropped and why."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..types import SourcedHit


@dataclass(frozen=True)
class MergedResult:
    """A kept passage: its hit, the fused score, the score after weights, signals and diversity,
    the token count it costs in a prompt, and a human-readable reason for keeping it."""

    hit: SourcedHit
    fused_score: float
    final_score: float
    selection_reason: str
    tokens: int = 0
    also_in: tuple[str, ...] = ()
    conflicts_with: tuple[int, ...] = ()


class Dropped(NamedTuple):
    """A passage the merge left out: ``reason`` is ``duplicate``, ``diversity``, ``budget`` (its
    tokens do not fit the budget) or ``passages`` (beyond the number allowed)."""

    hit: SourcedHit
    reason: str
    detail: str


@dataclass
class MergeOutcome:
    """What a merge returns: the kept results in prompt order, what was dropped, and the settings used."""

    results: list[MergedResult]
    dropped: list[Dropped] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        def hit(h: SourcedHit) -> dict[str, Any]:
            return {"collection": h.collection, "passage_id": h.passage_id, "document_id": h.document_id, "title": h.title,
                    "url": h.url, "score": h.score, "rank": h.rank}

        return {
            "results": [
                {**hit(r.hit), "fused_score": r.fused_score, "final_score": r.final_score, "tokens": r.tokens,
                 "selection_reason": r.selection_reason, "also_in": list(r.also_in), "conflicts_with": list(r.conflicts_with)}
                for r in self.results
            ],
            "dropped": [{**hit(d.hit), "reason": d.reason, "detail": d.detail} for d in self.dropped],
            "settings": self.settings,
            "seconds": self.seconds,
        }
