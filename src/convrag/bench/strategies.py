"""`convrag bench strategies`: the six conversational strategies x BM25 and hybrid on all of MT-RAG.

History is the benchmark's own (its agent answers). Every model call goes through the
persistent cache, so the long first run (hours on two CPU cores) can be interrupted and
resumed, and later runs cost seconds; latency figures use the time each call took when it
was made. Reports quality (official scoring), decision statistics and the issue's targets,
each marked met or missed. Nothing here is asserted in the test suite.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..cli.console import RichReporter, console
from ..data.domains import COMPARABLE_DOMAINS
from ..data.layout import MTRAGData
from ..eval.experiment import run_grid, write_outputs
from ..eval.report import markdown_table
from ..eval.runner import BenchmarkIndexes, RunResult
from ..eval.significance import paired_test
from ..eval.strategy_stats import stats_markdown, strategy_stats
from ..index.atomic import write_json, write_text
from ..llm import make_llm
from ..queries.strategy import StrategySource
from ..strategies import STRATEGIES, make_strategy
from .timing import machine_description, peak_rss_mb

RETRIEVERS = ("bm25", "hybrid")
REFERENCES = ("lastturn", "rewrite")


def _ndcg(results: Sequence[RunResult], name: str) -> float | None:
    run = next((r for r in results if r.name == name), None)
    return run.all3.means["nDCG@10"] if run is not None and run.all3 is not None else None


def targets(results: Sequence[RunResult], stats: dict[str, Any]) -> list[tuple[str, str, bool | None]]:
    """(target, measured, met) rows; met is None when a run the target needs is missing."""
    rows: list[tuple[str, str, bool | None]] = []
    for retriever in RETRIEVERS:
        p, f = _ndcg(results, f"{retriever}+progressive"), _ndcg(results, f"{retriever}+full_rewrite")
        if p is not None and f is not None:
            rows.append((f"{retriever}: progressive >= full_rewrite (ALL-3 nDCG@10)", f"{p:.4f} vs {f:.4f}", p >= f))
    if "progressive" in stats:
        mean = stats["progressive"]["ALL"]["latency_s_mean"]
        for other in ("mmr_cluster", "full_rewrite"):
            if other in stats:
                o = stats[other]["ALL"]["latency_s_mean"]
                rows.append((f"progressive mean latency/turn <= half of {other}'s", f"{mean:.2f} s vs {o:.2f} s", mean <= o / 2))
        share = stats["progressive"]["ALL"]["stage_share_follow_up"].get("1", 0.0)
        rows.append(("Stage 1 resolves >= 14% of turns after the first", f"{share:.1%}", share >= 0.14))
    hybrid = {r.query_source: r.all3.means["nDCG@10"] for r in results if r.retriever == "hybrid" and r.all3 and r.query_source in STRATEGIES}
    if hybrid:
        best = max(hybrid, key=lambda k: hybrid[k])
        rows.append(("best strategy + hybrid, ALL-3 nDCG@10 >= 0.42", f"{hybrid[best]:.4f} ({best})", hybrid[best] >= 0.42))
    return rows


def paired_against(results: Sequence[RunResult], baseline: str = "full_rewrite") -> list[list[object]]:
    """Every strategy against ``baseline`` with the same retriever, paired over the ALL-3 tasks
    (randomization test on nDCG@10): which differences in the quality table are more than noise."""
    rows: list[list[object]] = []
    for retriever in dict.fromkeys(r.retriever for r in results):
        base = next((r for r in results if r.name == f"{retriever}+{baseline}"), None)
        if base is None:
            continue
        ids = [tid for tid, task in base.tasks.items() if task.domain in COMPARABLE_DOMAINS]
        for r in results:
            if r.retriever != retriever or r is base or r.query_source not in STRATEGIES:
                continue
            test = paired_test({q: base.per_query[q] for q in ids}, {q: r.per_query[q] for q in ids if q in r.per_query})
            rows.append([r.name, base.name, test.n, test.mean_run, test.mean_baseline, test.delta, test.p_randomization])
    return rows


def quality_table(results: Sequence[RunResult]) -> str:
    domains = list(dict.fromkeys(d for r in results for d in r.domains))
    rows = []
    for r in results:
        if r.all3 is None:
            continue
        rows.append([r.name, *[r.domains[d].means["nDCG@10"] for d in domains], r.all3.means["nDCG@10"], r.all3.means["Recall@5"],
                     r.all.means["nDCG@10"] if r.all else float("nan")])
    return markdown_table(["run", *[f"{d} nDCG@10" for d in domains], "ALL-3 nDCG@10", "ALL-3 R@5", "ALL nDCG@10"], rows)


def run_strategy_benchmark(
    data_root: Path, out: Path, strategies: Sequence[str], retrievers: Sequence[str] = RETRIEVERS, llm_spec: str = "local"
) -> dict[str, Any]:
    reporter = RichReporter()
    data = MTRAGData.discover(data_root)
    indexes = BenchmarkIndexes(data, reporter=reporter)
    llm = make_llm(llm_spec)
    sources: list[Any] = list(REFERENCES)
    strategy_sources = [StrategySource(make_strategy(name, llm, indexes.embedder), reporter=reporter) for name in strategies]
    sources += strategy_sources
    results = run_grid(indexes, data.domains, retrievers, sources, reporter=reporter)
    summary = write_outputs(results, out, f"{retrievers[0]}+lastturn")
    by_task = {tid: t for r in results for tid, t in r.tasks.items()}
    stats = {s.name: strategy_stats(s.traces, by_task) for s in strategy_sources}
    rows = targets(results, stats)
    paired = paired_against(results)
    report = {
        "date": dt.date.today().isoformat(),
        "machine": machine_description(),
        "llm": f"{llm.backend}:{llm.model}",
        "llm_cache": {"hits": getattr(llm, "hits", None), "misses": getattr(llm, "misses", None)},
        "quality": {r.name: r.summary()["metrics"] for r in results},
        "paired_vs_full_rewrite": [dict(zip(["run", "baseline", "tasks", "run_mean", "baseline_mean", "delta", "p"], row)) for row in paired],
        "strategy_stats": stats,
        "targets": [{"target": t, "measured": m, "met": ok} for t, m, ok in rows],
        "peak_rss_mb": peak_rss_mb(),
    }
    write_json(out / "report.json", report)
    verdict = {True: "met", False: "**missed**", None: "n/a"}
    markdown = "\n".join(
        [
            f"Machine: {report['machine']}; LLM {report['llm']} (greedy); date {report['date']}.\n",
            "### Retrieval quality (official MT-RAG scoring; history = the benchmark's agent answers)\n",
            quality_table(results),
            "\n### Paired against full_rewrite (ALL-3 tasks, nDCG@10, randomization test)\n",
            markdown_table(["run", "baseline", "tasks", "run mean", "baseline mean", "delta", "p"], paired),
            "\n### Decisions and cost per strategy (latency = time per turn when the model calls were made)\n",
            stats_markdown(stats),
            "\n### Targets\n",
            markdown_table(["target", "measured", "verdict"], [[t, m, verdict[ok]] for t, m, ok in rows]),
        ]
    )
    write_text(out / "report.md", markdown + "\n")
    console.print(markdown, highlight=False, soft_wrap=True)
    console.print(f"\nwrote {out / 'report.md'}, {out / 'report.json'} and {summary}")
    return report
