"""Run retrievers over the MT-RAG tasks and score them like the official scorer.

:class:`BenchmarkIndexes` builds (once) and opens one collection per domain from
a data folder; :func:`run_retrieval` produces the hits for one retriever and one
query source; :func:`score_run` turns hits into official per-domain, ``ALL`` and
``ALL-3`` figures plus breakdowns.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..config import benchmark_index_dir
from ..data.beir import read_corpus
from ..data.domains import COMPARABLE_DOMAINS, collection_name
from ..data.layout import MTRAGData
from ..embeddings import DEFAULT_EMBEDDING_MODEL, Embedder, load_embedder
from ..errors import CollectionError
from ..fusion import RRF_K, fuse_lists
from ..index.bm25 import BM25Params
from ..index.collection import Collection
from ..index.manifest import corpus_sha256
from ..index.windows import WindowSettings
from ..progress import SILENT, Reporter
from ..queries.multi_query import FUSION_DEPTH, distinct
from ..queries.sources import QuerySource, query_sets
from ..retrieve.base import Retriever
from ..retrieve.registry import make_retriever
from ..types import Hit, Task
from .metrics import K_VALUES, CollectionScore, PerQuery, collection_score, metric_names, per_query_scores, weighted_average
from .report import GROUPINGS, breakdown


class BenchmarkIndexes:
    """One collection per MT-RAG domain, built on first use and verified against the corpus file."""

    def __init__(
        self,
        data: MTRAGData,
        index_dir: Path | None = None,
        embedding_model: str = DEFAULT_EMBEDDING_MODEL,
        dense: bool = True,
        rebuild: bool = False,
        reporter: Reporter = SILENT,
        windows: WindowSettings | None = WindowSettings(),
    ) -> None:
        self.data = data
        self.windows = windows
        self.embedding_model = embedding_model
        self.index_dir = Path(index_dir) if index_dir else benchmark_index_dir(data.root, embedding_model)
        self.dense = dense
        self.rebuild = rebuild
        self.reporter = reporter
        self._open: dict[str, Collection] = {}

    @property
    def embedder(self) -> Embedder:
        return load_embedder(self.embedding_model)

    def collection(self, domain: str) -> Collection:
        if domain in self._open:
            return self._open[domain]
        source = self.data.corpus_path(domain)
        with self.reporter.stage(f"{domain}: reading corpus"):
            passages = list(read_corpus(source))
        path = self.index_dir / domain
        digest = corpus_sha256(passages)
        collection = None
        if not self.rebuild:
            try:
                collection = Collection.open(path, expected_corpus_sha256=digest)
            except CollectionError:  # missing, incomplete or stale: build it
                collection = None
            if collection is not None and not collection.intact(bm25=True):  # damaged: build it again
                collection = None
        stale = collection is not None and self.dense and (
            collection.manifest.embedding_model != self.embedder.name
            or (collection.manifest.dense_windows is None) != (self.windows is None))
        if collection is None or stale:
            collection = Collection.build(
                path,
                passages,
                name=domain,
                embedder=self.embedder if self.dense else None,
                source=str(source),
                force=self.rebuild,
                reporter=self.reporter,
                reuse=collection if stale else None,  # a collection gaining windows keeps its passage vectors
                windows=self.windows if self.dense else None,
            )
        # a collection built with other BM25 weights gets today's (its BM25 part alone is rebuilt)
        collection = collection.with_bm25(BM25Params(), self.reporter)
        self._open[domain] = collection
        return collection

    def retriever(self, domain: str, name: str, options: Mapping[str, Any] | None = None) -> Retriever:
        """The named retriever over ``domain``'s collection."""
        embedder = self.embedder if name != "bm25" else None
        return make_retriever(name, self.collection(domain), embedder, **dict(options or {}))


class MilvusIndexes:
    """The same per-domain collections held in Milvus (Lite file or server).

    Passages and their vectors are copied from the embedded collections, so the
    two backends search identical embeddings and nothing is embedded twice. A
    Milvus collection whose corpus hash or size differs is dropped and re-ingested.
    """

    def __init__(self, embedded: BenchmarkIndexes, uri: str, token: str | None = None, reporter: Reporter = SILENT) -> None:
        from ..backends.milvus import MilvusStore

        self.embedded = embedded
        self.data = embedded.data
        self.store = MilvusStore(uri, token)
        self.reporter = reporter
        self.ingest_seconds: dict[str, float] = {}
        self._open: dict[str, Any] = {}

    @property
    def embedder(self) -> Embedder:
        return self.embedded.embedder

    def collection(self, domain: str) -> Any:
        if domain in self._open:
            return self._open[domain]
        source = self.embedded.collection(domain)
        name = f"mtrag-{domain}"
        digest = source.manifest.corpus_sha256
        existing = None
        if self.store.exists(name):
            existing = self.store.open(name)
            if existing.info.corpus_sha256 != digest or len(existing) != len(source):
                self.store.delete(name)
                existing = None
        if existing is None:
            started = time.perf_counter()
            existing = self.store.create(name, self.embedder.name, self.embedder.dimension, corpus_sha256=digest)
            existing.ingest(source.passages, vectors=np.asarray(source.dense.embeddings), reporter=self.reporter)
            self.ingest_seconds[domain] = time.perf_counter() - started
        self._open[domain] = existing
        return existing

    def retriever(self, domain: str, name: str, options: Mapping[str, Any] | None = None) -> Retriever:
        from ..backends.milvus import MilvusRetriever

        return MilvusRetriever(self.collection(domain), name, self.embedder)


@dataclass
class RunResult:
    """Hits and scores of one retriever with one query source over a set of tasks."""

    name: str
    retriever: str
    query_source: str
    tasks: dict[str, Task]
    queries: dict[str, str]
    hits: dict[str, list[Hit]]
    per_query: PerQuery = field(default_factory=dict)
    domains: dict[str, CollectionScore] = field(default_factory=dict)
    all: CollectionScore | None = None
    all3: CollectionScore | None = None
    breakdowns: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    seconds: float = 0.0
    source: Any = None  # the QuerySource that produced ``queries`` (a StrategySource keeps traces)

    def collections(self) -> dict[str, str]:
        return {task_id: collection_name(task.domain) for task_id, task in self.tasks.items()}

    def summary(self) -> dict[str, Any]:
        rows = {name: score.means for name, score in self.domains.items()}
        if self.all3 is not None:
            rows["ALL-3"] = self.all3.means
        if self.all is not None:
            rows["ALL"] = self.all.means
        return {
            "name": self.name,
            "retriever": self.retriever,
            "queries": self.query_source,
            "counts": {name: score.count for name, score in self.domains.items()},
            "metrics": rows,
            "breakdowns": self.breakdowns,
            "seconds": round(self.seconds, 3),
        }


def source_name(group: Sequence[QuerySource]) -> str:
    """What a run's query side is called: the source's name, or ``mq(a+b)`` for several fused. A run
    is named ``retriever+source``."""
    return group[0].name if len(group) == 1 else "mq(" + "+".join(s.name for s in group) + ")"


def run_retrieval(
    indexes: BenchmarkIndexes | MilvusIndexes,
    domains: Sequence[str],
    retriever: str,
    sources: QuerySource | Sequence[QuerySource],
    k: int = 10,
    retriever_options: Mapping[str, Any] | None = None,
    reporter: Reporter = SILENT,
    tasks_by_domain: Mapping[str, Sequence[Task]] | None = None,
    depth: int = FUSION_DEPTH,
    rrf_k: float = RRF_K,
) -> RunResult:
    """Search every task of ``domains`` (the benchmark's, or ``tasks_by_domain`` such as tasks read
    from a generation-task file) with ``retriever``, using one query source, or several whose
    top-``depth`` lists are fused by RRF (multi-query fusion, named ``mq(a+b)``)."""
    group = [sources] if not isinstance(sources, Sequence) else list(sources)
    single = len(group) == 1
    name = source_name(group)
    tasks: dict[str, Task] = {}
    queries: dict[str, str] = {}
    hits: dict[str, list[Hit]] = {}
    start = time.perf_counter()
    for domain in domains:
        domain_tasks = list(tasks_by_domain[domain]) if tasks_by_domain is not None else indexes.data.tasks(domain)
        if not domain_tasks:
            continue
        search = indexes.retriever(domain, retriever, retriever_options)
        per_source = [query_sets(s, domain_tasks) for s in group]
        # identical renderings (up to case and punctuation) are searched and counted once, as in the pipeline
        renderings = {}
        for t in domain_tasks:
            every = [q for table in per_source for q in table[t.task_id]]
            renderings[t.task_id] = distinct(every) or every[:1]
        ids = [t.task_id for t in domain_tasks]
        with reporter.stage(f"{domain}: {retriever} + {name}", total=len(ids)) as advance:
            for offset in range(0, len(ids), 64):
                batch = ids[offset : offset + 64]
                if all(len(renderings[i]) == 1 for i in batch):
                    for task_id, found in zip(batch, search.search([renderings[i][0] for i in batch], k)):
                        hits[task_id] = found
                else:  # several renderings: each searched to ``depth``, fused per task
                    distinct_queries = list(dict.fromkeys(q for i in batch for q in renderings[i]))
                    found = dict(zip(distinct_queries, search.search(distinct_queries, depth)))
                    for task_id in batch:
                        hits[task_id] = fuse_lists([found[q] for q in renderings[task_id]], "rrf", rrf_k=rrf_k, depth=k)
                advance(len(batch))
        tasks.update({t.task_id: t for t in domain_tasks})
        queries.update({t.task_id: " || ".join(renderings[t.task_id]) for t in domain_tasks})
    result = RunResult(f"{retriever}+{name}", retriever, name, tasks, queries, hits, source=group[0] if single else None)
    result.seconds = time.perf_counter() - start
    return result


def score_run(result: RunResult, qrels_by_domain: Mapping[str, Mapping[str, Mapping[str, int]]], k_values: Sequence[int] = K_VALUES) -> RunResult:
    """Fill in the official per-domain, ALL and ALL-3 scores and the breakdowns of ``result``."""
    metrics = metric_names(k_values)
    per_query: PerQuery = {}
    domains: dict[str, CollectionScore] = {}
    for domain, qrels in qrels_by_domain.items():
        domain_ids = [tid for tid, t in result.tasks.items() if t.domain == domain]
        if not domain_ids:
            continue
        run = {tid: {h.doc_id: h.score for h in result.hits.get(tid, [])} for tid in domain_ids}
        scores = per_query_scores(qrels, run, k_values)
        per_query.update(scores)
        domains[domain] = collection_score(domain, scores, len(domain_ids), k_values)
    result.per_query = per_query
    result.domains = domains
    result.all = weighted_average(domains.values(), "ALL")
    comparable = [domains[d] for d in COMPARABLE_DOMAINS if d in domains]
    result.all3 = weighted_average(comparable, "ALL-3") if len(comparable) == len(COMPARABLE_DOMAINS) else None
    result.breakdowns = {
        name: breakdown(per_query, result.tasks, key, metrics) for name, key in GROUPINGS.items()
    }
    return result
