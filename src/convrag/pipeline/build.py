"""One builder for every pipeline: from a :class:`PipelineSpec` to a runnable :class:`Pipeline`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..embeddings import Embedder
from ..errors import CollectionDamaged, CollectionReplaced
from ..generate.answer import ANSWER_PRESETS, AnswerGenerator, AnswerSettings
from ..llm.base import LLM
from ..merge.enhanced import MergeSettings
from ..queries.stages import make_query_stages
from ..retrieve.multi import CollectionSearch, Unavailable, open_collections
from ..retrieve.routing import RoutingSettings
from .core import Pipeline
from .spec import PipelineSpec


def choose_retriever(spec: PipelineSpec) -> str:
    """``auto``: hybrid, for one collection or several. Several collections are routed (only those
    the turn is about are searched, then fused by RRF): on MT-RAG's four domains as four
    collections (dev half, human rewrites), routing kept ALL-3 nDCG@10 at 0.329 against 0.330 for
    each domain searched alone, where RRF over all four fell to 0.144 (docs/benchmarks.md)."""
    return "hybrid" if spec.retriever == "auto" else spec.retriever


def default_fusion(searches: Sequence[CollectionSearch]) -> str:
    """``combsum`` on raw scores when every collection is searched densely with one model (cosines
    are comparable), else ``rrf``. A damaged collection (it returns nothing) does not change the choice."""
    searches = [c for c in searches if not isinstance(c.retriever, Unavailable)]
    models = {getattr(c.embedder, "name", None) for c in searches}
    dense = all(getattr(c.retriever, "name", "") == "dense" for c in searches)
    return "combsum" if len(searches) > 1 and dense and len(models) == 1 and None not in models else "rrf"


def merge_settings_for(spec: PipelineSpec, searches: Sequence[CollectionSearch]) -> MergeSettings:
    fusion = default_fusion(searches)
    return MergeSettings(max_tokens=spec.answer_tokens, max_passages=spec.answer_passages, fusion=fusion,
                         norm="none" if fusion == "combsum" else "minmax")


def build_pipeline(
    spec: PipelineSpec,
    *,
    llm: LLM | None = None,
    store: Any = None,
    opened: Mapping[str, Any] | None = None,
    embedder: Embedder | None = None,
    generate: bool = True,
    milvus: Any = None,
) -> Pipeline:
    """The pipeline ``spec`` describes, over collections already ``opened`` (name -> Collection, as
    the benchmarks have them), opened by name from ``store`` (default ``$CONVRAG_HOME/collections``),
    or, given a ``milvus`` store (:class:`convrag.backends.milvus.MilvusStore`), those of that Milvus.
    ``llm`` defaults to the local model; ``generate=False`` builds a search-only pipeline."""
    from ..strategies import make_strategy
    from ..strategies.registry import NEEDS_LLM

    # collections first: an unknown or broken one is said before the model takes seconds to load
    if opened is not None:
        searches = open_collections({name: opened[name] for name in spec.collections}, choose_retriever(spec), spec.k)
    elif milvus is not None:
        from ..backends.milvus import milvus_searches

        searches = milvus_searches(milvus, spec.collections, choose_retriever(spec), spec.k)
    else:
        searches = _searches_of_live_versions(spec, store)
    needs_llm = generate or spec.strategy in NEEDS_LLM or len(spec.queries) > 1
    if llm is None and needs_llm:
        from ..llm import make_llm

        llm = make_llm("local")
    return Pipeline(
        searches,
        make_strategy(spec.strategy, llm, embedder, **spec.options),
        renderings=make_query_stages(spec.queries, llm, embedder, reformulations=spec.reformulations),
        merge=spec.merge,
        merge_settings=merge_settings_for(spec, searches),
        generator=AnswerGenerator(llm, answer_settings(spec), embedder) if generate and llm is not None else None,
        routing=RoutingSettings() if spec.route and len(spec.collections) > 1 else None,
    )


def answer_settings(spec: PipelineSpec) -> AnswerSettings:
    """The spec's answer settings, with its decline floor where it sets one."""
    settings = ANSWER_PRESETS[spec.answer]
    if spec.decline_below is None or settings.decline is None:
        return settings
    return replace(settings, decline=replace(settings.decline, min_relevance=spec.decline_below))


def _searches_of_live_versions(spec: PipelineSpec, store: Any) -> list[CollectionSearch]:
    """The spec's collections opened by name, each with its retriever (which loads its index). A
    build that publishes between the opening and the loading removes the version just opened
    (:class:`CollectionReplaced`); the collections are then opened again, at their new versions."""
    from ..config import default_store
    from ..index.collection import OPEN_ATTEMPTS, CollectionStore

    catalog = CollectionStore(store or default_store())
    attempts = OPEN_ATTEMPTS
    while True:
        attempts -= 1
        opened = {name: _open_or_damaged(catalog, name) for name in spec.collections}
        try:
            return open_collections(opened, choose_retriever(spec), spec.k)
        except CollectionReplaced:
            if not attempts:
                raise


def _open_or_damaged(catalog: Any, name: str) -> Any:
    """The opened collection, or the :class:`CollectionDamaged` its files raised: a damaged collection
    among several is left to fail its searches (``open_collections``), not to sink the pipeline. Any
    other error (an unknown name) is the caller's to fix and raised at once."""
    try:
        return catalog.open(name)
    except CollectionDamaged as exc:
        return exc


class LivePipeline:
    """A pipeline over a store's collections that follows their live versions, for a long session
    (``convrag chat``): :meth:`current` builds it again when a collection was re-indexed since the
    last turn (``convrag index`` in another terminal), so the next turn searches what was added.
    The service does the same per request (``convrag.service.pipelines``). Milvus collections
    (``milvus``) have no versions: Milvus searches what is stored when the query comes."""

    def __init__(self, spec: PipelineSpec, llm: LLM | None, store: Any = None, milvus: Any = None) -> None:
        from ..config import default_store

        self.spec, self.llm, self.root, self.milvus = spec, llm, Path(store or default_store()), milvus
        self._versions = self._live()
        self.pipeline = build_pipeline(spec, llm=llm, store=self.root, milvus=milvus)

    def _live(self) -> tuple[str | None, ...]:
        from ..index.collection import live_version

        if self.milvus is not None:
            return ()
        return tuple(live_version(self.root / name) for name in self.spec.collections)

    def choose(self, collections: Sequence[str]) -> Pipeline:
        """Search ``collections`` from the next turn on (the chat's ``/collections``). Built before it
        is switched to: an unknown or unreadable collection raises, and the pipeline stays as it was."""
        return self._rebuilt(collections=tuple(dict.fromkeys(collections)))

    def set_decline_below(self, floor: float) -> Pipeline:
        """Decline below ``floor`` from the next turn on (the chat's ``/decline-below``), as
        ``--decline-below`` would have. A floor the answer settings cannot take raises, and the
        pipeline stays as it was."""
        return self._rebuilt(decline_below=floor)

    def _rebuilt(self, **changes: Any) -> Pipeline:
        """The pipeline of the spec with ``changes``, switched to once built (a spec it refuses, or
        a collection it cannot open, raises and leaves the pipeline as it was)."""
        spec = replace(self.spec, **changes)
        pipeline = build_pipeline(spec, llm=self.llm, store=self.root, milvus=self.milvus)
        self.spec, self.pipeline, self._versions = spec, pipeline, self._live()
        return pipeline

    def decline_floor(self) -> float | None:
        """The decline gate's floor the turns use (None: the answer settings have no gate)."""
        gate = answer_settings(self.spec).decline
        return None if gate is None else gate.min_relevance

    def current(self) -> tuple[Pipeline, list[str]]:
        """The pipeline over the live versions, and the collections re-indexed since the last call."""
        versions = self._live()
        changed = [name for name, old, new in zip(self.spec.collections, self._versions, versions) if old != new]
        if changed:
            self.pipeline = build_pipeline(self.spec, llm=self.llm, store=self.root, milvus=self.milvus)
            self._versions = versions
        return self.pipeline, changed
