"""Selecting passages within a prompt token budget, counted with a real tokenizer.

Greedy in score order: a passage that does not fit is skipped (reason ``budget``) and
smaller ones after it may still fit, so the budget is filled rather than cut at the first
long passage. The budget is never exceeded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache


def select_within_budget(token_counts: Sequence[int], budget: int) -> tuple[list[int], list[int]]:
    """Indices kept and indices skipped, for items already in score order."""
    kept, skipped, used = [], [], 0
    for i, n in enumerate(token_counts):
        if used + n <= budget:
            kept.append(i)
            used += n
        else:
            skipped.append(i)
    return kept, skipped


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
