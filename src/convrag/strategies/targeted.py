"""``targeted``: rewrite with only the earlier exchanges that are about the same thing.

Exchanges ("User: … Assistant: …") and the question are embedded with all-MiniLM-L6-v2;
exchanges with cosine >= ``threshold`` are kept, the last exchange always (references are
mostly to it), at most ``max_turns`` (the most similar), in chronological order.
"""

from __future__ import annotations

import numpy as np

from ..embeddings import Embedder
from ..history import Budget, TurnPair, turn_pairs
from ..llm.base import LLM
from ..types import Task
from .base import Rewrite, UsesEmbedder, finish, finish_rewrite, record_context, start_trace
from .rewriter import CheckSettings, rewrite


def select_turns(
    similarities: np.ndarray, threshold: float = 0.3, max_turns: int = 5, include_last: bool = True
) -> list[int]:
    """Indices (chronological) of the exchanges to keep, given each one's similarity to the question."""
    n = len(similarities)
    chosen = {i for i in range(n) if similarities[i] >= threshold}
    if include_last and n:
        chosen.add(n - 1)
    if len(chosen) > max_turns:
        ranked = sorted(chosen, key=lambda i: (-(i == n - 1 and include_last), -similarities[i], -i))
        chosen = set(ranked[:max_turns])
    return sorted(chosen)


class Targeted(UsesEmbedder):
    name = "targeted"

    def __init__(
        self,
        llm: LLM,
        embedder: Embedder | None = None,
        threshold: float = 0.3,
        max_turns: int = 5,
        include_last: bool = True,
        budget: Budget = Budget(),
        checks: CheckSettings = CheckSettings(),
    ) -> None:
        self.llm = llm
        self._embedder = embedder
        self.threshold = threshold
        self.max_turns = max_turns
        self.include_last = include_last
        self.budget = budget
        self.checks = checks

    def rewrite(self, task: Task) -> Rewrite:
        trace, started = start_trace(task, self.name)
        pairs = turn_pairs(task.history)
        if not pairs:
            return finish(trace, started, task.question, "first_turn")
        vectors = self.embedder.encode([task.question] + [p.text for p in pairs])
        sims = vectors[1:] @ vectors[0]
        keep = select_turns(sims, self.threshold, self.max_turns, self.include_last)
        selected: list[TurnPair] = [pairs[i] for i in keep]
        trace.details["similarities"] = {p.turn: round(float(s), 4) for p, s in zip(pairs, sims)}
        context = record_context(trace, selected, self.llm.count_tokens, self.budget,
                                 lambda p: {"turn": p.turn, "user": p.user, "similarity": round(float(sims[p.turn - 1]), 4)})
        query = rewrite(self.llm, trace, "rewrite", task.question, context, task.user_questions[:-1], self.checks)
        return finish_rewrite(trace, started, task, query)
