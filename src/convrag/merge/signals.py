"""Quality signals: small multipliers for passage length, a title, the document type and recency.

Each signal is configurable (set a multiplier to 1.0 to switch it off). Length is counted in
characters as in the design note; recency reads ``metadata["created_at"]`` (ISO date or
datetime) where a collection has it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from ..types import SourcedHit


@dataclass(frozen=True)
class QualitySignals:
    length_band: tuple[int, int] = (200, 1000)
    in_band: float = 1.1
    too_short_below: int = 100
    too_short: float = 0.8
    too_long_above: int = 2000
    too_long: float = 0.9
    has_title: float = 1.05
    doc_types: tuple[tuple[str, float], ...] = (("pdf", 1.02),)
    recent_days: int = 30
    recent: float = 1.03


def _created(value: object) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value)
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    return None


def quality_multiplier(hit: SourcedHit, signals: QualitySignals, now: dt.datetime | None = None) -> tuple[float, list[str]]:
    """The product of the signals that apply to ``hit``, and their names (for the selection reason)."""
    factor, reasons = 1.0, []
    length = len(hit.text)
    low, high = signals.length_band
    if low <= length <= high:
        factor *= signals.in_band
        reasons.append("good length")
    elif length < signals.too_short_below:
        factor *= signals.too_short
        reasons.append("very short")
    elif length > signals.too_long_above:
        factor *= signals.too_long
        reasons.append("very long")
    if hit.title:
        factor *= signals.has_title
        reasons.append("titled")
    doc_type = str(hit.metadata.get("file_type", "")).lower()
    for name, mult in signals.doc_types:
        if doc_type == name:
            factor *= mult
            reasons.append(f"{name} document")
    created = _created(hit.metadata.get("created_at"))
    if created is not None:
        now = now or dt.datetime.now(dt.UTC)
        if (now - created).days < signals.recent_days:
            factor *= signals.recent
            reasons.append("recent")
    return factor, reasons
