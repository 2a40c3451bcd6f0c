"""The pipeline itself: one turn from messages to a cited answer, recording every step.

    strategy query (+ query stages) -> every collection searched concurrently -> each
    collection's lists fused (RRF) -> collections merged with attribution -> cited answer
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import ConvragError
from ..generate.answer import Answer, AnswerGenerator, ClientLimits, Sampling
from ..generate.citations import Citation
from ..limits import check_query, check_question
from ..llm.base import LLMError, Stopped, prefill, stopping
from ..merge.base import MergeOutcome
from ..merge.enhanced import MergeSettings
from ..merge.fuse import fuse
from ..merge.registry import make_merger
from ..queries.multi_query import FUSION_DEPTH, distinct, fuse_renderings
from ..queries.stages import QueryStage
from ..retrieve.multi import CollectionSearch, SearchReport, collection_weights, embedding_counts, search_collections
from ..retrieve.routing import Routing, RoutingSettings, route
from ..social import social_turn
from ..strategies.base import Strategy
from ..types import Message, SourcedHit, Task
from .trace import TurnTrace


@dataclass
class PipelineResult:
    text: str
    citations: list[Citation]
    declined: bool
    merged: MergeOutcome
    trace: TurnTrace = field(default_factory=TurnTrace)
    retrieved: dict[str, list[SourcedHit]] = field(default_factory=dict)  # per collection, before the merge


def _read_ahead(read: Callable[[], int | None]) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        tokens = read()
    except LLMError as exc:  # reading ahead only saves time: the next turn reads its prompt itself
        return {"error": str(exc), "seconds": round(time.perf_counter() - start, 3)}
    if tokens is None:
        return {"skipped": "nothing to read ahead with this prompt or backend"}
    return {"tokens": tokens, "seconds": round(time.perf_counter() - start, 3)}


@dataclass
class Pipeline:
    """Collections, a strategy, extra query stages, a merge method and (optionally) an answer
    generator. Build one with :func:`convrag.pipeline.build_pipeline`."""

    collections: Sequence[CollectionSearch]
    strategy: Strategy
    renderings: Sequence[QueryStage] = ()
    merge: str = "enhanced"
    merge_settings: MergeSettings = field(default_factory=MergeSettings)
    generator: AnswerGenerator | None = None
    timeout_s: float = 30.0
    routing: RoutingSettings | None = None  # with several collections: search only those the turn is about

    def route_collections(self, query: str, earlier: Sequence[str] = ()) -> tuple[list[CollectionSearch], Routing | None]:
        """The collections to search: all of them, or with routing those within the margin of the
        best (collections that cannot be scored are always kept)."""
        if self.routing is None or len(self.collections) < 2:
            return list(self.collections), None
        texts = [query, *earlier[: self.routing.earlier]]
        evidence = {c.name: e for c in self.collections if (e := c.evidence(texts, self.routing.top)) is not None}
        if not evidence:
            return list(self.collections), None
        routing = route({n: e[0] for n, e in evidence.items()}, [{n: e[j] for n, e in evidence.items()} for j in range(1, len(texts))],
                        self.routing)
        return [c for c in self.collections if c.name not in evidence or c.name in routing.kept], routing

    def _routed_search(self, query: str, earlier: Sequence[str], queries: Sequence[str],
                       depth: int | None = None) -> tuple[SearchReport, Routing | None]:
        """Route on ``query`` (and the earlier questions), then search the kept collections with
        ``queries``. The report counts the query embeddings of both steps: routing embeds the question
        first, and the search alone then counted 0 for it."""
        embedded = embedding_counts(self.collections)
        searched, routing = self.route_collections(query, earlier)
        report = search_collections(searched, queries, self.timeout_s, depth=depth)
        report.embeddings_computed = {m: n - embedded[m] for m, n in embedding_counts(self.collections).items()}
        return report, routing

    def _task(self, messages: Sequence[Message], task_id: str) -> Task:
        if not messages or messages[-1].speaker != "user":
            raise ConvragError("the conversation must end with the user's question")
        question = check_question(messages[-1].text)
        history = tuple(messages[:-1])
        return Task(task_id, task_id, 1 + sum(m.speaker == "user" for m in history), "", question, history)

    def _settings(self) -> MergeSettings:
        weights = {**collection_weights(self.collections), **self.merge_settings.collection_weights}
        if weights == dict(self.merge_settings.collection_weights):
            return self.merge_settings
        return replace(self.merge_settings, collection_weights=weights)

    def retrieve(self, messages: Sequence[Message], task_id: str = "turn") -> tuple[MergeOutcome, TurnTrace, dict[str, list[SourcedHit]]]:
        """Everything but the answer: the merged passages, the trace so far, and each collection's list."""
        trace = TurnTrace()
        task = self._task(messages, task_id)
        t = time.perf_counter()
        rewrite = self.strategy.rewrite(task)
        trace.strategy = rewrite.trace
        trace.timings_s["strategy"] = time.perf_counter() - t

        queries = list(rewrite.queries)
        for stage in self.renderings:
            t = time.perf_counter()
            rendering = stage.render(task, rewrite.query)
            trace.renderings.append(rendering)
            trace.timings_s[f"query:{stage.name}"] = time.perf_counter() - t
            queries += rendering.queries
        trace.queries = queries = distinct(queries)

        t = time.perf_counter()
        earlier = [m.text for m in reversed(task.history) if m.speaker == "user"]
        # several renderings: each list as deep as `convrag eval` fuses them, so the two rank alike
        report, trace.routing = self._routed_search(rewrite.query, earlier, queries, FUSION_DEPTH if len(queries) > 1 else None)
        trace.timings_s["search"] = time.perf_counter() - t
        trace.search = report
        k_of = {c.name: c.k for c in self.collections}
        per_collection = {name: fuse_renderings(lists, k_of[name]) for name, lists in report.results.items()}

        t = time.perf_counter()
        count = self.generator.llm.count_tokens if self.generator is not None else None
        merged = make_merger(self.merge)(per_collection, rewrite.query, self._settings(), count_tokens=count)
        trace.timings_s["merge"] = time.perf_counter() - t
        trace.merge = merged
        return merged, trace, per_collection

    def search(self, query: str, k: int = 10) -> tuple[list[SourcedHit], SearchReport]:
        """Passages for ``query`` as asked: no rewriting, no selection, no answer, but the same
        collections, retrievers and cross-collection fusion as :meth:`answer` (so a search shows
        what a chat turn would draw from). One hit per passage, best first, at most ``k``."""
        check_query(query)
        report, _ = self._routed_search(query, (), [query])
        per_collection = {name: lists[0] for name, lists in report.results.items()}
        settings = self._settings()
        ordered, fused = fuse(per_collection, settings.fusion, settings.collection_weights, settings.rrf_k, settings.norm)
        hits: list[SourcedHit] = []
        seen: set[str] = set()
        for hit in ordered:
            if hit.passage_id not in seen:
                seen.add(hit.passage_id)
                hits.append(hit._replace(score=fused[hit.passage_id], rank=len(hits) + 1))
            if len(hits) == k:
                break
        return hits, report

    def prefill(self, messages: Sequence[Message]) -> dict[str, Any]:
        """Read ahead the prompts of the next turn as far as they are known once ``messages`` (the
        conversation so far, ending with the answer just given) are: the answer prompt up to its
        passages and, for a strategy or query stage that offers one (``prompt_start``), its prompt
        up to the question. Call it while the user reads the answer; the next turn's model calls
        then wait only for what the question brings. Returns a record for the log: tokens read and seconds per prompt, or
        why nothing was read."""
        record: dict[str, Any] = {}
        # in the order the turn makes its calls: the strategy's, the query stages', the answer's
        for label, caller in (("strategy", self.strategy), *((f"stage:{s.name}", s) for s in self.renderings)):
            start_of = getattr(caller, "prompt_start", None)
            llm = getattr(caller, "llm", None)
            start = start_of(messages) if start_of is not None and llm is not None else None
            if start is not None:
                record[label] = _read_ahead(lambda llm=llm, start=start: prefill(llm, start))
        if self.generator is not None:
            record["answer"] = _read_ahead(lambda: self.generator.prefill(messages))  # type: ignore[union-attr]
        return record or {"skipped": "no model call to read ahead for"}

    def answer(self, messages: Sequence[Message], task_id: str = "turn", sampling: Sampling | None = None,
               limits: ClientLimits | None = None) -> PipelineResult:
        """The cited answer to the last user message, with the full trace; ``sampling``: sampled
        instead of decoded greedily (another attempt at it would otherwise give the same answer)."""
        result: PipelineResult | None = None
        for item in self.stream(messages, task_id, stream_text=False, sampling=sampling, limits=limits):
            if isinstance(item, PipelineResult):
                result = item
        assert result is not None
        return result

    def _social(self, messages: Sequence[Message]) -> PipelineResult | None:
        """The reply to a social last message ("Thanks!", "ok bye"), where the answer settings give
        one: no search, no model call, nothing cited or declined (:mod:`convrag.social`)."""
        if self.generator is None or not self.generator.settings.social_replies or not messages or messages[-1].speaker != "user":
            return None
        social = social_turn(messages[-1].text)
        if social is None:
            return None
        return PipelineResult(social.reply, [], False, MergeOutcome([]), TurnTrace(social=social._asdict()))

    def stream(self, messages: Sequence[Message], task_id: str = "turn", stream_text: bool = True,
               sampling: Sampling | None = None, stop: threading.Event | None = None,
               limits: ClientLimits | None = None) -> Iterator[str | PipelineResult]:
        """:meth:`answer`, yielding the answer's text in pieces as the model writes it (after
        retrieval) and the :class:`PipelineResult` last. A model failure raises
        :class:`~convrag.generate.answer.AnswerFailed`. ``stop`` (a user's "Stop", a client gone)
        ends the turn, yielding nothing more and no result: looked at by the local model between the
        pieces it reads the rewrite's prompt in, once retrieval is done (so a stop pressed while
        the question was searched does not wait for the model to read the answer's whole prompt,
        seconds on a CPU), by the local model between the pieces it reads that prompt in, and
        before each piece of the answer, the generation closed at once.
        ``limits`` (an OpenAI client's ``max_tokens`` and ``stop``) can only end the answer sooner."""
        def stopped() -> bool:
            return stop is not None and stop.is_set()

        start = time.perf_counter()
        social = self._social(messages)
        if social is not None:
            if stream_text:
                yield social.text
            social.trace.timings_s["total"] = time.perf_counter() - start
            yield social
            return
        try:
            # the rewrite's and the query stages' calls see the stop too (a local model looks at it
            # while it reads their prompts); a strategy records a stopped call as a failed one
            with stopping(stopped if stop is not None else None):
                merged, trace, retrieved = self.retrieve(messages, task_id)
        except Stopped:  # one made outside a strategy's own fallback
            return
        if stopped():
            return
        if self.generator is None:
            answer = Answer("", [], False, {"skipped": "no generator configured"})
        else:
            t = time.perf_counter()
            question, history = messages[-1].text, messages[:-1]
            query = trace.strategy.final_query if trace.strategy is not None else question
            standalone = trace.strategy.standalone if trace.strategy is not None else None
            self_contained = trace.strategy is not None and trace.strategy.self_contained
            if stream_text:
                answer = None
                with closing(self.generator.stream(question, history, merged.results, query, standalone, self_contained,
                                                   sampling, limits, stopped if stop is not None else None)) as pieces:
                    for item in pieces:
                        if stopped():
                            return
                        if isinstance(item, Answer):
                            answer = item
                        else:
                            yield item
                if answer is None and stopped():  # the model's read of the prompt was stopped
                    return
                assert answer is not None
            else:
                answer = self.generator.answer(question, history, merged.results, query, standalone, self_contained, sampling,
                                               limits)
            trace.timings_s["answer"] = time.perf_counter() - t
        if stopped():
            return
        trace.answer = answer.trace
        trace.timings_s["total"] = time.perf_counter() - start
        yield PipelineResult(answer.text, answer.citations, answer.declined, merged, trace, retrieved)
