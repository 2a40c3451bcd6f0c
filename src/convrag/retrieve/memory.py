"""Conversation memory: passages retrieved for the earlier turns of a conversation as a prior.

A follow-up often needs a passage an earlier turn already found (29 % of MT-RAG's follow-up tasks
share a judged-relevant passage with an earlier turn). :func:`boost_with_memory` adds ``weight`` to
the fused score of every candidate that the last ``turns`` turns retrieved in their top ten, and
re-ranks. An option, measured on the dev split and not the default: it moved ALL-3 nDCG@10 by less
than 0.003 either way, and rank fusion with the earlier lists lowered it (docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..fusion.base import H


def boost_with_memory(hits: Sequence[H], earlier: Sequence[Sequence[H]], weight: float = 0.05, top: int = 10,
                      k: int | None = None) -> list[H]:
    """``hits`` re-ranked with ``weight`` added to those the earlier turns' lists hold in their ``top``."""
    seen = {h.key for hits_of_turn in earlier for h in hits_of_turn[:top]}
    ranked = sorted(hits, key=lambda h: -(h.score + (weight if h.key in seen else 0.0)))
    ranked = ranked[:k] if k is not None else ranked
    return [h._replace(score=h.score + (weight if h.key in seen else 0.0), rank=i) for i, h in enumerate(ranked, start=1)]
