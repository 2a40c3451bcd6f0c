"""The conversational RAG pipeline: strategy -> (multi-query) search over many collections ->
merge -> grounded answer, with one trace that records every decision and its time.

    pipeline = Pipeline(collections, strategy, generator=AnswerGenerator(llm))
    result = pipeline.answer(messages)   # messages end with the user's question
    result.text, result.citations, result.trace
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import ConvragError
from .generate.answer import Answer, AnswerGenerator, Citation
from .llm.base import LLM
from .merge.base import MergeOutcome
from .merge.enhanced import MergeSettings
from .merge.registry import make_merger
from .queries.multi_query import distinct, fuse_renderings, reformulations
from .retrieve.multi import CollectionSearch, collection_weights, search_collections
from .strategies.base import Strategy
from .types import Message, Task

MAX_QUESTION_CHARS = 20_000


@dataclass
class PipelineResult:
    text: str
    citations: list[Citation]
    declined: bool
    merged: MergeOutcome
    trace: dict[str, Any] = field(default_factory=dict)


@dataclass
class Pipeline:
    """Collections, a strategy, a merge method and (optionally) an answer generator.

    ``multi_query``: also search with the ``summary`` strategy's query (when ``summary`` is
    given), ``reformulate`` extra LLM queries and, with ``with_question``, the question as
    asked; the lists are fused with RRF. The question is left out by default: on MT-RAG,
    rewrite + summary reached 0.372 ALL-3 nDCG@10 (hybrid) and adding the bare follow-up
    lowered it to 0.365 (docs/benchmarks.md, "Multi-query fusion").
    """

    collections: Sequence[CollectionSearch]
    strategy: Strategy
    merge: str = "enhanced"
    merge_settings: MergeSettings = field(default_factory=MergeSettings)
    generator: AnswerGenerator | None = None
    multi_query: bool = False
    summary: Strategy | None = None
    with_question: bool = False
    reformulate: int = 0
    reformulate_llm: LLM | None = None
    timeout_s: float = 30.0

    def _task(self, messages: Sequence[Message], task_id: str) -> Task:
        if not messages or messages[-1].speaker != "user":
            raise ConvragError("the conversation must end with the user's question")
        question = messages[-1].text
        if not question.strip():
            raise ConvragError("the question is empty")
        if len(question) > MAX_QUESTION_CHARS:
            raise ConvragError(f"the question is {len(question):,} characters; the limit is {MAX_QUESTION_CHARS:,}")
        history = tuple(messages[:-1])
        return Task(task_id, task_id, 1 + sum(m.speaker == "user" for m in history), "", question, history)

    def retrieve(self, messages: Sequence[Message], task_id: str = "turn") -> tuple[MergeOutcome, dict[str, Any]]:
        """Everything but the answer: the merged passages and the trace so far."""
        trace: dict[str, Any] = {"timings_s": {}}
        task = self._task(messages, task_id)
        t = time.perf_counter()
        rewrite = self.strategy.rewrite(task)
        trace["strategy"] = rewrite.trace.to_dict()
        trace["timings_s"]["strategy"] = time.perf_counter() - t

        renderings = [rewrite.query]
        if self.multi_query:
            if self.with_question:
                renderings.append(task.question)
            if self.summary is not None:
                summary = self.summary.rewrite(task)
                trace["summary_strategy"] = summary.trace.to_dict()
                renderings.append(summary.query)
            if self.reformulate and self.reformulate_llm is not None:
                extra, call = reformulations(self.reformulate_llm, rewrite.query, self.reformulate)
                trace["reformulation_call"] = call
                renderings += extra
        renderings = distinct(renderings)
        trace["queries"] = renderings

        t = time.perf_counter()
        report = search_collections(self.collections, renderings, self.timeout_s)
        trace["timings_s"]["search"] = time.perf_counter() - t
        trace["search"] = {
            "seconds": report.seconds, "failures": report.failures, "embeddings_computed": report.embeddings_computed,
            "hits": {name: [len(h) for h in lists] for name, lists in report.results.items()},
        }
        k_of = {c.name: c.k for c in self.collections}
        per_collection = {name: fuse_renderings(lists, k_of[name]) for name, lists in report.results.items()}

        t = time.perf_counter()
        settings = self.merge_settings
        weights = {**collection_weights(self.collections), **settings.collection_weights}
        if weights != dict(settings.collection_weights):
            from dataclasses import replace

            settings = replace(settings, collection_weights=weights)
        count = self.generator.llm.count_tokens if self.generator is not None else None
        merged = make_merger(self.merge)(per_collection, rewrite.query, settings, count_tokens=count)
        trace["timings_s"]["merge"] = time.perf_counter() - t
        trace["merge"] = merged.to_dict()
        return merged, trace

    def answer(self, messages: Sequence[Message], task_id: str = "turn") -> PipelineResult:
        """The cited answer to the last user message, with the full trace."""
        result: PipelineResult | None = None
        for item in self.stream(messages, task_id, stream_text=False):
            if isinstance(item, PipelineResult):
                result = item
        assert result is not None
        return result

    def stream(self, messages: Sequence[Message], task_id: str = "turn", stream_text: bool = True) -> Iterator[str | PipelineResult]:
        """:meth:`answer`, yielding the answer's text in pieces as the model writes it (after
        retrieval) and the :class:`PipelineResult` last."""
        start = time.perf_counter()
        merged, trace = self.retrieve(messages, task_id)
        if self.generator is None:
            answer = Answer("", [], False, {"skipped": "no generator configured"})
        else:
            t = time.perf_counter()
            question, history = messages[-1].text, messages[:-1]
            if stream_text:
                answer = None
                for item in self.generator.stream(question, history, merged.results):
                    if isinstance(item, Answer):
                        answer = item
                    else:
                        yield item
                assert answer is not None
            else:
                answer = self.generator.answer(question, history, merged.results)
            trace["timings_s"]["answer"] = time.perf_counter() - t
        trace["answer"] = answer.trace
        trace["timings_s"]["total"] = time.perf_counter() - start
        yield PipelineResult(answer.text, answer.citations, answer.declined, merged, trace)


def default_fusion(searches: Sequence[CollectionSearch]) -> str:
    """``combsum`` on raw scores when every collection is searched densely with one model (cosines
    are comparable), else ``rrf``."""
    models = {getattr(c.embedder, "name", None) for c in searches}
    dense = all(getattr(c.retriever, "name", "") == "dense" for c in searches)
    return "combsum" if len(searches) > 1 and dense and len(models) == 1 and None not in models else "rrf"


def build_pipeline(
    collections: Sequence[str],
    store: Any = None,
    retriever: str = "auto",
    strategy: str = "progressive",
    llm: LLM | None = None,
    merge: str = "enhanced",
    multi_query: bool = False,
    reformulate: int = 0,
    k: int = 10,
    merge_settings: MergeSettings | None = None,
) -> Pipeline:
    """A pipeline over named collections of a store (default: ``$CONVRAG_HOME/collections``)
    with the local LLM unless ``llm`` is given. The default merge keeps 5 passages within
    1,000 prompt tokens: on a CPU the answer prompt is read at about 70 tokens/s.

    ``retriever="auto"``: hybrid for one collection; dense for several, merged on their raw
    cosine scores when they share an embedding model. Rank fusion (RRF) across collections gives
    every collection's top hit the same score, so off-topic collections crowd out the relevant
    one: on MT-RAG's four domains as four collections, RRF fell to 0.16 ALL-3 nDCG@10 where
    raw dense scores kept 0.35 (per-domain 0.35; docs/benchmarks.md)."""
    from .config import default_store
    from .index.collection import CollectionStore
    from .llm import make_llm
    from .retrieve.multi import open_collections
    from .strategies import make_strategy

    if not collections:
        raise ConvragError("choose at least one collection")
    opened = CollectionStore(store or default_store())
    llm = llm or make_llm("local")
    chosen = {name: opened.open(name) for name in collections}
    if retriever == "auto":
        retriever = "hybrid" if len(chosen) == 1 else "dense"
    searches = open_collections(chosen, retriever, k)
    fusion = default_fusion(searches)
    settings = merge_settings or MergeSettings(max_tokens=1000, max_passages=5, fusion=fusion, norm="none" if fusion == "combsum" else "minmax")
    return Pipeline(
        searches,
        make_strategy(strategy, llm),
        merge=merge,
        merge_settings=settings,
        generator=AnswerGenerator(llm),
        multi_query=multi_query,
        summary=make_strategy("summary", llm) if multi_query else None,
        reformulate=reformulate,
        reformulate_llm=llm,
    )
