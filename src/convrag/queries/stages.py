"""Query stages: the renderings of a turn that a pipeline searches besides its strategy's query.

A pipeline's queries are a composition: the strategy's query first, then any of these stages,
each adding queries whose result lists are fused with RRF. ``("strategy", "summary")`` is the
"rewrite + summary, fused" recipe; ``("strategy", "question")`` adds the question as asked;
``("strategy", "reformulations")`` asks the model for extra phrasings. Each stage says what it
added in the turn's trace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..embeddings import Embedder
from ..errors import ConfigError
from ..llm.base import LLM, ChatMessage
from ..types import Message, Task
from .multi_query import reformulations

PRIMARY = "strategy"


@dataclass
class Rendering:
    """What one query stage searched with, and its own record (a model call, a strategy trace)."""

    stage: str
    queries: list[str]
    trace: dict[str, Any] = field(default_factory=dict)


class QueryStage(Protocol):
    """Adds queries for a turn, given the strategy's own query."""

    name: str

    def render(self, task: Task, query: str) -> Rendering: ...


class SummaryStage:
    """The ``summary`` strategy's "Summary: ... Question: ..." query (one model call)."""

    name = "summary"

    def __init__(self, llm: LLM) -> None:
        from ..strategies import make_strategy

        self.summary = make_strategy("summary", llm)

    @property
    def llm(self) -> LLM:
        return self.summary.llm

    def prompt_start(self, history: Sequence[Message]) -> list[ChatMessage] | None:
        """The next turn's summary prompt up to the question, to be read ahead like the strategy's."""
        return self.summary.prompt_start(history)

    def render(self, task: Task, query: str) -> Rendering:
        result = self.summary.rewrite(task)
        return Rendering(self.name, [result.query], result.trace.to_dict())


class QuestionStage:
    """The question exactly as the user asked it (no model call)."""

    name = "question"

    def render(self, task: Task, query: str) -> Rendering:
        return Rendering(self.name, [task.question])


class ReformulationStage:
    """``n`` extra phrasings of the strategy's query, written by the model (one call)."""

    name = "reformulations"

    def __init__(self, llm: LLM, n: int = 2) -> None:
        self.llm, self.n = llm, n

    def render(self, task: Task, query: str) -> Rendering:
        extra, call = reformulations(self.llm, query, self.n)
        return Rendering(self.name, extra, call)


QUERY_STAGES: dict[str, Callable[..., QueryStage]] = {
    "summary": lambda llm, embedder, **o: SummaryStage(llm),
    "question": lambda llm, embedder, **o: QuestionStage(),
    "reformulations": lambda llm, embedder, **o: ReformulationStage(llm, o.get("reformulations", 2)),
}


def check_queries(queries: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """A pipeline's query composition: the strategy's query first, then known stages, no repeats."""
    queries = tuple(queries)
    if not queries or queries[0] != PRIMARY:
        raise ConfigError(f"the queries start with {PRIMARY!r} (the strategy's own query), got {list(queries)}")
    unknown = [q for q in queries[1:] if q not in QUERY_STAGES]
    if unknown:
        raise ConfigError(f"unknown query stage {unknown[0]!r}; expected some of {', '.join(QUERY_STAGES)}")
    if len(set(queries)) != len(queries):
        raise ConfigError(f"a query stage is repeated in {list(queries)}")
    return queries


def make_query_stages(queries: tuple[str, ...], llm: LLM | None, embedder: Embedder | None = None, **options: Any) -> list[QueryStage]:
    """The stages after the strategy's query, built by name."""
    return [QUERY_STAGES[name](llm, embedder, **options) for name in check_queries(queries)[1:]]
