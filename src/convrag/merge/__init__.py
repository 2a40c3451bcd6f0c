"""Merging results from many collections with attribution (context-merging design note).

One module per step: ``fuse`` (RRF, CombSUM, CombMNZ with collection weights), ``dedup``,
``signals`` (quality multipliers), ``diversity``, ``budget`` (token budget), ``ordering``,
``presets`` (query types), ``conflicts``; ``enhanced`` composes them; ``registry`` names them.
"""

from ..types import SourcedHit
from .base import Dropped, MergedResult, MergeOutcome
from .enhanced import MergeSettings, enhanced_merge
from .registry import MERGERS, make_merger

__all__ = ["Dropped", "MergedResult", "MergeOutcome", "SourcedHit", "MergeSettings", "enhanced_merge", "MERGERS", "make_merger"]
