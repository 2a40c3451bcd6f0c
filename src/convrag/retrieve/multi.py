"""Searching many collections at once: concurrently, each with its own retriever and model.

Queries are embedded once per distinct embedding model: every retriever of one model shares
a :class:`SharedQueryEmbedder`, which is filled before the collections are searched. A
collection that fails or exceeds its timeout is reported and left out; the others answer.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..embeddings import Embedder
from ..errors import CollectionDamaged
from ..types import SourcedHit, document_of
from .base import Retriever


class SharedQueryEmbedder:
    """An :class:`Embedder` that remembers recent query vectors, so that collections sharing a
    model embed each query once. Everything but ``encode`` is the wrapped embedder's."""

    def __init__(self, embedder: Embedder, capacity: int = 1024) -> None:
        self._inner = embedder
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()
        self.computed = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def encode(self, texts: Sequence[str], progress: Any = None, chunk: int = 1024) -> np.ndarray:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
            if missing:
                for text, vector in zip(missing, self._inner.encode(missing)):
                    self._vectors[text] = vector
                self.computed += len(missing)
                while len(self._vectors) > self._capacity:
                    self._vectors.popitem(last=False)
            for t in texts:
                self._vectors.move_to_end(t)
            return np.stack([self._vectors[t] for t in texts]) if texts else np.zeros((0, self._inner.dimension), np.float32)


#: A collection's cosines for each query vector: at least its ``top`` highest (all of them will do),
#: in any order. Routing compares collections by these; the embedded backend scores every passage,
#: Milvus returns its ``top`` nearest.
Cosines = Callable[[np.ndarray, int], Sequence[np.ndarray]]


@dataclass
class CollectionSearch:
    """One collection of a pipeline: its retriever, the shared embedder of its model (if dense),
    how many results to take, and its weight in the merge."""

    name: str
    retriever: Retriever
    embedder: SharedQueryEmbedder | None = None
    k: int = 10
    weight: float = 1.0
    cosines: Cosines | None = None  # how its dense index scores query vectors, for routing; None: it has none

    def evidence(self, texts: Sequence[str], top: int = 3) -> list[float] | None:
        """How strongly this collection matches each text (mean of its ``top`` best cosines); None
        when it cannot say (no dense index or no embedder)."""
        from .routing import evidence

        if self.cosines is None or self.embedder is None:
            return None
        return [evidence(np.asarray(row, dtype=np.float32), top) for row in self.cosines(self.embedder.encode(list(texts)), top)]


@dataclass
class SearchReport:
    """Per-collection results, failures (name -> reason) and timings (name -> seconds)."""

    results: dict[str, list[list[SourcedHit]]] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    embeddings_computed: dict[str, int] = field(default_factory=dict)


def _sourced(collection: str, hits: Sequence[Any]) -> list[SourcedHit]:
    return [SourcedHit(collection, h.doc_id, document_of(h.doc_id), h.text, h.title, h.url, float(h.score), h.rank or i + 1)
            for i, h in enumerate(hits)]


def search_collections(
    collections: Sequence[CollectionSearch], queries: Sequence[str], timeout_s: float = 30.0, max_workers: int | None = None,
    depth: int | None = None,
) -> SearchReport:
    """Search every collection with every query concurrently; never raises for one collection.

    Each collection returns its ``k`` best per query, or ``depth`` when that is more: the caller
    fuses several renderings' lists and cuts the fused list to ``k`` itself."""
    report = SearchReport()
    embedders = {id(c.embedder): c.embedder for c in collections if c.embedder is not None}
    for embedder in embedders.values():  # once per distinct model, before the collections run
        before = embedder.computed
        embedder.encode(list(queries))
        report.embeddings_computed[embedder.name] = embedder.computed - before

    def run(c: CollectionSearch) -> tuple[str, list[list[SourcedHit]], float]:
        start = time.perf_counter()
        found = c.retriever.search(list(queries), max(c.k, depth or 0))
        return c.name, [_sourced(c.name, hits) for hits in found], time.perf_counter() - start

    pool = ThreadPoolExecutor(max_workers or min(16, max(1, len(collections))))
    futures = {pool.submit(run, c): c for c in collections}
    done, pending = wait(futures, timeout=timeout_s)
    # Report in the configured collection order, whatever order the threads finished in,
    # so that merges (whose ties follow collection order) are deterministic.
    for future in [f for f in futures if f in done]:
        c = futures[future]
        try:
            name, results, seconds = future.result()
        except Exception as exc:  # one collection's failure must not sink the others
            report.failures[c.name] = f"{type(exc).__name__}: {exc}"
            continue
        report.results[name] = results
        report.seconds[name] = seconds
    for future in pending:
        report.failures[futures[future].name] = f"timed out after {timeout_s:g} s"
        future.cancel()
    pool.shutdown(wait=False, cancel_futures=True)
    return report


def embedding_counts(collections: Sequence[CollectionSearch]) -> dict[str, int]:
    """Query embeddings computed so far per model by the collections' shared embedders (a turn
    reports the difference over its routing and search together)."""
    return {c.embedder.name: c.embedder.computed for c in collections if c.embedder is not None}


def collection_weights(collections: Sequence[CollectionSearch]) -> Mapping[str, float]:
    return {c.name: c.weight for c in collections if c.weight != 1.0}


def shared_embedder(shared: dict[str, SharedQueryEmbedder], model: str) -> SharedQueryEmbedder:
    """The query embedder of ``model`` that the collections in ``shared`` use, loaded on first need,
    so collections of one model embed each query once."""
    from ..embeddings import load_embedder

    if model not in shared:
        shared[model] = SharedQueryEmbedder(load_embedder(model))
    return shared[model]


class Unavailable:
    """The retriever of a collection whose files cannot be read: every search fails with the reason,
    so that a pipeline over several collections answers from the others and each turn's trace (and
    the caution beside its answer) names this one, as for a collection that fails mid-search."""

    name = "unavailable"

    def __init__(self, error: CollectionDamaged) -> None:
        self.error = error

    def search(self, queries: Sequence[str], k: int = 10) -> list[list[Any]]:
        raise self.error


def open_collections(
    collections: Mapping[str, Any], retriever: str = "hybrid", k: int = 10, weights: Mapping[str, float] | None = None,
    retrievers: Mapping[str, str] | None = None,
) -> list[CollectionSearch]:
    """:class:`CollectionSearch` entries for opened collections (name -> ``Collection``): each
    with its own retriever (``retrievers[name]``, else ``retriever``) and one shared query
    embedder per embedding model.

    A damaged collection (given as the :class:`CollectionDamaged` its opening raised, or whose index
    cannot be loaded) is searched by an :class:`Unavailable` retriever while another can be searched;
    when none can, the first one's error is raised."""
    from .registry import make_retriever

    shared: dict[str, SharedQueryEmbedder] = {}
    out = []
    for name, collection in collections.items():
        if isinstance(collection, CollectionDamaged):
            out.append(CollectionSearch(name, Unavailable(collection), k=k))
            continue
        kind = (retrievers or {}).get(name, retriever)
        model = collection.manifest.embedding_model
        embedder = shared_embedder(shared, model) if kind != "bm25" and model else None
        try:
            searcher = make_retriever(kind, collection, embedder)
        except CollectionDamaged as exc:
            out.append(CollectionSearch(name, Unavailable(exc), k=k))
            continue
        out.append(CollectionSearch(name, searcher, embedder, k, (weights or {}).get(name, 1.0),
                                    _every_cosine(collection) if embedder is not None else None))
    unavailable = [c.retriever for c in out if isinstance(c.retriever, Unavailable)]
    if unavailable and len(unavailable) == len(out):
        raise unavailable[0].error
    return out


def _every_cosine(collection: Any) -> Cosines:
    """An embedded collection's cosines for routing: every passage's (its first window, as Milvus
    stores it), computed exactly."""
    return lambda vectors, top: collection.dense.scores(vectors)
