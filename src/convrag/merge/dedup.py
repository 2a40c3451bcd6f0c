"""Duplicates across collections: the same passage id, or the same text under another id.

The first occurrence in fused order is kept (and learns the other collections it was found in);
later ones are dropped with reason ``duplicate``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ..types import SourcedHit
from .base import Dropped


def text_key(text: str) -> str:
    """Equal for texts that differ only in case and spacing."""
    return hashlib.blake2b(" ".join(text.lower().split()).encode("utf-8"), digest_size=16).hexdigest()


def deduplicate(ordered: Sequence[SourcedHit]) -> tuple[list[SourcedHit], dict[int, tuple[str, ...]], list[Dropped]]:
    """Keep first occurrences; returns the kept hits, for each kept index the other collections
    holding the same passage, and the dropped duplicates."""
    kept: list[SourcedHit] = []
    also: dict[int, list[str]] = {}
    seen: dict[str, int] = {}
    dropped: list[Dropped] = []
    text_keys: dict[str, str] = {}
    for hit in ordered:
        if hit.passage_id not in text_keys:
            text_keys[hit.passage_id] = text_key(hit.text)
        keys = (f"id:{hit.passage_id}", f"text:{text_keys[hit.passage_id]}")
        first = next((seen[k] for k in keys if k in seen), None)
        if first is not None:
            original = kept[first]
            if hit.collection != original.collection:
                also.setdefault(first, []).append(hit.collection)
            dropped.append(Dropped(hit, "duplicate", f"same {'passage id' if hit.passage_id == original.passage_id else 'text'} "
                                                     f"as {original.collection}/{original.passage_id}"))
            continue
        for k in keys:
            seen[k] = len(kept)
        kept.append(hit)
    return kept, {i: tuple(dict.fromkeys(c)) for i, c in also.items()}, dropped
