"""``full_rewrite``: the baseline rewrite, given the whole conversation (within the token budget)."""

from __future__ import annotations

from ..history import Budget, turn_pairs
from ..llm.base import LLM
from ..types import Task
from .base import Rewrite, finish, finish_rewrite, record_context, start_trace
from .rewriter import CheckSettings, rewrite


class FullRewrite:
    name = "full_rewrite"

    def __init__(self, llm: LLM, budget: Budget = Budget(tokens=1500, answer_words=120), checks: CheckSettings = CheckSettings()):
        self.llm = llm
        self.budget = budget
        self.checks = checks

    def rewrite(self, task: Task) -> Rewrite:
        trace, started = start_trace(task, self.name)
        pairs = turn_pairs(task.history)
        if not pairs:
            return finish(trace, started, task.question, "first_turn")
        context = record_context(trace, pairs, self.llm.count_tokens, self.budget)
        query = rewrite(self.llm, trace, "rewrite", task.question, context, task.user_questions[:-1], self.checks)
        return finish_rewrite(trace, started, task, query)
