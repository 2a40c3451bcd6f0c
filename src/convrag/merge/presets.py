"""Query-type presets: how a factual, analytical or procedural question changes the merge.

A cheap classifier (word rules) picks the type; a caller with an LLM may classify instead and
pass the type in. Presets follow the design note: factual questions want few, authoritative
passages (little diversity, collections marked official weigh more), analytical ones want
several perspectives (more diversity), procedural ones want whole step-by-step passages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

QUERY_TYPES = ("factual", "analytical", "procedural", "general")

_PROCEDURAL = re.compile(r"^\s*(how (do|can|to|should) (i|we|you)\b|how to\b|steps?\b|what are the steps|guide|set ?up|install|configure|create)", re.I)
_ANALYTICAL = re.compile(r"\b(why|compare|comparison|difference|differ|pros and cons|advantages?|disadvantages?|better|versus|vs\.?|impact|effect of|explain)\b", re.I)
_FACTUAL = re.compile(r"^\s*(who|when|where|which|what (is|was|are|were)|how (much|many|old|long|far|big))\b", re.I)


def classify_query(query: str) -> str:
    """``procedural``, ``analytical``, ``factual`` or ``general``, by word rules (first match wins)."""
    if _PROCEDURAL.search(query):
        return "procedural"
    if _ANALYTICAL.search(query):
        return "analytical"
    if _FACTUAL.search(query):
        return "factual"
    return "general"


@dataclass(frozen=True)
class Preset:
    diversity: float
    official_weight: float = 1.0
    long_passage_bonus: float = 1.0


PRESETS: dict[str, Preset] = {
    "factual": Preset(diversity=0.05, official_weight=1.3),
    "analytical": Preset(diversity=0.2),
    "procedural": Preset(diversity=0.1, long_passage_bonus=1.1),
    "general": Preset(diversity=0.1),
}


def preset_weights(collections: list[str], preset: Preset) -> dict[str, float]:
    """Collection weights a preset implies: names containing "official" get ``official_weight``,
    "wiki" a little more than the rest for factual questions (design note)."""
    weights = {}
    for name in collections:
        lowered = name.lower()
        if "official" in lowered:
            weights[name] = preset.official_weight
        elif "wiki" in lowered and preset.official_weight > 1.0:
            weights[name] = 1.1
        else:
            weights[name] = 1.0
    return weights
