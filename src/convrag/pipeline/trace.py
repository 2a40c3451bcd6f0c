"""The record of one conversational turn: what the pipeline decided at each step, and why.

:class:`TurnTrace` holds the step objects themselves (the strategy's :class:`Trace`, the search
report, the merge outcome, the answer's record); :meth:`TurnTrace.to_dict` is the one JSON form
that the CLI prints, the service stores and returns, and the web page reads. Its shape is
:class:`TurnTraceDict` (TypedDicts all the way down), so :func:`turn_trace_schema` gives the JSON
schema that the API documents (``convrag trace-schema`` prints it; ``docs/turn-trace.schema.json`` is its output).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NotRequired

from typing_extensions import TypedDict  # pydantic builds schemas only from this one on Python < 3.12

from ..llm.base import ChatMessage
from ..merge.base import MergeOutcome
from ..queries.stages import Rendering
from ..retrieve.multi import SearchReport
from ..retrieve.routing import Routing
from ..strategies.base import Trace


class LLMCallDict(TypedDict):
    """One model call: why, what was asked, what came back, its cost."""

    purpose: str
    stage: str
    messages: list[ChatMessage]
    answer: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cached: bool
    error: str | None
    # the parameters the endpoint refuses, left out of the request (absent when none were, and from
    # turns stored before it was recorded)
    sent_without: NotRequired[list[str]]


class FallbackDict(TypedDict):
    stage: str
    reason: str
    rejected: str


class StrategyTraceDict(TypedDict):
    """How the strategy chose the query: stage reached, context selected, model calls, fallbacks."""

    task_id: str
    strategy: str
    original_query: str
    final_query: str
    standalone: str  # the question as the model restated it on its own ("" when no model rewrite)
    # a follow-up judged to need nothing from the conversation (searched as asked); absent from turns
    # stored before it was recorded
    self_contained: NotRequired[bool]
    stage: str
    calls: list[LLMCallDict]
    context: list[dict[str, Any]]
    fallbacks: list[FallbackDict]
    details: dict[str, Any]
    trimmed_turns: int
    noop: bool
    latency_s: float
    effective_latency_s: float
    prompt_tokens: int
    completion_tokens: int
    llm_calls: int


class RenderingDict(TypedDict):
    """An extra query stage (summary, reformulations, the question as asked) and what it added."""

    stage: str
    queries: list[str]
    trace: dict[str, Any]


class RoutingDict(TypedDict):
    """With several collections: each one's score for this turn, and which were searched."""

    scores: dict[str, float]
    kept: list[str]
    dropped: list[str]


class SearchDict(TypedDict):
    seconds: dict[str, float]
    failures: dict[str, str]
    embeddings_computed: dict[str, int]
    hits: dict[str, list[int]]


class HitDict(TypedDict):
    """A passage as a collection returned it."""

    collection: str
    passage_id: str
    document_id: str
    title: str
    url: str
    score: float
    rank: int


class MergedPassageDict(HitDict):
    """A passage the merge kept, with its scores and why it was kept."""

    fused_score: float
    final_score: float
    tokens: int
    selection_reason: str
    also_in: list[str]
    conflicts_with: list[int]


class DroppedPassageDict(HitDict):
    """A passage the merge left out, and why (duplicate, diversity, budget, passages)."""

    reason: str
    detail: str


class MergeDict(TypedDict):
    results: list[MergedPassageDict]
    dropped: list[DroppedPassageDict]
    settings: dict[str, Any]
    seconds: float


class AnswerTraceDict(TypedDict, total=False):
    """How the answer was written: the model call, citation repairs, why it declined, fallbacks."""

    passages: int
    llm_call: LLMCallDict
    fallback: str
    warning: str
    inferred_citations: list[int]
    repointed_citations: list[dict[str, Any]]  # {"sentence", "written", "to"}: a number moved to the passage holding the sentence
    invalid_citations: list[int]
    latency_s: float
    skipped: str
    details: dict[str, Any]


class PassageDict(TypedDict):
    """A passage the answer could cite, numbered as in the answer's prompt."""

    number: int
    collection: str
    passage_id: str
    title: str
    url: str
    text: str
    selection_reason: str


class SocialDict(TypedDict):
    """A greeting, thanks, a goodbye, a bare acknowledgement or a message without words ("???": kind
    "unclear"), replied to without a search or a model call."""

    kind: str
    reply: str


class TurnTraceDict(TypedDict, total=False):
    strategy: StrategyTraceDict
    renderings: list[RenderingDict]
    queries: list[str]
    routing: RoutingDict
    search: SearchDict
    merge: MergeDict
    answer: AnswerTraceDict
    timings_s: dict[str, float]
    empty_collections: list[str]
    fallback: str
    social: SocialDict
    passages: list[PassageDict]


@dataclass
class TurnTrace:
    """Every decision of one turn; ``timings_s`` has one entry per step and ``total``."""

    strategy: Trace | None = None
    renderings: list[Rendering] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    routing: Routing | None = None
    search: SearchReport | None = None
    merge: MergeOutcome | None = None
    answer: dict[str, Any] | None = None
    timings_s: dict[str, float] = field(default_factory=dict)
    empty_collections: list[str] = field(default_factory=list)
    fallback: str | None = None
    social: dict[str, str] | None = None  # the turn's kind and reply, where it was social (:mod:`convrag.social`)

    def to_dict(self) -> TurnTraceDict:
        out: TurnTraceDict = {"timings_s": dict(self.timings_s)}
        if self.strategy is not None:
            out["strategy"] = self.strategy.to_dict()  # type: ignore[typeddict-item]
        if self.renderings:
            out["renderings"] = [{"stage": r.stage, "queries": r.queries, "trace": r.trace} for r in self.renderings]
        if self.queries:
            out["queries"] = list(self.queries)
        if self.routing is not None:
            out["routing"] = self.routing.to_dict()  # type: ignore[typeddict-item]
        if self.search is not None:
            out["search"] = {"seconds": self.search.seconds, "failures": self.search.failures,
                             "embeddings_computed": self.search.embeddings_computed,
                             "hits": {name: [len(h) for h in lists] for name, lists in self.search.results.items()}}
        if self.merge is not None:
            out["merge"] = self.merge.to_dict()  # type: ignore[typeddict-item]
        if self.answer is not None:
            out["answer"] = self.answer  # type: ignore[typeddict-item]
        if self.empty_collections:
            out["empty_collections"] = list(self.empty_collections)
        if self.fallback:
            out["fallback"] = self.fallback
        if self.social is not None:
            out["social"] = {"kind": self.social["kind"], "reply": self.social["reply"]}
        return out


def turn_trace_schema() -> dict[str, Any]:
    """The JSON schema of :meth:`TurnTrace.to_dict` (what the API returns under ``trace``)."""
    from pydantic import TypeAdapter

    return TypeAdapter(TurnTraceDict).json_schema()

