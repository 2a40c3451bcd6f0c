"""Combining ranked lists: one module per method (``rrf``, ``score``), pure functions over runs
(``{id: score}``) or rankings, a registry by name, and :func:`fuse_lists` for lists of hits."""

from .lists import fuse_lists
from .registry import FUSIONS, get_fusion
from .rrf import RRF_K, ranked_ids, reciprocal_rank_fusion, rrf
from .score import combmnz, combsum, normalize

__all__ = ["FUSIONS", "RRF_K", "combmnz", "combsum", "fuse_lists", "get_fusion", "normalize", "ranked_ids",
           "reciprocal_rank_fusion", "rrf"]
