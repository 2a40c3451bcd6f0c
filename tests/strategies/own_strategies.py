"""Strategies of one's own, imported by name (``tests.strategies.own_strategies:...``) in test_registry.py."""

from __future__ import annotations

from convrag.strategies.base import Rewrite, finish, start_trace
from convrag.types import Task


class WithModel:
    """Declares ``llm``: the evaluation loads a model for it and hands it over."""

    name = "with_model"

    def __init__(self, llm: object, prefix: str = "") -> None:
        self.llm, self.prefix = llm, prefix

    def rewrite(self, task: Task) -> Rewrite:
        trace, started = start_trace(task, self.name)
        return finish(trace, started, self.prefix + task.question, "own")


class CallsItselfProgressive(WithModel):
    name = "progressive"


class NoRewrite:
    name = "no_rewrite"


class ReturnsText:
    """Returns the query as a plain string: taken, with a trace made for it."""

    name = "returns_text"

    def rewrite(self, task: Task) -> str:
        return "ferry " + task.question


class ReturnsNothing:
    """Forgets to return: one clear error, not an AttributeError deep in the evaluation."""

    name = "returns_nothing"

    def rewrite(self, task: Task) -> None:
        "ferry " + task.question  # noqa: B018


class ReturnsEmptyRewrite(WithModel):
    name = "returns_empty_rewrite"

    def rewrite(self, task: Task) -> Rewrite:
        trace, started = start_trace(task, self.name)
        return finish(trace, started, "  ", "own")


def not_a_class_or_function() -> None: ...


NOT_CALLABLE = 3
