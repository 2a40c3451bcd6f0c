"""Merge methods by name. ``rrf``, ``combsum`` and ``combmnz`` are plain fusions (no signals,
no diversity, no reordering) that still deduplicate and respect the token budget;
``enhanced`` is the full design-note merge."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..errors import ConfigError
from ..types import SourcedHit
from .base import MergeOutcome
from .enhanced import MergeSettings, enhanced_merge

Merger = Callable[..., MergeOutcome]


def _plain(fusion: str) -> Merger:
    def merge(results: Mapping[str, Sequence[SourcedHit]], query: str = "", settings: MergeSettings = MergeSettings(), **kw: Any) -> MergeOutcome:
        plain = replace(settings, fusion=fusion, signals=None, diversity=0.0, drop_at=1.01, order="score", detect_conflicts=False)
        return enhanced_merge(results, query, plain, **kw)

    return merge


MERGERS: dict[str, Merger] = {
    "rrf": _plain("rrf"),
    "combsum": _plain("combsum"),
    "combmnz": _plain("combmnz"),
    "enhanced": enhanced_merge,
}


def make_merger(name: str) -> Merger:
    if name not in MERGERS:
        raise ConfigError(f"unknown merge method {name!r}; expected one of {', '.join(MERGERS)}")
    return MERGERS[name]
