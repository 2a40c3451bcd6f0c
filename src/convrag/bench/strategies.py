"""`convrag bench strategies`: the conversational strategies x BM25 and hybrid on MT-RAG.

History is the benchmark's own (its agent answers). Every model call goes through the
persistent cache, so the long first run (hours on two CPU cores) can be interrupted and
resumed, and later runs cost seconds; latency figures use the time each call took when it
was made. With ``--split all`` every figure is reported for the test half (the headline: nothing
was tuned there) and the dev half, with how much of each dev gain over the last turn holds on
test. Reports quality (official scoring), paired tests against ``full_rewrite``, decision
statistics, the progressive strategy stage by stage, and the targets, each marked met or missed.
Nothing here is asserted in the test suite.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..console import RichReporter, console
from ..data.domains import COMPARABLE_DOMAINS
from ..data.layout import MTRAGData
from ..data.splits import conversation_of
from ..eval.experiment import run_grid, write_outputs
from ..eval.report import markdown_table
from ..eval.runner import BenchmarkIndexes, RunResult, score_run
from ..eval.significance import paired_test
from ..eval.strategy_stats import stats_markdown, strategy_stats
from ..index.atomic import write_json, write_text
from ..llm import make_llm
from ..queries.strategy import StrategySource
from ..strategies import STRATEGIES, make_strategy
from ..strategies.base import Trace
from ..text import same_query
from .timing import machine_description, peak_rss_mb

RETRIEVERS = ("bm25", "hybrid")
REFERENCES = ("lastturn", "rewrite")
#: the issue's targets for the progressive strategy
MAX_CALLS_PER_FOLLOW_UP = 0.6
MIN_KEPT_GAIN = 0.8


def restrict(result: RunResult, split: str, assignment: Mapping[str, str], qrels: Mapping[str, Any]) -> RunResult:
    """The same run scored on one half of the conversations only."""
    keep = {tid for tid in result.tasks if split == "all" or assignment.get(conversation_of(tid)) == split}
    part = replace(result, tasks={t: v for t, v in result.tasks.items() if t in keep},
                   queries={t: v for t, v in result.queries.items() if t in keep},
                   hits={t: v for t, v in result.hits.items() if t in keep})
    return score_run(part, qrels)


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
        calls = stats["progressive"]["ALL"]["llm_calls_per_follow_up"]
        rows.append((f"progressive: LLM calls per follow-up turn <= {MAX_CALLS_PER_FOLLOW_UP}", f"{calls:.2f}",
                     calls <= MAX_CALLS_PER_FOLLOW_UP))
        share = stats["progressive"]["ALL"]["stage_share_follow_up"].get("1", 0.0)
        rows.append(("Stage 1 resolves >= 14% of turns after the first", f"{share:.1%}", share >= 0.14))
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


def stage_table(results: Sequence[RunResult], traces: Mapping[str, Trace], human: Mapping[str, str]) -> list[list[object]]:
    """Progressive stage by stage: how many follow-up turns each stage resolved, how often the
    human rewrite is the question itself there (the stage's decision to leave a question alone is
    the human's too), and mean nDCG@10 on those turns for progressive, full_rewrite, the question
    as asked and the human rewrite, per retriever (all domains)."""
    rows: list[list[object]] = []
    by_name = {r.name: r for r in results}
    tasks = next(iter(results)).tasks if results else {}
    stages: dict[str, list[str]] = {}
    for tid, trace in traces.items():
        if tid in tasks and tasks[tid].turn > 1:
            stages.setdefault(trace.stage, []).append(tid)
    for stage, ids in sorted(stages.items()):
        same = np.mean([same_query(human.get(t, "").removeprefix("|user|:").strip(), tasks[t].question) for t in ids])
        row: list[object] = [stage, len(ids), f"{same:.0%}"]
        for retriever in RETRIEVERS:
            for source in ("progressive", "full_rewrite", "lastturn", "rewrite"):
                run = by_name.get(f"{retriever}+{source}")
                row.append(float(np.mean([run.per_query[t]["nDCG@10"] for t in ids if t in run.per_query])) if run else float("nan"))
        rows.append(row)
    return rows


def generalization(dev: Sequence[RunResult], test: Sequence[RunResult]) -> list[list[object]]:
    """Each strategy's gain over the question as asked (ALL-3 nDCG@10) on dev and on test, and the
    share of the dev gain that holds on test (the issue asks for >= 80 %)."""
    rows: list[list[object]] = []
    for retriever in RETRIEVERS:
        base_dev, base_test = _ndcg(dev, f"{retriever}+lastturn"), _ndcg(test, f"{retriever}+lastturn")
        for r in dev:
            if r.retriever != retriever or r.query_source not in STRATEGIES or r.query_source == "last_turn":
                continue
            d, t = _ndcg(dev, r.name), _ndcg(test, r.name)
            if None in (d, t, base_dev, base_test):
                continue
            gain_dev, gain_test = d - base_dev, t - base_test  # type: ignore[operator]
            kept = gain_test / gain_dev if gain_dev > 0 else float("nan")
            verdict = "n/a (no dev gain)" if gain_dev <= 0 else ("met" if kept >= MIN_KEPT_GAIN else "**missed**")
            rows.append([r.name, gain_dev, gain_test, f"{kept:.0%}" if gain_dev > 0 else "-", verdict])
    return rows


def _report(results: Sequence[RunResult], stats: dict[str, Any], sources: Sequence[StrategySource], human: Mapping[str, str],
            title: str) -> tuple[str, dict[str, Any]]:
    rows = targets(results, stats)
    paired = paired_against(results)
    verdict = {True: "met", False: "**missed**", None: "n/a"}
    parts = [
        f"### {title}: retrieval quality (official MT-RAG scoring; history = the benchmark's agent answers)\n",
        quality_table(results),
        f"\n### {title}: paired against full_rewrite (ALL-3 tasks, nDCG@10, randomization test)\n",
        markdown_table(["run", "baseline", "tasks", "run mean", "baseline mean", "delta", "p"], paired),
        f"\n### {title}: decisions and cost per strategy (latency = time per turn when the model calls were made)\n",
        stats_markdown(stats),
    ]
    progressive = next((s for s in sources if s.name == "progressive"), None)
    if progressive is not None:
        traces = {t: tr for t, tr in progressive.traces.items() if t in next(iter(results)).tasks}
        header = ["stage", "follow-ups", "human rewrite = question"]
        header += [f"{r} {s}" for r in RETRIEVERS for s in ("progressive", "full_rewrite", "as asked", "human")]
        parts += [f"\n### {title}: progressive stage by stage (mean nDCG@10 on the turns each stage resolved)\n",
                  markdown_table(header, stage_table(results, traces, human))]
    parts += [f"\n### {title}: targets\n", markdown_table(["target", "measured", "verdict"], [[t, m, verdict[ok]] for t, m, ok in rows])]
    return "\n".join(parts), {"quality": {r.name: r.summary()["metrics"] for r in results},
                              "paired_vs_full_rewrite": [dict(zip(["run", "baseline", "tasks", "run_mean", "baseline_mean", "delta", "p"], row))
                                                         for row in paired],
                              "strategy_stats": stats, "targets": [{"target": t, "measured": m, "met": ok} for t, m, ok in rows]}


def run_strategy_benchmark(
    data_root: Path,
    out: Path,
    strategies: Sequence[str],
    retrievers: Sequence[str] = RETRIEVERS,
    llm_spec: str = "local",
    split: str = "test",
) -> dict[str, Any]:
    reporter = RichReporter()
    data = MTRAGData.discover(data_root, split)
    indexes = BenchmarkIndexes(data, reporter=reporter)
    llm = make_llm(llm_spec)
    sources: list[Any] = list(REFERENCES)
    strategy_sources = [StrategySource(make_strategy(name, llm, indexes.embedder), reporter=reporter) for name in strategies]
    sources += strategy_sources
    results = run_grid(indexes, data.domains, retrievers, sources, reporter=reporter)
    summary = write_outputs(results, out, f"{retrievers[0]}+lastturn")
    human = {tid: q for d in data.domains for tid, q in data.queries(d, "rewrite").items()}
    qrels = {d: data.qrels(d) for d in data.domains}
    halves = ("test", "dev") if split == "all" else (split,)
    report: dict[str, Any] = {"date": dt.date.today().isoformat(), "machine": machine_description(), "split": split,
                              "llm": f"{llm.backend}:{llm.model}", "peak_rss_mb": 0.0}
    markdown = [f"Machine: {report['machine']}; LLM {report['llm']} (greedy); date {report['date']}.\n"]
    scored: dict[str, list[RunResult]] = {}
    for half in halves:
        part = [restrict(r, half, data.splits, qrels) for r in results] if split == "all" else list(results)
        scored[half] = part
        by_task = {tid: t for r in part for tid, t in r.tasks.items()}
        stats = {s.name: strategy_stats({t: tr for t, tr in s.traces.items() if t in by_task}, by_task) for s in strategy_sources}
        text, figures = _report(part, stats, strategy_sources, human, f"{half} half" if split == "all" else split)
        markdown.append(text)
        report[half] = figures
    if split == "all":
        rows = generalization(scored["dev"], scored["test"])
        report["generalization"] = [dict(zip(["run", "gain_dev", "gain_test", "kept", "verdict"], row)) for row in rows]
        markdown.append("\n### Gains over the question as asked (ALL-3 nDCG@10): dev vs test\n")
        markdown.append(markdown_table(["run", "gain on dev", "gain on test", "kept on test", f"keeps >= {MIN_KEPT_GAIN:.0%}"], rows))
    report["peak_rss_mb"] = peak_rss_mb()
    write_json(out / "report.json", report)
    text = "\n".join(markdown)
    write_text(out / "report.md", text + "\n")
    console.out(text, highlight=False)
    console.out(f"\nwrote {out / 'report.md'}, {out / 'report.json'} and {summary}")
    return report
