"""Evaluating multi-query fusion: each task searched with several query sources, fused with RRF."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..fusion.rrf import reciprocal_rank_fusion
from ..progress import SILENT, Reporter
from ..queries.sources import QuerySource
from ..types import Hit, Task
from .runner import BenchmarkIndexes, MilvusIndexes, RunResult


def fuse_hit_lists(lists: Sequence[Sequence[Hit]], k: int, rrf_k: float = 60.0) -> list[Hit]:
    """RRF over ranked hit lists (ranks from list order); each passage keeps its first hit's text."""
    runs = [{h.doc_id: float(len(hits) - i) for i, h in reversed(list(enumerate(hits)))} for hits in lists]
    fused = reciprocal_rank_fusion(runs, k=rrf_k)
    first: dict[str, Hit] = {}
    for hits in lists:
        for h in hits:
            first.setdefault(h.doc_id, h)
    ranked = sorted(fused, key=lambda d: (-fused[d], d))[:k]
    return [first[d]._replace(score=fused[d], rank=i) for i, d in enumerate(ranked, start=1)]


def run_multi_query(
    indexes: BenchmarkIndexes | MilvusIndexes,
    domains: Sequence[str],
    retriever: str,
    sources: Sequence[QuerySource],
    k: int = 10,
    depth: int = 50,
    retriever_options: Mapping[str, Any] | None = None,
    reporter: Reporter = SILENT,
    tasks_by_domain: Mapping[str, Sequence[Task]] | None = None,
) -> RunResult:
    """Search each task with every source's query (``depth`` results each) and fuse them with RRF."""
    name = "mq(" + "+".join(s.name for s in sources) + ")"
    tasks: dict[str, Task] = {}
    queries: dict[str, str] = {}
    hits: dict[str, list[Hit]] = {}
    start = time.perf_counter()
    for domain in domains:
        domain_tasks = list(tasks_by_domain[domain]) if tasks_by_domain is not None else indexes.data.tasks(domain)
        if not domain_tasks:
            continue
        search = indexes.retriever(domain, retriever, retriever_options)
        per_source = [s.queries(domain_tasks) for s in sources]
        ids = [t.task_id for t in domain_tasks]
        with reporter.stage(f"{domain}: {retriever} + {name}", total=len(ids)) as advance:
            for offset in range(0, len(ids), 64):
                batch = ids[offset : offset + 64]
                lists = [search.search([q[i] for i in batch], depth) for q in per_source]
                for j, task_id in enumerate(batch):
                    hits[task_id] = fuse_hit_lists([found[j] for found in lists], k)
                advance(len(batch))
        tasks.update({t.task_id: t for t in domain_tasks})
        queries.update({t.task_id: " || ".join(dict.fromkeys(q[t.task_id] for q in per_source)) for t in domain_tasks})
    result = RunResult(f"{retriever}+{name}", retriever, name, tasks, queries, hits)
    result.seconds = time.perf_counter() - start
    return result
