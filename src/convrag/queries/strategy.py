"""A conversational strategy as a query source: the bridge between ``strategies`` and evaluation.

Rewrites each task once (results are kept by task id, so several retrievers share them),
in conversation order so that the local model can reuse the evaluated prompt prefix, and
keeps every trace for the intermediate JSONL and the strategy statistics.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from ..progress import SILENT, Reporter
from ..strategies.base import Rewrite, Strategy, Trace
from ..types import Task


class StrategySource:
    """Queries produced by ``strategy``; ``workers`` > 1 rewrites concurrently (remote backends)."""

    def __init__(self, strategy: Strategy, workers: int = 1, reporter: Reporter = SILENT) -> None:
        self.strategy = strategy
        self.name = strategy.name
        self.workers = max(1, workers)
        self.reporter = reporter
        self.results: dict[str, Rewrite] = {}

    @property
    def traces(self) -> dict[str, Trace]:
        return {task_id: r.trace for task_id, r in self.results.items()}

    def queries(self, tasks: Sequence[Task]) -> dict[str, str]:
        todo = sorted((t for t in tasks if t.task_id not in self.results), key=lambda t: (t.conversation_id, t.turn))
        if todo:
            label = f"{todo[0].domain}: strategy {self.name}"
            with self.reporter.stage(label, total=len(todo)) as advance:
                if self.workers == 1:
                    for task in todo:
                        self.results[task.task_id] = self.strategy.rewrite(task)
                        advance(1)
                else:
                    # One conversation per worker keeps each conversation's turns in order.
                    by_conv: dict[str, list[Task]] = {}
                    for task in todo:
                        by_conv.setdefault(task.conversation_id, []).append(task)

                    def run(conversation: list[Task]) -> list[tuple[str, Rewrite]]:
                        out = [(t.task_id, self.strategy.rewrite(t)) for t in conversation]
                        advance(len(conversation))
                        return out

                    with ThreadPoolExecutor(self.workers) as pool:
                        for pairs in pool.map(run, by_conv.values()):
                            self.results.update(pairs)
        return {t.task_id: self.results[t.task_id].query for t in tasks}

    def query_sets(self, tasks: Sequence[Task]) -> dict[str, tuple[str, ...]]:
        """Every rendering per task (the query first, then those the strategy fuses with it)."""
        self.queries(tasks)
        return {t.task_id: self.results[t.task_id].queries for t in tasks}
