"""`convrag bench retrieval`: quality and speed of the retrieval layer on all of MT-RAG.

Quality: BM25, dense and hybrid with the lastturn, rewrite and questions query
sources, scored like the official scorer, per domain, ALL and ALL-3. Speed:
collection build time, embedding throughput against plain sentence-transformers,
query latency on the fiqa pool and on a 200k-passage synthetic corpus, time to
evaluate 777 tasks, and peak memory. Each target is checked and reported as met
or missed; nothing here is asserted in the test suite.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..console import RichReporter, console
from ..data.layout import MTRAGData
from ..embeddings import load_embedder
from ..eval.experiment import run_grid, summary_markdown, write_outputs
from ..eval.report import markdown_table
from ..eval.runner import BenchmarkIndexes
from ..index.atomic import write_json, write_text
from ..index.bm25 import BM25Index
from ..index.dense import DenseIndex
from .timing import latencies_ms, machine_description, peak_rss_mb, percentiles

RETRIEVERS = ("bm25", "dense", "hybrid")
SOURCES = ("lastturn", "rewrite", "questions")


#: the retrieval options measured against each other (all with the benchmark's rewrite queries)
OPTIONS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("dense, first window only", "dense", {"windows": "first"}),
    ("dense, best window (MaxP)", "dense", {"windows": "max"}),
    ("dense, mean of first and best window (default)", "dense", {"windows": "mix"}),
    ("hybrid, RRF equal weights, first window (the former default)", "hybrid", {"fusion": "rrf", "alpha": None, "windows": "first"}),
    ("hybrid, RRF dense 0.7, k 20", "hybrid", {"fusion": "rrf", "alpha": 0.7, "rrf_k": 20}),
    ("hybrid, CombSUM dense 0.7 (default)", "hybrid", {}),
    ("hybrid default + RM3 (BM25 feedback)", "hybrid", {"prf": "rm3"}),
    ("hybrid default + Rocchio (dense feedback)", "hybrid", {"prf": "rocchio"}),
)


def option_runs(indexes: BenchmarkIndexes, data: MTRAGData, reporter: Any) -> list[list[object]]:
    """Each retrieval option with the rewrite queries, plus conversation memory on the default hybrid:
    ALL-3 and ALL nDCG@10 and R@5."""
    from ..eval.runner import RunResult, run_retrieval, score_run
    from ..queries.sources import make_query_source
    from ..retrieve.memory import boost_with_memory

    qrels = {d: data.qrels(d) for d in data.domains}
    rows: list[list[object]] = []
    default = None
    for label, retriever, options in OPTIONS:
        result = score_run(run_retrieval(indexes, data.domains, retriever, make_query_source("rewrite", data), 30, options, reporter), qrels)
        if label.endswith("(default)") and retriever == "hybrid":
            default = result
        truncated = score_run(RunResult(result.name, retriever, "rewrite", result.tasks, result.queries,
                                        {t: h[:10] for t, h in result.hits.items()}), qrels)
        rows.append([label, truncated.all3.means["nDCG@10"], truncated.all3.means["Recall@5"], truncated.all.means["nDCG@10"]])
    if default is not None:
        boosted = {}
        for task_id, hits in default.hits.items():
            task = default.tasks[task_id]
            earlier = [default.hits.get(f"{task.conversation_id}<::>{task.turn - j}", []) for j in (1, 2)]
            boosted[task_id] = boost_with_memory(hits, earlier, 0.05, k=10)
        memory = score_run(RunResult("memory", "hybrid", "rewrite", default.tasks, default.queries, boosted), qrels)
        rows.append(["hybrid default + conversation memory (boost 0.05, 2 turns)", memory.all3.means["nDCG@10"],
                     memory.all3.means["Recall@5"], memory.all.means["nDCG@10"]])
    return rows


def _targets(report: dict[str, Any]) -> list[tuple[str, str, bool]]:
    q = report["quality"]
    s = report["speed"]
    return [
        ("BM25 + rewrite, ALL-3 nDCG@10 >= 0.236", f"{q['bm25+rewrite']:.4f}", q["bm25+rewrite"] >= 0.236),
        ("hybrid + rewrite, ALL-3 nDCG@10 >= 0.40", f"{q['hybrid+rewrite']:.4f}", q["hybrid+rewrite"] >= 0.40),
        ("BM25 query p50 < 5 ms (fiqa pool)", f"{s['bm25_fiqa_ms']['p50']:.2f} ms", s["bm25_fiqa_ms"]["p50"] < 5),
        ("BM25 query p50 < 10 ms (200k synthetic)", f"{s['bm25_synthetic_ms']['p50']:.2f} ms", s["bm25_synthetic_ms"]["p50"] < 10),
        ("dense exact search p50 < 20 ms (200k x 384)", f"{s['dense_synthetic_ms']['p50']:.2f} ms", s["dense_synthetic_ms"]["p50"] < 20),
        (
            "embedding throughput within 20% of plain encode",
            f"{s['embedding']['ratio']:.2f}x ({s['embedding']['convrag_per_s']:.1f} vs {s['embedding']['plain_per_s']:.1f} passages/s)",
            s["embedding"]["ratio"] >= 0.8,
        ),
        (f"evaluate {s.get('eval_tasks', 777)} tasks, one retriever, < 30 s (target set for all 777)", f"{s['eval_777_max_s']:.1f} s (slowest run)",
         s["eval_777_max_s"] < 30),
        ("hybrid retrieval per query p50 < 50 ms, query embedding included (slowest pool)",
         f"{max(v['p50'] for v in s['hybrid_query_ms'].values()):.1f} ms", max(v["p50"] for v in s["hybrid_query_ms"].values()) < 50),
    ]


def _synthetic_corpus(texts: list[str], size: int, seed: int = 0) -> list[str]:
    """Passages made of shuffled real sentences, so term statistics resemble the real corpora."""
    rng = random.Random(seed)
    sentences = [s.strip() for t in texts for s in t.replace("\n", " ").split(". ") if len(s.split()) >= 4]
    return [". ".join(rng.choices(sentences, k=rng.randint(4, 9))) for _ in range(size)]


def run_retrieval_benchmark(
    data_root: Path, out: Path, synthetic_size: int = 200_000, rebuild: bool = False, split: str = "test"
) -> dict[str, Any]:
    data = MTRAGData.discover(data_root, split)
    reporter = RichReporter()
    out = Path(out)
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine_description(),
        "data": str(data.root),
        "synthetic": synthetic_size,
    }

    # Quality and evaluation time (collections are built on first use and cached).
    indexes = BenchmarkIndexes(data, rebuild=rebuild, reporter=reporter)
    for domain in data.domains:
        indexes.collection(domain)
    results = run_grid(indexes, data.domains, RETRIEVERS, SOURCES, reporter=reporter)
    write_outputs(results, out / "runs", "bm25+lastturn")
    report["quality"] = {r.name: r.all3.means["nDCG@10"] for r in results if r.all3}
    report["runs"] = [r.summary() for r in results]
    report["tables_md"] = summary_markdown(results, "bm25+lastturn")
    speed: dict[str, Any] = {"eval_seconds": {r.name: round(r.seconds, 2) for r in results}}
    speed["eval_777_max_s"] = max(r.seconds for r in results)
    speed["eval_tasks"] = max(r.all.count for r in results if r.all is not None)
    speed["build_seconds"] = {d: indexes.collection(d).manifest.build_seconds for d in data.domains}
    speed["passages"] = {d: len(indexes.collection(d)) for d in data.domains}
    speed["peak_rss_mb_after_eval"] = peak_rss_mb()

    # BM25 build time on each pool (BM25 only: the dense side is the embedding throughput below).
    speed["bm25_build_s"] = {}
    for domain in data.domains:
        texts = [p.text for p in indexes.collection(domain).passages]
        start = time.perf_counter()
        BM25Index.build(texts)
        speed["bm25_build_s"][domain] = round(time.perf_counter() - start, 2)

    # Embedding throughput: convrag's batched encode vs a plain sentence-transformers encode call.
    embedder = load_embedder()
    sample = [p.text for p in indexes.collection("fiqa").passages[:1024]]
    start = time.perf_counter()
    embedder.encode(sample)
    ours = len(sample) / (time.perf_counter() - start)
    start = time.perf_counter()
    embedder.model.encode(sample)
    plain = len(sample) / (time.perf_counter() - start)
    speed["embedding"] = {"convrag_per_s": ours, "plain_per_s": plain, "ratio": ours / plain, "texts": len(sample)}

    # Query latency on the fiqa pool, one query at a time (777 rewrite queries of all domains).
    fiqa = indexes.collection("fiqa")
    rewrites = [q for d in data.domains for q in data.queries(d, "rewrite").values()]
    speed["bm25_fiqa_ms"] = percentiles(latencies_ms(lambda q: fiqa.bm25.search([q], 10), rewrites))
    vector_of = dict(zip(rewrites, embedder.encode(rewrites)))
    speed["dense_fiqa_search_ms"] = percentiles(latencies_ms(lambda q: fiqa.dense.search(vector_of[q][None, :], 10), rewrites))
    speed["query_embedding_ms"] = percentiles(latencies_ms(lambda q: embedder.encode([q]), rewrites[:200]))
    # The default hybrid retriever end to end, one query at a time: embedding, BM25, dense with windows, fusion.
    speed["hybrid_query_ms"] = {}
    for domain in data.domains:
        hybrid = indexes.retriever(domain, "hybrid")
        hybrid.search(rewrites[:5], 10)  # warm-up
        speed["hybrid_query_ms"][domain] = percentiles(latencies_ms(lambda q, h=hybrid: h.search([q], 10), rewrites[:200]))
    speed["windows"] = {d: indexes.collection(d).manifest.dense_windows for d in data.domains}
    report["options"] = option_runs(indexes, data, reporter)

    # A 200k-passage synthetic corpus for BM25, and a 200k x 384 matrix for exact dense search.
    with reporter.stage(f"synthetic corpus: {synthetic_size} passages"):
        texts = [p.text for d in data.domains for p in indexes.collection(d).passages]
        synthetic = _synthetic_corpus(texts, synthetic_size)
        start = time.perf_counter()
        big = BM25Index.build(synthetic)
        speed["bm25_synthetic_build_s"] = round(time.perf_counter() - start, 2)
        del synthetic
    speed["bm25_synthetic_ms"] = percentiles(latencies_ms(lambda q: big.search([q], 10), rewrites))
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((synthetic_size, embedder.dimension), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    dense = DenseIndex(matrix)
    speed["dense_synthetic_ms"] = percentiles(latencies_ms(lambda q: dense.search(vector_of[q][None, :], 10), rewrites))
    speed["peak_rss_mb"] = peak_rss_mb()
    report["speed"] = speed
    report["targets"] = [{"target": t, "measured": m, "met": ok} for t, m, ok in _targets(report)]

    write_json(out / "benchmark.json", {k: v for k, v in report.items() if k != "tables_md"})
    write_text(out / "benchmark.md", render_markdown(report))
    console.out(markdown_table(["target", "measured", "met"], [[t["target"], t["measured"], "yes" if t["met"] else "NO"] for t in report["targets"]]))
    console.out(f"wrote {out / 'benchmark.md'}")
    return report


def render_markdown(report: dict[str, Any]) -> str:
    s = report["speed"]
    lines = [
        f"Machine: {report['machine']}. Date: {report['date']}. Data: `{report['data']}`.",
        "",
        "### Targets",
        "",
        markdown_table(["target", "measured", "met"], [[t["target"], t["measured"], "yes" if t["met"] else "**no**"] for t in report["targets"]]),
        "",
        "### Speed and memory",
        "",
        markdown_table(
            ["measure", "value"],
            [
                ["passages per domain", json.dumps(s["passages"])],
                ["collection build (BM25 + embeddings), s", json.dumps(s["build_seconds"])],
                ["BM25 index build only, s", json.dumps(s["bm25_build_s"])],
                [f"BM25 build, {report['synthetic']} synthetic passages, s", s["bm25_synthetic_build_s"]],
                ["embedding throughput, convrag / plain encode (passages/s)", f"{s['embedding']['convrag_per_s']:.1f} / {s['embedding']['plain_per_s']:.1f}"],
                ["query embedding, ms p50 / p95", f"{s['query_embedding_ms']['p50']:.2f} / {s['query_embedding_ms']['p95']:.2f}"],
                ["BM25 query (fiqa pool), ms p50 / p95", f"{s['bm25_fiqa_ms']['p50']:.2f} / {s['bm25_fiqa_ms']['p95']:.2f}"],
                ["dense search (fiqa pool), ms p50 / p95", f"{s['dense_fiqa_search_ms']['p50']:.2f} / {s['dense_fiqa_search_ms']['p95']:.2f}"],
                ["default hybrid per query, embedding included, ms p50 / p95",
                 ", ".join(f"{d} {v['p50']:.1f} / {v['p95']:.1f}" for d, v in s["hybrid_query_ms"].items())],
                ["extra dense windows per domain (size / stride / count)", json.dumps(s["windows"])],
                ["BM25 query (200k synthetic), ms p50 / p95", f"{s['bm25_synthetic_ms']['p50']:.2f} / {s['bm25_synthetic_ms']['p95']:.2f}"],
                ["dense search (200k x 384), ms p50 / p95", f"{s['dense_synthetic_ms']['p50']:.2f} / {s['dense_synthetic_ms']['p95']:.2f}"],
                [f"evaluation time per run ({s.get('eval_tasks', 777)} tasks), s", json.dumps(s["eval_seconds"])],
                ["peak memory after evaluation, MiB", f"{s['peak_rss_mb_after_eval']:.0f}"],
                ["peak memory overall (incl. 200k synthetic), MiB", f"{s['peak_rss_mb']:.0f}"],
            ],
        ),
        "",
        "### Retrieval options (rewrite queries, ALL-3 unless named)",
        "",
        markdown_table(["option", "ALL-3 nDCG@10", "ALL-3 R@5", "ALL nDCG@10"], report["options"]),
        "",
        report["tables_md"],
    ]
    return "\n".join(lines) + "\n"
