"""What every query strategy returns: the query it chose and a trace of how it chose it.

A strategy turns a :class:`~convrag.types.Task` (a question plus the conversation before it)
into a retrieval query. The :class:`Trace` is the user-facing record of every decision: the
stage that resolved the turn, the context it selected, each LLM call (prompt, answer, tokens,
latency), each fallback and why, and the total time. It serialises to the intermediate JSONL.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple, Protocol

from ..embeddings import Embedder, load_embedder
from ..errors import ConvragError
from ..history import Budget, TurnPair, render_pairs
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
    #: parameters the endpoint refuses, so the call was sent without them (:class:`.llm.base.Completion`)
    sent_without: list[str] = field(default_factory=list)


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
    #: the question restated on its own by the model, when the strategy had one written (a model
    #: rewrite, not an expansion or a summary); the answer prompt can ask it in place of the question
    standalone: str = ""
    #: the strategy judged that a follow-up needs nothing from the conversation and searched it as
    #: asked (progressive's stage 1); the answer prompt can then show less of the conversation
    self_contained: bool = False

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
    """A strategy's answer: the query to retrieve with, the trace that explains it, and any further
    renderings whose result lists are to be fused with the query's (RRF) — a zero-call way to add
    the conversation's topic without replacing the user's own words."""

    query: str
    trace: Trace
    fuse_with: tuple[str, ...] = ()

    @property
    def queries(self) -> tuple[str, ...]:
        """Every rendering to search, the main query first."""
        return (self.query, *self.fuse_with)


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


def record_context(
    trace: Trace,
    pairs: Sequence[TurnPair],
    count_tokens: Callable[[str], int],
    budget: Budget,
    describe: Callable[[TurnPair], dict[str, Any]] = lambda p: {"turn": p.turn, "user": p.user},
) -> str:
    """The exchanges rendered for a prompt within ``budget``; the trace records the exchanges kept
    (``describe`` says what of each) and how many of the oldest were dropped to fit."""
    context, dropped = render_pairs(pairs, count_tokens, budget)
    trace.trimmed_turns = max(trace.trimmed_turns, dropped)
    trace.context.extend(describe(p) for p in pairs[dropped:])
    return context


def finish(trace: Trace, started: float, query: str, stage: str, fuse_with: Sequence[str] = (), standalone: str = "") -> Rewrite:
    """Close the trace: final query (and renderings fused with it), the model-written standalone
    question if any, stage, no-op flag and the wall time of the whole decision."""
    from ..text import same_query

    trace.final_query = query
    trace.standalone = standalone
    trace.stage = stage
    extra = tuple(q for q in fuse_with if not same_query(q, query))
    if extra:
        trace.details["fused_with"] = list(extra)
    trace.noop = bool(trace.calls) and same_query(query, trace.original_query)
    trace.latency_s = time.perf_counter() - started
    return Rewrite(query, trace, extra)


def finish_rewrite(trace: Trace, started: float, task: Task, query: str | None) -> Rewrite:
    """Close a single-rewrite strategy's trace: the accepted rewrite, else the question as asked."""
    if query is None:
        return finish(trace, started, task.question, "fallback_original")
    return finish(trace, started, query, "rewrite", standalone=query)
