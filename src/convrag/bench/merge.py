"""`convrag bench merge`: merge latency, and the four MT-RAG domains as four collections of one pipeline.

Latency: real passages (the fiqa pool) dealt into 10 or 50 collections of 100 ranked results
each; the enhanced merge (RRF, quality signals, diversity, 2,000-token budget counted with the
all-MiniLM-L6-v2 tokenizer, edge ordering). "cold": every passage is new to the token counter
(the first turn a passage is seen); "warm": its count is known (memoized, as in a conversation,
or stored at indexing time). Inputs are frozen out of the garbage collector before timing.

Quality: each task searched in all four domain collections (hybrid, 10 per collection) and merged
into one top 10 (plain RRF, and the enhanced merge), against per-domain retrieval, for the
question as asked and the benchmark's reference rewrite. Official scoring per domain.
"""

from __future__ import annotations

import datetime as dt
import gc
import itertools
import random
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..console import RichReporter, console
from ..data.beir import read_corpus
from ..data.layout import MTRAGData
from ..eval.report import markdown_table
from ..eval.runner import BenchmarkIndexes, RunResult, score_run
from ..fusion import fuse_lists
from ..index.atomic import write_json, write_text
from ..merge import MergeSettings, SourcedHit, enhanced_merge, make_merger
from ..pipeline import PipelineSpec, build_pipeline
from ..queries.sources import make_query_source
from ..types import Hit
from .timing import machine_description, percentiles


def _collections(passages: list[Any], n_collections: int, per: int, rng: random.Random) -> dict[str, list[SourcedHit]]:
    out = {}
    for c in range(n_collections):
        chosen = rng.sample(passages, per)
        out[f"col{c:02d}"] = [SourcedHit(f"col{c:02d}", p.doc_id, p.doc_id, p.text, p.title, "", 1.0 / (r + 1), r + 1)
                              for r, p in enumerate(chosen)]
    return out


def merge_latency(corpus_path: Path, repeats: int = 200, seed: int = 0) -> dict[str, Any]:
    passages = list(itertools.islice(read_corpus(corpus_path), 20_000))
    rng = random.Random(seed)
    settings = MergeSettings(max_tokens=2000, max_passages=10)
    enhanced_merge(_collections(passages, 2, 10, rng), "warm up", settings)  # load the tokenizer
    report: dict[str, Any] = {}
    for n in (10, 50):
        inputs = [_collections(passages, n, 100, rng) for _ in range(repeats)]
        # The inputs are long-lived here, as indexes are in a server: move them out of the
        # garbage collector's young generations so its full passes do not land in the timings.
        gc.collect()
        gc.freeze()
        for phase in ("cold", "warm"):  # the second pass over the same inputs has every token count memoized
            times = []
            for results in inputs:
                start = time.perf_counter()
                enhanced_merge(results, "why do municipalities issue bonds", settings)
                times.append((time.perf_counter() - start) * 1000)
            report[f"{n}x100_{phase}_ms"] = percentiles(np.array(times))
    return report


def _to_sourced(collection: str, hits: list[Hit]) -> list[SourcedHit]:
    return [SourcedHit(collection, h.doc_id, h.doc_id, h.text, h.title, h.url, h.score, h.rank) for h in hits]


def four_collections(data: MTRAGData, indexes: BenchmarkIndexes, reporter: Any) -> list[RunResult]:
    qrels = {d: data.qrels(d) for d in data.domains}
    retrievers = {d: indexes.retriever(d, "hybrid") for d in data.domains}
    opened = {d: indexes.collection(d) for d in data.domains}
    pipeline = build_pipeline(PipelineSpec(tuple(data.domains), strategy="last_turn"), opened=opened, embedder=indexes.embedder,
                              generate=False)
    dense = {d: indexes.retriever(d, "dense") for d in data.domains}
    results = []
    for source_name in ("lastturn", "rewrite"):
        source = make_query_source(source_name, data)
        tasks = {t.task_id: t for d in data.domains for t in data.tasks(d)}
        queries = {}
        for d in data.domains:
            queries.update(source.queries(data.tasks(d)))
        ids = list(tasks)
        per_domain: dict[str, list[Hit]] = {}
        merged: dict[str, dict[str, list[Hit]]] = {"rrf": {}, "enhanced": {}, "dense raw": {}, "dense per-domain": {}, "routed": {}}
        with reporter.stage(f"four collections + {source_name}", total=len(ids)) as advance:
            found: dict[str, dict[str, list[Hit]]] = {d: {} for d in data.domains}
            found_dense: dict[str, dict[str, list[Hit]]] = {d: {} for d in data.domains}
            for d in data.domains:
                for offset in range(0, len(ids), 64):
                    batch = ids[offset : offset + 64]
                    batch_queries = [queries[t] for t in batch]
                    for tid, hits, dhits in zip(batch, retrievers[d].search(batch_queries, 10), dense[d].search(batch_queries, 10)):
                        found[d][tid] = hits
                        found_dense[d][tid] = dhits
            for tid in ids:
                per_domain[tid] = found[tasks[tid].domain][tid]
                lists = {d: _to_sourced(d, found[d][tid]) for d in data.domains}
                for method, settings in (("rrf", MergeSettings(max_tokens=100_000, max_passages=10)),
                                         ("enhanced", MergeSettings(max_tokens=100_000, max_passages=10, order="score"))):
                    outcome = make_merger(method)(lists, queries[tid], settings)
                    merged[method][tid] = [Hit(r.hit.passage_id, r.final_score, r.hit.text, r.hit.title, r.hit.url, i)
                                           for i, r in enumerate(outcome.results, start=1)]
                # Cosine scores of one embedding model are comparable across collections: fuse them raw.
                dense_lists = {d: _to_sourced(d, found_dense[d][tid]) for d in data.domains}
                raw = make_merger("combsum")(dense_lists, queries[tid], MergeSettings(norm="none", max_tokens=100_000, max_passages=10))
                merged["dense raw"][tid] = [Hit(r.hit.passage_id, r.final_score, r.hit.text, r.hit.title, r.hit.url, i)
                                            for i, r in enumerate(raw.results, start=1)]
                merged["dense per-domain"][tid] = found_dense[tasks[tid].domain][tid]
                # the pipeline's policy for several collections: route, then RRF over the kept ones
                earlier = [m.text for m in reversed(tasks[tid].history) if m.speaker == "user"]
                kept, _ = pipeline.route_collections(queries[tid], earlier)
                merged["routed"][tid] = fuse_lists([found[c.name][tid] for c in kept], "rrf", depth=10)
                advance(1)
        for name, hits in (("hybrid, per-domain", per_domain), ("hybrid, 4 collections, routed (the pipeline's default)", merged["routed"]),
                           ("hybrid, 4 collections, rrf", merged["rrf"]),
                           ("hybrid, 4 collections, enhanced", merged["enhanced"]), ("dense, per-domain", merged["dense per-domain"]),
                           ("dense, 4 collections, raw-score combsum", merged["dense raw"])):
            run = RunResult(f"{source_name}: {name}", name.split(",")[0], source_name, tasks, queries, hits)
            results.append(score_run(run, qrels))
    return results


def run_merge_benchmark(data_root: Path, out: Path, split: str = "test") -> dict[str, Any]:
    reporter = RichReporter()
    data = MTRAGData.discover(data_root, split)
    latency = merge_latency(data.corpus_paths["fiqa"])
    indexes = BenchmarkIndexes(data, reporter=reporter)
    runs = four_collections(data, indexes, reporter)
    report = {
        "date": dt.date.today().isoformat(),
        "machine": machine_description(),
        "latency": latency,
        "quality": {r.name: {**{d: s.means["nDCG@10"] for d, s in r.domains.items()},
                             "ALL-3 nDCG@10": r.all3.means["nDCG@10"] if r.all3 else None,
                             "ALL-3 R@5": r.all3.means["Recall@5"] if r.all3 else None} for r in runs},
    }
    rows = [[name, f"{v['p50']:.2f}", f"{v['p95']:.2f}", v["n"]] for name, v in latency.items()]
    targets = [
        ["10 x 100, enhanced: p95 < 2 ms (warm)", f"{latency['10x100_warm_ms']['p95']:.2f} ms", latency["10x100_warm_ms"]["p95"] < 2],
        ["10 x 100, enhanced: p95 < 2 ms (cold)", f"{latency['10x100_cold_ms']['p95']:.2f} ms", latency["10x100_cold_ms"]["p95"] < 2],
        ["50 x 100, enhanced: p95 < 10 ms (cold)", f"{latency['50x100_cold_ms']['p95']:.2f} ms", latency["50x100_cold_ms"]["p95"] < 10],
    ]
    domains = list(data.domains)
    quality_rows = [[r.name, *[r.domains[d].means["nDCG@10"] for d in domains], r.all3.means["nDCG@10"] if r.all3 else float("nan"),
                     r.all3.means["Recall@5"] if r.all3 else float("nan")] for r in runs]
    markdown = "\n".join([
        f"Machine: {report['machine']}; date {report['date']}.\n",
        markdown_table(["merge", "p50 ms", "p95 ms", "merges"], rows),
        "",
        markdown_table(["target", "measured", "verdict"], [[t, m, "met" if ok else "**missed**"] for t, m, ok in targets]),
        "",
        markdown_table(["run", *[f"{d} nDCG@10" for d in domains], "ALL-3 nDCG@10", "ALL-3 R@5"], quality_rows),
    ])
    write_json(out / "report.json", report)
    write_text(out / "report.md", markdown + "\n")
    console.out(markdown, highlight=False)
    return report
