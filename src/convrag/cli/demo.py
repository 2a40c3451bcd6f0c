"""The main job on the embedded default: the bundled MT-RAG sample, indexed and compared."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.panel import Panel

from ..config import home
from ..console import RichReporter, console
from ..data.layout import MTRAGData, sample_root
from ..eval.experiment import run_grid, write_outputs
from ..eval.runner import BenchmarkIndexes, RunResult
from ..llm.base import LLM
from .app import app
from .output import print_results_table, snippet

RETRIEVERS = ("bm25", "dense", "hybrid")
SOURCES = ("lastturn", "rewrite")
SHOWN_RUN = "hybrid+rewrite"
DEMO_TASK = "4751cd8210b4adb8bce5cbc3fe913096<::>3"


def run_demo(rebuild: bool = False) -> list[RunResult]:
    data = MTRAGData.discover(sample_root())
    console.rule("convrag demo: the bundled MT-RAG sample")
    console.print(
        f"{sum(len(data.tasks(d)) for d in data.domains)} tasks from {len(data.conversations)} human conversations "
        f"in {len(data.domains)} domains (MT-RAG, Apache-2.0; see {data.root / 'ATTRIBUTION.md'})."
    )
    reporter = RichReporter()
    indexes = BenchmarkIndexes(data, home() / "demo-indexes", rebuild=rebuild, reporter=reporter)
    results = run_grid(indexes, data.domains, RETRIEVERS, SOURCES, reporter=reporter)
    baseline = "bm25+lastturn"
    summary = write_outputs(results, home() / "demo-runs", baseline)
    console.print()
    print_results_table(results, baseline)
    console.print(
        "[dim]Sample figures: a few conversations and about 1,300 passages per domain, so they are noisy and "
        "not comparable to the benchmark's; `convrag eval --data ../shared/mtrag` runs the real thing.[/dim]"
    )
    show_conversation(data, next(r for r in results if r.name == SHOWN_RUN))
    from ..llm import make_llm

    llm = make_llm("local")  # one model instance for both parts below
    show_progressive(data, indexes, llm)
    show_cited_answer(data, indexes, llm)
    console.out(f"\nFull tables, official result files and TREC runs: {summary.parent}")
    return results


def show_progressive(data: MTRAGData, indexes: BenchmarkIndexes, llm: LLM, conversations: int = 2, top: int = 3) -> None:
    """The progressive strategy with the local LLM on a few sample conversations: for each turn the
    question, the stage that resolved it, the query used, and the top hybrid passages."""
    from ..fusion import fuse_lists
    from ..queries.multi_query import FUSION_DEPTH
    from ..queries.strategy import StrategySource
    from ..strategies import make_strategy

    chosen = [c for c in data.conversations if c.domain in ("cloud", "clapnq")][:conversations]
    console.print()
    console.rule("progressive context escalation with the local LLM (Qwen2.5-Coder-1.5B, llama.cpp)")
    source = StrategySource(make_strategy("progressive", llm, indexes.embedder), reporter=RichReporter())
    for conversation in chosen:
        tasks = [t for t in conversation.tasks() if t.task_id in {x.task_id for x in data.tasks(conversation.domain)}]
        sets = source.query_sets(tasks)
        search = indexes.retriever(conversation.domain, "hybrid")
        hits = [fuse_lists(search.search(list(sets[t.task_id]), FUSION_DEPTH), depth=top) for t in tasks]
        qrels = data.qrels(conversation.domain)
        for task, task_hits in zip(tasks, hits):
            trace = source.results[task.task_id].trace
            lines = [f"[bold]{conversation.domain} Q{task.turn}:[/bold] {escape(task.question)}"]
            cost = f"{len(trace.calls)} LLM call(s), {trace.prompt_tokens} prompt tokens, {trace.effective_latency_s:.1f} s"
            lines.append(f"[dim]stage {trace.stage} ({cost})[/dim]")
            if trace.final_query != task.question:
                lines.append(f"[dim]query:[/dim] {escape(trace.final_query)}")
            for other in trace.details.get("fused_with", []):
                lines.append(f"[dim]fused with:[/dim] {escape(other)}")
            for fb in trace.fallbacks:
                lines.append(f"[yellow]fallback at {fb.stage}: {escape(fb.reason)}[/yellow]")
            for hit in task_hits:
                mark = "[green]relevant[/green]" if qrels.get(task.task_id, {}).get(hit.doc_id, 0) > 0 else "[dim]-[/dim]"
                lines.append(f"  {hit.rank}. {mark} {escape(hit.doc_id)}  {escape(snippet(hit.text, 140))}")
            console.print(Panel("\n".join(lines), expand=True), highlight=False, soft_wrap=False)
    hits_misses = f"{getattr(llm, 'hits', 0)} cached, {getattr(llm, 'misses', 0)} computed"
    console.print(f"[dim]LLM calls: {hits_misses} (cache: $CONVRAG_HOME/llm-cache.sqlite). "
                  "`convrag rewrite QUESTION --history FILE --trace` shows a full trace.[/dim]")


def show_conversation(data: MTRAGData, result: RunResult, top: int = 3) -> None:
    """Each turn of one conversation: question, query used, top passages marked relevant or not."""
    conversation = data.conversations[0]
    qrels = data.qrels(conversation.domain)
    console.print()
    console.rule(f"one conversation ({conversation.domain}, {conversation.conversation_id}) with {result.name}")
    for task in conversation.tasks():
        if task.task_id not in result.hits:
            continue
        judged = qrels.get(task.task_id, {})
        lines = [f"[bold]Q{task.turn}:[/bold] {escape(task.question)}"]
        if result.queries[task.task_id] != task.question:
            lines.append(f"[dim]query:[/dim] {escape(result.queries[task.task_id])}")
        scores = result.per_query.get(task.task_id, {})
        lines.append(f"[dim]nDCG@10 {scores.get('nDCG@10', 0):.3f}   Recall@5 {scores.get('Recall@5', 0):.3f}[/dim]")
        for hit in result.hits[task.task_id][:top]:
            mark = "[green]relevant[/green]" if judged.get(hit.doc_id, 0) > 0 else "[dim]-[/dim]"
            lines.append(f"  {hit.rank}. {mark} {escape(hit.doc_id)} [dim]{hit.score:.4f}[/dim]  {escape(snippet(hit.text, 150))}")
        console.print(Panel("\n".join(lines), expand=True), highlight=False, soft_wrap=False)


def show_cited_answer(data: MTRAGData, indexes: BenchmarkIndexes, llm: LLM) -> None:
    """A follow-up question answered over two collections at once (cloud and fiqa), with citations."""
    from ..pipeline import PipelineSpec, build_pipeline
    from ..strategies.standalone import standalone_verdict
    from ..types import Message
    from .chat import print_answer, print_decisions

    # A follow-up that only makes sense with its history ("Tax-wise, how does it work?"); any other
    # pronoun follow-up of the sample if the sample changes.
    candidates = [t for d in ("fiqa", "cloud") for t in data.tasks(d)
                  if t.turn >= 2 and any(m.startswith("pronoun:") for m in standalone_verdict(t.question).markers)]
    task = next((t for t in candidates if t.task_id == DEMO_TASK), candidates[0])
    spec = PipelineSpec(("cloud", "fiqa"))  # several collections: the multi-collection default
    pipeline = build_pipeline(spec, llm=llm, opened={d: indexes.collection(d) for d in spec.collections}, embedder=indexes.embedder)
    console.print()
    console.rule("a cited answer to a follow-up question, over two collections (cloud + fiqa, routed hybrid, enhanced merge)")
    for message in task.history[-2:]:
        console.print(f"[dim]{message.speaker}:[/dim] {escape(snippet(message.text, 200))}", highlight=False)
    console.print(f"[bold]user:[/bold] {escape(task.question)}", highlight=False)
    result = pipeline.answer([*task.history, Message("user", task.question)], task.task_id)
    print_answer(result)
    print_decisions(result)


@app.command(rich_help_panel="Demo")
def demo(
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Rebuild the sample's collections.")] = False,
) -> None:
    """Index the bundled MT-RAG sample, compare retrievers and query sources, and show one conversation."""
    run_demo(rebuild=rebuild)
