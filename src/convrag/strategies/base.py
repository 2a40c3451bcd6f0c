"""What every query strategy returns: the query it chose and a trace of how it chose it.

A strategy turns a :class:`~convrag.types.Task` (a question plus the conversation before it)
into a retrieval query. The :class:`Trace` is the user-facing record of every decision: the
stage that resolved the turn, the context it selected, each LLM call (prompt, answer, tokens,
latency), each fallback and why, and the total time. It serialises to the intermediate JSONL.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple, Protocol

from ..embeddings import Embedder, load_embedder
from ..errors import ConvragError
from ..llm.base import ChatMessage
from ..types import Task


@dataclass
class LLMCall:
    """One model call: why it was made, what was sent, what came back, and what it cost."""

    purpose: str
    stage: str
    messages: list[ChatMessage]
    answer: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cached: bool = False
    error: str | None = None


@dataclass
class Fallback:
    """A step that did not produce a usable query: the stage, the check that fired, the rejected text."""

    stage: str
    reason: str
    rejected: str = ""


@dataclass
class Trace:
    """The full record of one strategy decision (see the module docstring)."""

    task_id: str
    strategy: str
    original_query: str
    final_query: str = ""
    stage: str = ""
    calls: list[LLMCall] = field(default_factory=list)
    context: list[dict[str, Any]] = field(default_factory=list)
    fallbacks: list[Fallback] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    trimmed_turns: int = 0
    noop: bool = False
    latency_s: float = 0.0

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.calls)

    @property
    def llm_latency_s(self) -> float:
        return sum(c.latency_s for c in self.calls)

    @property
    def effective_latency_s(self) -> float:
        """What the decision cost when its model calls were made: wall time now, plus the recorded
        latency of the calls answered from the cache (a cache hit takes well under a millisecond)."""
        return self.latency_s + sum(c.latency_s for c in self.calls if c.cached)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["effective_latency_s"] = self.effective_latency_s
        out["prompt_tokens"] = self.prompt_tokens
        out["completion_tokens"] = sum(c.completion_tokens for c in self.calls)
        out["llm_calls"] = len(self.calls)
        return out


class Rewrite(NamedTuple):
    """A strategy's answer: the query to retrieve with, and the trace that explains it."""

    query: str
    trace: Trace


class Strategy(Protocol):
    """Chooses the retrieval query for a conversational turn."""

    name: str

    def rewrite(self, task: Task) -> Rewrite: ...


class UsesEmbedder:
    """For strategies that embed turns: the embedder given, else the default model, loaded on first use
    (so that constructing a strategy, e.g. to validate a configuration, loads nothing)."""

    _embedder: Embedder | None = None

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = load_embedder()
        return self._embedder


class EmptyQuestionError(ConvragError):
    """The question to rewrite is empty or whitespace."""


def start_trace(task: Task, strategy: str) -> tuple[Trace, float]:
    """A fresh trace for ``task``; refuses an empty question, which no strategy can resolve."""
    if not task.question or not task.question.strip():
        raise EmptyQuestionError(f"task {task.task_id or '(unnamed)'}: the question is empty")
    return Trace(task_id=task.task_id, strategy=strategy, original_query=task.question), time.perf_counter()


def finish(trace: Trace, started: float, query: str, stage: str) -> Rewrite:
    """Close the trace: final query, stage, no-op flag and the wall time of the whole decision."""
    from .checks import same_query

    trace.final_query = query
    trace.stage = stage
    trace.noop = bool(trace.calls) and same_query(query, trace.original_query)
    trace.latency_s = time.perf_counter() - started
    return Rewrite(query, trace)


def finish_rewrite(trace: Trace, started: float, task: Task, query: str | None) -> Rewrite:
    """Close a single-rewrite strategy's trace: the accepted rewrite, else the question as asked."""
    if query is None:
        return finish(trace, started, task.question, "fallback_original")
    return finish(trace, started, query, "rewrite")
