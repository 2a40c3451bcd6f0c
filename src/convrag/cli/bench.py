"""``convrag bench ...``: the benchmarks whose results go into docs/benchmarks.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..console import console
from .app import (
    BackendOpt,
    LLMOpt,
    SplitOpt,
    bench_app,
    check_backend,
    split_list,
)


@bench_app.command("retrieval")
def bench_retrieval(
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder.")] = Path("../shared/mtrag"),
    out: Annotated[Path, typer.Option("--out", help="Where to write the benchmark's results.")] = Path("runs/bench-retrieval"),
    synthetic: Annotated[int, typer.Option(min=1, help="Passages in the synthetic latency corpus.")] = 200_000,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Rebuild the collections to measure build time.")] = False,
    split: SplitOpt = "test",
) -> None:
    """BM25/dense/hybrid x lastturn/rewrite/questions on all of MT-RAG, plus speed and memory figures."""
    from ..bench.retrieval import run_retrieval_benchmark

    run_retrieval_benchmark(data, out, synthetic, rebuild, split)


@bench_app.command("milvus")
def bench_milvus(
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder.")] = Path("../shared/mtrag"),
    out: Annotated[Path, typer.Option("--out", help="Where to write the benchmark's results.")] = Path("runs/bench-milvus"),
    split: SplitOpt = "test",
) -> None:
    """The Milvus backend against the embedded one: metrics, top-10 overlap, ingest, latency, memory."""
    from ..bench.milvus import run_milvus_benchmark

    run_milvus_benchmark(data, out, split)


@bench_app.command("merge")
def bench_merge(
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder.")] = Path("../shared/mtrag"),
    out: Annotated[Path, typer.Option("--out", help="Where to write the benchmark's results.")] = Path("runs/bench-merge"),
    split: SplitOpt = "test",
) -> None:
    """Merge latency (10 and 50 collections x 100 results) and the four domains merged as four collections."""
    from ..bench.merge import run_merge_benchmark

    run_merge_benchmark(data, out, split)


@bench_app.command("service")
def bench_service(
    out: Annotated[Path, typer.Option("--out", help="Where to write the results and the server's data.")] = Path("runs/bench-service"),
    documents: Annotated[int, typer.Option("--documents", min=1, help="Documents uploaded and indexed through the API.")] = 1000,
    conversations: Annotated[int, typer.Option("--conversations", min=1, help="Concurrent conversations.")] = 20,
    turns: Annotated[int, typer.Option("--turns", min=1, help="Turns per conversation.")] = 10,
    backend: BackendOpt = "embedded",
) -> None:
    """A real `convrag serve` under load: indexing uploads, concurrent conversations, a slow generation
    (collections embedded, or with --backend milvus in a Milvus Lite file in the server's data folder)."""
    from ..bench.service import run_service_benchmark

    check_backend(backend)
    report = run_service_benchmark(out, documents, conversations, turns, backend=backend)
    console.print_json(data=report)


@bench_app.command("strategies")
def bench_strategies(
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder.")] = Path("../shared/mtrag"),
    out: Annotated[Path, typer.Option("--out", help="Where to write the benchmark's results.")] = Path("runs/bench-strategies"),
    strategies: Annotated[str, typer.Option("--strategies", help="Comma-separated strategies.")] = "last_turn,full_rewrite,targeted,mmr_cluster,summary,progressive",
    retriever: Annotated[str, typer.Option("--retriever", "-r", help="Comma-separated retrievers.")] = "bm25,hybrid",
    llm: LLMOpt = "local",
    split: SplitOpt = "test",
) -> None:
    """All strategies x BM25 and hybrid on all of MT-RAG with the local LLM (cached; resumable), with targets."""
    from ..bench.strategies import run_strategy_benchmark
    from ..strategies.registry import check_strategy

    names = [check_strategy(n) for n in split_list(strategies)]  # fail fast on a typo, before hours of model calls
    run_strategy_benchmark(data, out, names, split_list(retriever), llm, split)


@bench_app.command("llm")
def bench_llm(
    out: Annotated[Path, typer.Option("--out", help="Where to write the benchmark's results.")] = Path("runs/bench-llm"),
    prompt_tokens: Annotated[int, typer.Option("--prompt-tokens", min=64, max=2000, help="Prompt tokens read per run.")] = 500,
    generated_tokens: Annotated[int, typer.Option("--generated-tokens", min=1, max=512, help="Tokens written per run.")] = 64,
    runs: Annotated[int, typer.Option("--runs", min=1, help="Timed runs of each.")] = 3,
) -> None:
    """How fast the local model reads a prompt and writes tokens here, and how llama.cpp was built."""
    from ..bench.llm_speed import run_llm_speed_benchmark

    run_llm_speed_benchmark(out, prompt_tokens, generated_tokens, runs)


@bench_app.command("strategy-latency")
def bench_strategy_latency(
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder.")] = Path("../shared/mtrag"),
    out: Annotated[Path, typer.Option("--out", help="Where to write the benchmark's results.")] = Path("runs/bench-strategy-latency"),
    strategies: Annotated[str, typer.Option("--strategies", help="Comma-separated strategies, timed with prefix reuse.")] = "full_rewrite,targeted,mmr_cluster,summary,progressive",
    without_reuse: Annotated[str, typer.Option("--without-reuse", help="Strategies also timed with the local backend's prefix reuse off ('' for none).")] = "full_rewrite,progressive",
    per_domain: Annotated[int, typer.Option("--per-domain", min=1, help="Conversations per domain (the first by id).")] = 2,
    llm: LLMOpt = "local",
    split: SplitOpt = "test",
) -> None:
    """Live (uncached) latency per turn of each strategy on an idle machine, with the latency targets."""
    from ..bench.strategy_latency import run_strategy_latency_benchmark
    from ..strategies.registry import check_strategy

    names, plain = split_list(strategies), split_list(without_reuse)
    for name in names + plain:
        check_strategy(name)
    run_strategy_latency_benchmark(data, out, names, per_domain, plain, llm, split)
