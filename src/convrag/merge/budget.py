"""Counting passages' tokens for the merge's prompt budget with a real tokenizer.

The merge (:func:`convrag.merge.enhanced.enhanced_merge`) takes passages greedily in score order:
one that does not fit is skipped (reason ``budget``) and smaller ones after it may still fit, so the
budget is filled rather than cut at the first long passage. The budget is exceeded only by the best
passage alone, which is always taken.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache


@lru_cache(maxsize=8)
def _memoized(count: Callable[[str], int]) -> Callable[[str], int]:
    return lru_cache(maxsize=65536)(count)


def token_counter(count: Callable[[str], int] | None = None) -> Callable[[str], int]:
    """``count`` if given (an LLM's tokenizer), else the all-MiniLM-L6-v2 WordPiece tokenizer;
    memoized per text, since the same passages come back turn after turn."""
    if count is None:
        from ..llm.tokens import approximate_counter

        count = approximate_counter()
    return _memoized(count)
