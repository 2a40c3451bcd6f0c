"""Combining ranked lists: one module per method, pure functions over ``{doc_id: score}`` runs."""

from .rrf import reciprocal_rank_fusion
from .score import combmnz, combsum, normalize

__all__ = ["combmnz", "combsum", "normalize", "reciprocal_rank_fusion"]
