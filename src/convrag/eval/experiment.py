"""A grid of runs (retrievers x query sources) over MT-RAG, its output files and its summary tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..data.generation_tasks import GenerationTask
from ..errors import ConfigError
from ..index.atomic import write_text
from ..progress import SILENT, Reporter
from ..queries.sources import QuerySource, make_query_source
from ..retrieve.registry import check_retrievers
from ..types import Task
from .metrics import metric_names
from .report import markdown_table
from .runner import BenchmarkIndexes, MilvusIndexes, RunResult, run_retrieval, score_run, source_name
from .significance import paired_test
from .writers import write_beir_queries, write_metrics, write_official_results, write_traces, write_trec_run

HEADLINE = ("Recall@5", "nDCG@5", "nDCG@10")


#: the retriever options each retriever takes (the others in a grid's options are for the others)
RETRIEVER_OPTIONS = {"bm25": ("prf",), "dense": ("windows", "prf"), "hybrid": ("fusion", "alpha", "rrf_k", "windows", "prf", "depth")}


def options_for(retriever: str, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The options of a grid that ``retriever`` takes."""
    return {k: v for k, v in (options or {}).items() if k in RETRIEVER_OPTIONS.get(retriever, ())}


def run_grid(
    indexes: BenchmarkIndexes | MilvusIndexes,
    domains: Sequence[str],
    retrievers: Sequence[str],
    sources: Sequence[str | QuerySource],
    k: int = 10,
    retriever_options: Mapping[str, Any] | None = None,
    reporter: Reporter = SILENT,
    generation_tasks: Sequence[GenerationTask] | None = None,
    fused_sources: Sequence[Sequence[str | QuerySource]] = (),
    baseline: str | None = None,
) -> list[RunResult]:
    """Every retriever with every query source (a name, a file, or a source such as a strategy), scored.
    ``baseline``, the run the others are tested against, must be one of the grid's runs; it is checked,
    like ``k``, before any run starts, not after an hour of them."""
    data = indexes.data
    if k < 1:
        raise ConfigError(f"-k must be at least 1, got {k}")
    check_retrievers(retrievers, retriever_options or {})
    built = [make_query_source(spec, data) if isinstance(spec, str) else spec for spec in sources]
    by_name = {s.name: s for s in built}
    groups = [[(by_name.get(m) or make_query_source(m, data)) if isinstance(m, str) else m for m in group] for group in fused_sources]
    planned = [(retriever, [source]) for source in built for retriever in retrievers]
    planned += [(retriever, group) for group in groups for retriever in retrievers]
    names = [f"{retriever}+{source_name(group)}" for retriever, group in planned]
    if baseline is not None and baseline not in names:
        raise ConfigError(f"--baseline {baseline!r} is not a run of this grid; its runs are {', '.join(names)}")
    qrels = {d: data.qrels(d) for d in domains}
    tasks_by_domain = None
    if generation_tasks is not None:
        tasks_by_domain, qrels = generation_task_inputs(generation_tasks, domains, qrels)
    results = []
    for retriever, group in planned:
        options = options_for(retriever, retriever_options)
        result = run_retrieval(indexes, domains, retriever, group, k, options, reporter, tasks_by_domain)
        results.append(score_run(result, qrels))
    return results


def generation_task_inputs(
    generation_tasks: Sequence[GenerationTask], domains: Sequence[str], qrels: Mapping[str, Mapping[str, Mapping[str, int]]]
) -> tuple[dict[str, list[Task]], dict[str, dict[str, dict[str, int]]]]:
    """Tasks of a generation-task file grouped by domain, and the qrels to score them: the benchmark's
    where it judges the task, else the file's reference passages (``contexts``) as relevant."""
    tasks: dict[str, list[Task]] = {d: [] for d in domains}
    merged = {d: dict(qrels.get(d, {})) for d in domains}
    for gen in generation_tasks:
        domain = gen.task.domain
        if domain not in tasks:
            continue
        tasks[domain].append(gen.task)
        if gen.task.task_id not in merged[domain] and gen.contexts:
            merged[domain][gen.task.task_id] = {p.doc_id: 1 for p in gen.contexts}
    return tasks, merged


def significance(results: Sequence[RunResult], baseline: str, metric: str = "nDCG@10") -> list[dict[str, Any]]:
    """Paired tests of every run against the run named ``baseline``."""
    base = next((r for r in results if r.name == baseline), None)
    if base is None:
        return []
    rows = []
    for result in results:
        if result.name == baseline:
            continue
        test = paired_test(base.per_query, result.per_query, metric)
        rows.append({"run": result.name, "baseline": baseline, **test.__dict__})
    return rows


def summary_markdown(results: Sequence[RunResult], baseline: str | None = None) -> str:
    """The full Markdown report: official metrics per domain, significance and breakdowns."""
    if not results:
        return "(no runs)\n"
    metrics = metric_names()
    parts = ["## Retrieval metrics (official MT-RAG scoring)\n"]
    rows = []
    for result in results:
        for name, score in [*result.domains.items(), ("ALL-3", result.all3), ("ALL", result.all)]:
            if score is not None and score.means:
                rows.append([result.name, name, score.count, *[score.means[m] for m in metrics]])
    parts.append(markdown_table(["run", "domain", "tasks", *metrics], rows))
    if baseline:
        tests = significance(results, baseline)
        if tests:
            parts.append(f"\n\n## Paired significance vs `{baseline}` (nDCG@10, all tasks)\n")
            parts.append(
                markdown_table(
                    ["run", "n", "baseline", "run mean", "delta", "p (t-test)", "p (randomization)"],
                    [
                        [t["run"], t["n"], t["mean_baseline"], t["mean_run"], t["delta"], f"{t['p_ttest']:.2g}", f"{t['p_randomization']:.2g}"]
                        for t in tests
                    ],
                )
            )
    for grouping in results[0].breakdowns:
        groups = list(dict.fromkeys(g for r in results for g in r.breakdowns.get(grouping, {})))
        parts.append(f"\n\n## nDCG@10 by {grouping.replace('_', ' ')} (all domains)\n")
        header = ["run", *[f"{g} (n={int(results[0].breakdowns[grouping].get(g, {}).get('count', 0))})" for g in groups]]
        parts.append(
            markdown_table(header, [[r.name, *[r.breakdowns[grouping].get(g, {}).get("nDCG@10", float("nan")) for g in groups]] for r in results])
        )
    return "\n".join(parts) + "\n"


def strategy_outputs(results: Sequence[RunResult], out: Path) -> str:
    """For runs whose queries came from a strategy: BEIR queries, traces and statistics under
    ``strategies/<name>/``; returns the statistics as Markdown for the summary."""
    from ..queries.strategy import StrategySource
    from .strategy_stats import stats_markdown, strategy_stats

    stats = {}
    for result in results:
        source = result.source
        if not isinstance(source, StrategySource) or source.name in stats:
            continue
        folder = out / "strategies" / source.name
        traces = {tid: source.traces[tid] for tid in result.tasks if tid in source.traces}
        write_beir_queries(folder / "queries.jsonl", {tid: t.final_query for tid, t in traces.items()})
        write_traces(folder / "traces.jsonl", traces)
        stats[source.name] = strategy_stats(traces, result.tasks)
        write_metrics(folder / "stats.json", stats[source.name])
    if not stats:
        return ""
    return "\n\n## Strategy decisions and cost (latency includes the recorded time of cached model calls)\n\n" + stats_markdown(stats)


def write_outputs(results: Sequence[RunResult], out: Path, baseline: str | None = None) -> Path:
    """Write each run's official JSONL, TREC run and metrics, plus ``summary.md`` and ``summary.json``."""
    out = Path(out)
    for result in results:
        folder = out / result.name.replace("+", "_")
        write_official_results(folder / "results.jsonl", result.hits, result.collections())
        write_trec_run(folder / "run.trec", result.hits, result.name)
        write_metrics(folder / "metrics.json", {**result.summary(), "per_query": result.per_query, "queries": result.queries})
    summary = out / "summary.md"
    write_text(summary, summary_markdown(results, baseline) + strategy_outputs(results, out))
    write_metrics(out / "summary.json", {"runs": [r.summary() for r in results], "significance": significance(results, baseline) if baseline else []})
    return summary
