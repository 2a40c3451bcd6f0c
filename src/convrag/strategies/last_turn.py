"""``last_turn``: the question exactly as asked; the no-cost baseline every strategy is compared with."""

from __future__ import annotations

from ..types import Task
from .base import Rewrite, finish, start_trace


class LastTurn:
    name = "last_turn"

    def rewrite(self, task: Task) -> Rewrite:
        trace, started = start_trace(task, self.name)
        return finish(trace, started, task.question, "as_asked")
