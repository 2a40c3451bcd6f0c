"""``full_rewrite``: the baseline rewrite, given the whole conversation (within the token budget)."""

from __future__ import annotations

from ..llm.base import LLM
from ..types import Task
from .base import Rewrite, finish, finish_rewrite, start_trace
from .context import Budget, render_pairs, turn_pairs
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
        context, dropped = render_pairs(pairs, self.llm.count_tokens, self.budget)
        trace.trimmed_turns = dropped
        trace.context = [{"turn": p.turn, "user": p.user} for p in pairs[dropped:]]
        query = rewrite(self.llm, trace, "rewrite", task.question, context, task.user_questions[:-1], self.checks)
        return finish_rewrite(trace, started, task, query)
