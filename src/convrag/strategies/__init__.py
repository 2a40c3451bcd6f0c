"""Conversational query strategies: how much of the conversation a question needs, and the query it becomes.

One module per strategy (``last_turn``, ``full_rewrite``, ``targeted``, ``mmr_cluster``,
``summary``, ``progressive``), sharing the context rendering (``context``), the prompts
(``prompts``), the model steps (``rewriter``) and the acceptance checks (``checks``).
"""

from .base import Fallback, LLMCall, Rewrite, Strategy, Trace
from .registry import STRATEGIES, make_strategy

__all__ = ["Fallback", "LLMCall", "Rewrite", "Strategy", "Trace", "STRATEGIES", "make_strategy"]
