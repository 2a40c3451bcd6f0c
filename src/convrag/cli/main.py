"""``convrag``: index, search, evaluate and demo from the terminal.

Every user error (bad file, unknown collection, mismatched model) is printed as
one line and the command exits with status 1.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import ConfigError, ConvragError
from .console import RichReporter, console, err_console

app = typer.Typer(
    name="convrag",
    help="Conversational retrieval-augmented generation, measured on MT-RAG.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
bench_app = typer.Typer(help="Benchmarks whose results go into docs/benchmarks.md.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")

MAX_QUERY_CHARS = 20_000

StoreOpt = Annotated[Optional[Path], typer.Option("--store", help="Folder of collections [default: $CONVRAG_HOME/collections].")]
ModelOpt = Annotated[str, typer.Option("--embedding-model", help="Sentence-transformers model name or path.")]
BackendOpt = Annotated[str, typer.Option("--backend", help="embedded (indexes in a folder) or milvus.")]
MilvusUriOpt = Annotated[
    str,
    typer.Option("--milvus-uri", envvar="CONVRAG_MILVUS_URI", help="Milvus Lite file, or http://host:19530 for a server or cluster."),
]
LLMOpt = Annotated[
    str,
    typer.Option("--llm", envvar="CONVRAG_LLM", help="LLM backend: local, local:/path/model.gguf, openai:MODEL, anthropic:MODEL."),
]
LLMUrlOpt = Annotated[
    Optional[str], typer.Option("--llm-url", envvar="CONVRAG_OPENAI_BASE_URL", help="Base URL of an OpenAI-compatible endpoint.")
]
WorkersOpt = Annotated[int, typer.Option("--workers", help="Concurrent LLM calls (remote backends; the local model runs one at a time).")]
NoCacheOpt = Annotated[bool, typer.Option("--no-llm-cache", help="Do not read or write the persistent LLM completion cache.")]


def _llm(spec: str, url: str | None, no_cache: bool):  # type: ignore[no-untyped-def]
    from ..llm import make_llm

    options = {"base_url": url} if spec.startswith("openai") else {}
    return make_llm(spec, cache=not no_cache, **options)


# The token is read from the environment only, so it never shows up in shell history or process lists.
BACKENDS = ("embedded", "milvus")


def _milvus_token() -> str | None:
    return os.environ.get("CONVRAG_MILVUS_TOKEN") or None


def _check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise ConfigError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


@app.command()
def index(
    source: Annotated[Path, typer.Argument(help="A BEIR corpus (.jsonl, .jsonl.gz, .jsonl.zip) or a folder of .txt/.md/.html documents.")],
    collection: Annotated[str, typer.Option("--collection", "-c", help="Name of the collection to create or update.")],
    store: StoreOpt = None,
    embedding_model: ModelOpt = "all-MiniLM-L6-v2",
    dense: Annotated[bool, typer.Option("--dense/--no-dense", help="Also build the dense index.")] = True,
    max_tokens: Annotated[int, typer.Option(help="Passage length in tokens, for documents.")] = 512,
    overlap: Annotated[int, typer.Option(help="Token overlap between passages, for documents.")] = 100,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Rebuild even if nothing changed.")] = False,
    backend: BackendOpt = "embedded",
    milvus_uri: MilvusUriOpt = "./data/convrag.db",
) -> None:
    """Build a collection (BM25 + dense indexes) from a corpus file or a folder of documents."""
    from ..config import default_store
    from ..data.beir import read_corpus
    from ..embeddings import load_embedder
    from ..index.collection import Collection, CollectionStore
    from ..ingest.chunking import chunk_documents
    from ..ingest.documents import iter_documents

    _check_backend(backend)
    if backend == "milvus" and not dense:
        raise ConfigError("the milvus backend always stores dense vectors; drop --no-dense")
    target = CollectionStore(store or default_store()).path(collection)
    embedder = load_embedder(embedding_model) if dense else None
    reporter = RichReporter()
    if source.is_dir():
        tokenizer = (embedder or load_embedder(embedding_model)).tokenizer
        with reporter.stage(f"chunking documents under {source}"):
            passages = list(chunk_documents(iter_documents(source), tokenizer, max_tokens, overlap))
    else:
        with reporter.stage(f"reading {source}"):
            passages = list(read_corpus(source))
    if backend == "milvus":
        from ..backends.milvus import MilvusStore

        milvus = MilvusStore(milvus_uri, _milvus_token())
        if rebuild:
            milvus.delete(collection)
        assert embedder is not None
        target_collection = milvus.create(collection, embedder.name, embedder.dimension)
        written = target_collection.ingest(passages, embedder, reporter=reporter)
        console.print(f"Milvus collection [bold]{collection}[/bold] at {milvus_uri}: {written} passages upserted, {len(target_collection)} in total")
        return
    built = Collection.build(target, passages, name=collection, embedder=embedder, source=str(source), force=rebuild, reporter=reporter)
    console.print(f"collection [bold]{built.name}[/bold]: {len(built)} passages, embedding {built.manifest.embedding_model}, at {built.path}")


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="The query text.")],
    collection: Annotated[str, typer.Option("--collection", "-c", help="Collection to search.")],
    store: StoreOpt = None,
    retriever: Annotated[str, typer.Option("--retriever", "-r", help="bm25, dense or hybrid.")] = "hybrid",
    k: Annotated[int, typer.Option("-k", help="Number of results.")] = 5,
    backend: BackendOpt = "embedded",
    milvus_uri: MilvusUriOpt = "./data/convrag.db",
) -> None:
    """Search one collection and print the ranked passages."""
    from ..config import default_store
    from ..index.collection import CollectionStore
    from ..retrieve.registry import make_retriever

    if not query.strip():
        raise ConfigError("the query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise ConfigError(f"the query is {len(query)} characters long; the limit is {MAX_QUERY_CHARS}")
    if k < 1:
        raise ConfigError("-k must be at least 1")
    _check_backend(backend)
    if backend == "milvus":
        from ..backends.milvus import MilvusRetriever, MilvusStore

        searcher = MilvusRetriever(MilvusStore(milvus_uri, _milvus_token()).open(collection), retriever)
    else:
        searcher = make_retriever(retriever, CollectionStore(store or default_store()).open(collection))
    hits = searcher.search([query], k)[0]
    if not hits:
        console.print("no passage matches the query")
    for hit in hits:
        console.print(f"[bold]{hit.rank}.[/bold] {hit.doc_id}  [dim]score {hit.score:.4f}[/dim]  {hit.title}")
        console.print(f"   {_snippet(hit.text)}", highlight=False)


def _snippet(text: str, width: int = 220) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@app.command("eval")
def evaluate(
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder (the shared folder or the official repository layout).")],
    domains: Annotated[str, typer.Option("--domains", help="Comma-separated domains, or 'all'.")] = "all",
    retriever: Annotated[str, typer.Option("--retriever", "-r", help="Comma-separated: bm25, dense, hybrid.")] = "bm25,dense,hybrid",
    queries: Annotated[str, typer.Option("--queries", "-q", help="Comma-separated query sources (lastturn, rewrite, questions) or .jsonl query files; '' for none.")] = "lastturn,rewrite",
    strategy: Annotated[str, typer.Option("--strategy", "-s", help="Comma-separated conversational strategies: last_turn, full_rewrite, targeted, mmr_cluster, summary, progressive.")] = "",
    fuse: Annotated[str, typer.Option("--fuse", help="Multi-query fusion runs: comma-separated groups of '+'-joined sources or strategies, e.g. lastturn+progressive.")] = "",
    tasks: Annotated[Optional[Path], typer.Option("--tasks", help="Generation-task JSONL to evaluate instead of the benchmark's retrieval tasks.")] = None,
    llm: LLMOpt = "local",
    llm_url: LLMUrlOpt = None,
    workers: WorkersOpt = 1,
    no_llm_cache: NoCacheOpt = False,
    out: Annotated[Path, typer.Option("--out", help="Output folder for results, run files and tables.")] = Path("runs/eval"),
    baseline: Annotated[Optional[str], typer.Option(help="Run to test the others against, e.g. bm25+lastturn [default: the first run].")] = None,
    k: Annotated[int, typer.Option("-k", help="Passages retrieved per task.")] = 10,
    fusion: Annotated[str, typer.Option(help="Hybrid fusion: rrf (k=60) or score (min-max normalized CombSUM).")] = "rrf",
    alpha: Annotated[Optional[float], typer.Option(help="Hybrid: weight of dense vs BM25 in [0, 1] [default: equal weights].")] = None,
    index_dir: Annotated[Optional[Path], typer.Option(help="Where the per-domain collections live [default: under $CONVRAG_HOME].")] = None,
    embedding_model: ModelOpt = "all-MiniLM-L6-v2",
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Rebuild the per-domain collections.")] = False,
    backend: BackendOpt = "embedded",
    milvus_uri: MilvusUriOpt = "./data/convrag.db",
) -> None:
    """Evaluate retrievers x query sources (and conversational strategies) on MT-RAG; write official results,
    run files, tables and, for strategies, BEIR queries, every trace and the decision statistics."""
    from ..data.domains import parse_domains
    from ..data.layout import MTRAGData
    from ..eval.experiment import run_grid, write_outputs
    from ..eval.runner import BenchmarkIndexes

    layout = MTRAGData.discover(data)
    chosen = parse_domains(domains)
    missing = [d for d in chosen if d not in layout.domains]
    if missing:
        raise ConfigError(f"no corpus or tasks for {', '.join(missing)} under {data}")
    retrievers = _split(retriever)
    sources: list = _split(queries)
    reporter = RichReporter()
    groups = [g.split("+") for g in _split(fuse)]
    from ..strategies import STRATEGIES

    fused_strategies = [m for g in groups for m in g if m in STRATEGIES]
    strategy_sources: dict = {}
    if strategy or fused_strategies:
        from ..queries.strategy import StrategySource
        from ..strategies import make_strategy
        from ..strategies.registry import NEEDS_LLM

        names = list(dict.fromkeys(_split(strategy) + fused_strategies))
        model = _llm(llm, llm_url, no_llm_cache) if any(n in NEEDS_LLM for n in names) else None
        strategy_sources = {n: StrategySource(make_strategy(n, model), workers if llm != "local" else 1, reporter) for n in names}
        sources += [strategy_sources[n] for n in _split(strategy)]
    fused_groups = [[strategy_sources.get(m, m) for m in g] for g in groups]
    if not sources and not fused_groups:
        raise ConfigError("nothing to evaluate: give --queries and/or --strategy")
    _check_backend(backend)
    indexes = BenchmarkIndexes(
        layout, index_dir, embedding_model, dense=backend == "milvus" or any(r != "bm25" for r in retrievers), rebuild=rebuild, reporter=reporter
    )
    if backend == "milvus":
        from ..eval.runner import MilvusIndexes

        indexes = MilvusIndexes(indexes, milvus_uri, _milvus_token(), reporter)  # type: ignore[assignment]
    if alpha is not None and not 0.0 <= alpha <= 1.0:
        raise ConfigError(f"--alpha must be between 0 and 1, got {alpha}")
    generation = None
    if tasks is not None:
        from ..data.generation_tasks import load_generation_tasks

        generation = load_generation_tasks(tasks)
    results = run_grid(indexes, chosen, retrievers, sources, k, {"fusion": fusion, "alpha": alpha}, reporter, generation, fused_groups)
    baseline = baseline or results[0].name
    summary = write_outputs(results, out, baseline)
    print_results_table(results, baseline)
    console.print(f"\nwrote {summary} and one folder per run under {out}")


def print_results_table(results, baseline: str | None = None) -> None:  # type: ignore[no-untyped-def]
    """nDCG@10 per domain, ALL-3 and ALL for each run, with R@5 and the paired p-value vs the baseline."""
    from ..eval.experiment import significance

    domains = list(dict.fromkeys(d for r in results for d in r.domains))
    tests = {t["run"]: t for t in significance(results, baseline)} if baseline else {}
    table = Table(title="nDCG@10 (official MT-RAG scoring)", show_lines=False)
    table.add_column("run", no_wrap=True)
    for d in domains:
        table.add_column(d, justify="right")
    for name in ("ALL-3", "ALL"):
        table.add_column(name, justify="right")
    table.add_column("ALL R@5", justify="right")
    if tests:
        table.add_column(f"p vs {baseline}", justify="right")
    for r in results:
        cells = [f"{r.domains[d].means['nDCG@10']:.4f}" if d in r.domains else "-" for d in domains]
        cells.append(f"{r.all3.means['nDCG@10']:.4f}" if r.all3 else "-")
        cells.append(f"{r.all.means['nDCG@10']:.4f}" if r.all and r.all.means else "-")
        cells.append(f"{r.all.means['Recall@5']:.4f}" if r.all and r.all.means else "-")
        if tests:
            cells.append(f"{tests[r.name]['p_randomization']:.3g}" if r.name in tests else "(baseline)")
        table.add_row(r.name, *cells)
    console.print(table)


@app.command()
def rewrite(
    question: Annotated[str, typer.Argument(help="The user's question.")],
    history: Annotated[Optional[Path], typer.Option("--history", help="JSON file: a list of {speaker|role, text|content} messages before the question.")] = None,
    strategy: Annotated[str, typer.Option("--strategy", "-s", help="Strategy name.")] = "progressive",
    llm: LLMOpt = "local",
    llm_url: LLMUrlOpt = None,
    no_llm_cache: NoCacheOpt = False,
    trace: Annotated[bool, typer.Option("--trace", help="Print the full trace as JSON.")] = False,
) -> None:
    """Turn one conversational question into a retrieval query and show how the strategy decided."""
    import json

    from ..data.messages import read_history
    from ..strategies import make_strategy
    from ..strategies.registry import NEEDS_LLM
    from ..types import Task

    if len(question) > MAX_QUERY_CHARS:
        raise ConfigError(f"the question is {len(question):,} characters; the limit is {MAX_QUERY_CHARS:,}")
    messages = read_history(history) if history else ()
    model = _llm(llm, llm_url, no_llm_cache) if strategy in NEEDS_LLM else None
    task = Task("cli", "cli", 1 + sum(m.speaker == "user" for m in messages), "", question, tuple(messages))
    result = make_strategy(strategy, model).rewrite(task)
    t = result.trace
    console.print(f"[bold]query:[/bold] {escape(result.query)}")
    console.print(
        f"[dim]strategy {t.strategy}, stage {t.stage}, {len(t.calls)} LLM call(s), {t.prompt_tokens} prompt tokens, "
        f"{t.effective_latency_s:.2f} s{', no-op' if t.noop else ''}[/dim]"
    )
    for fb in t.fallbacks:
        console.print(f"[yellow]fallback[/yellow] stage {fb.stage}: {fb.reason} {escape(fb.rejected[:120])}")
    if trace:
        console.print_json(json.dumps(t.to_dict(), ensure_ascii=False))


PipelineCollectionsOpt = Annotated[str, typer.Option("--collections", "-c", help="Comma-separated collection names.")]


def _pipeline(collections: str, store: Optional[Path], retriever: str, strategy: str, merge: str, multi_query: bool,
              reformulate: int, llm: str, llm_url: Optional[str], no_llm_cache: bool):  # type: ignore[no-untyped-def]
    from ..pipeline import build_pipeline

    return build_pipeline(_split(collections), store, retriever, strategy, _llm(llm, llm_url, no_llm_cache), merge, multi_query, reformulate)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The user's question.")],
    collections: PipelineCollectionsOpt,
    history: Annotated[Optional[Path], typer.Option("--history", help="JSON list of earlier messages.")] = None,
    store: StoreOpt = None,
    retriever: Annotated[str, typer.Option("--retriever", "-r", help="auto (hybrid for one collection, dense with raw-score merge for several), bm25, dense or hybrid.")] = "auto",
    strategy: Annotated[str, typer.Option("--strategy", "-s", help="Query strategy.")] = "progressive",
    merge: Annotated[str, typer.Option("--merge", help="rrf, combsum, combmnz or enhanced.")] = "enhanced",
    multi_query: Annotated[bool, typer.Option("--multi-query", help="Also search with the summary query and fuse it with the rewrite (RRF).")] = False,
    reformulate: Annotated[int, typer.Option("--reformulate", help="Extra LLM reformulations for multi-query fusion.")] = 0,
    llm: LLMOpt = "local",
    llm_url: LLMUrlOpt = None,
    no_llm_cache: NoCacheOpt = False,
    trace: Annotated[bool, typer.Option("--trace", help="Also print the decisions; --json for the full trace.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the answer, citations and full trace as JSON.")] = False,
) -> None:
    """Answer one question (optionally after a conversation) from one or more collections, with citations."""
    import json

    from ..data.messages import read_history
    from ..types import Message
    from .chat import print_answer, print_decisions

    messages = [*(read_history(history) if history else ()), Message("user", question)]
    pipeline = _pipeline(collections, store, retriever, strategy, merge, multi_query, reformulate, llm, llm_url, no_llm_cache)
    result = pipeline.answer(messages)
    if as_json:
        payload = {"answer": result.text, "declined": result.declined, "citations": [c._asdict() for c in result.citations], "trace": result.trace}
        console.print_json(json.dumps(payload, ensure_ascii=False, default=str))
        return
    print_answer(result)
    if trace:
        print_decisions(result)


@app.command()
def chat(
    collections: PipelineCollectionsOpt,
    store: StoreOpt = None,
    retriever: Annotated[str, typer.Option("--retriever", "-r", help="auto (hybrid for one collection, dense with raw-score merge for several), bm25, dense or hybrid.")] = "auto",
    strategy: Annotated[str, typer.Option("--strategy", "-s", help="Query strategy.")] = "progressive",
    merge: Annotated[str, typer.Option("--merge", help="rrf, combsum, combmnz or enhanced.")] = "enhanced",
    multi_query: Annotated[bool, typer.Option("--multi-query", help="Multi-query fusion.")] = False,
    llm: LLMOpt = "local",
    llm_url: LLMUrlOpt = None,
    no_llm_cache: NoCacheOpt = False,
) -> None:
    """Chat in the terminal over chosen collections; answers show citations, /trace shows the decisions."""
    from .chat import chat_loop

    chat_loop(_pipeline(collections, store, retriever, strategy, merge, multi_query, 0, llm, llm_url, no_llm_cache))


@app.command("run-incremental")
def run_incremental_cmd(
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder.")],
    domains: Annotated[str, typer.Option("--domains", help="Comma-separated domains, or 'all'.")] = "all",
    strategy: Annotated[str, typer.Option("--strategy", "-s", help="Query strategy.")] = "progressive",
    retriever: Annotated[str, typer.Option("--retriever", "-r", help="bm25, dense or hybrid.")] = "hybrid",
    out: Annotated[Path, typer.Option("--out", help="Output folder (datasets/, intermediate/, summary).")] = Path("runs/incremental"),
    conversations: Annotated[Optional[int], typer.Option("--conversations", help="Only the first N conversations per domain.")] = None,
    k: Annotated[int, typer.Option("-k", help="Passages retrieved per turn.")] = 10,
    llm: LLMOpt = "local",
    llm_url: LLMUrlOpt = None,
    no_llm_cache: NoCacheOpt = False,
) -> None:
    """Turn by turn with convrag's own answers as history; writes the seed's dataset and intermediate JSONL; resumable."""
    from ..data.domains import parse_domains
    from ..data.layout import MTRAGData
    from ..eval.experiment import write_outputs
    from ..eval.incremental import run_incremental
    from ..eval.runner import BenchmarkIndexes
    from ..generate import AnswerGenerator
    from ..strategies import make_strategy

    layout = MTRAGData.discover(data)
    chosen = parse_domains(domains)
    reporter = RichReporter()
    indexes = BenchmarkIndexes(layout, dense=retriever != "bm25", reporter=reporter)
    model = _llm(llm, llm_url, no_llm_cache)
    result = run_incremental(layout, chosen, {d: indexes.retriever(d, retriever) for d in chosen},
                             make_strategy(strategy, model, indexes.embedder), AnswerGenerator(model), out, k,
                             max_conversations=conversations, reporter=reporter)
    summary = write_outputs([result], out / "eval")
    print_results_table([result])
    console.print(f"\nwrote {out / 'datasets'}, {out / 'intermediate'} and {summary}")


@app.command()
def demo(
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Rebuild the sample's collections.")] = False,
) -> None:
    """Index the bundled MT-RAG sample, compare retrievers and query sources, and show one conversation."""
    from .demo import run_demo

    run_demo(rebuild=rebuild)


@bench_app.command("retrieval")
def bench_retrieval(
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder.")] = Path("../shared/mtrag"),
    out: Annotated[Path, typer.Option("--out", help="Where to write the benchmark's results.")] = Path("runs/bench-retrieval"),
    synthetic: Annotated[int, typer.Option(help="Passages in the synthetic latency corpus.")] = 200_000,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Rebuild the collections to measure build time.")] = False,
) -> None:
    """BM25/dense/hybrid x lastturn/rewrite/questions on all of MT-RAG, plus speed and memory figures."""
    from ..bench.retrieval import run_retrieval_benchmark

    run_retrieval_benchmark(data, out, synthetic, rebuild)


@bench_app.command("milvus")
def bench_milvus(
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder.")] = Path("../shared/mtrag"),
    out: Annotated[Path, typer.Option("--out", help="Where to write the benchmark's results.")] = Path("runs/bench-milvus"),
) -> None:
    """The Milvus backend against the embedded one: metrics, top-10 overlap, ingest, latency, memory."""
    from ..bench.milvus import run_milvus_benchmark

    run_milvus_benchmark(data, out)


@bench_app.command("merge")
def bench_merge(
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder.")] = Path("../shared/mtrag"),
    out: Annotated[Path, typer.Option("--out", help="Where to write the benchmark's results.")] = Path("runs/bench-merge"),
) -> None:
    """Merge latency (10 and 50 collections x 100 results) and the four domains merged as four collections."""
    from ..bench.merge import run_merge_benchmark

    run_merge_benchmark(data, out)


@bench_app.command("answers")
def bench_answers(
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder.")] = Path("../shared/mtrag"),
    out: Annotated[Path, typer.Option("--out", help="Where to write the benchmark's results.")] = Path("runs/bench-answers"),
    per_label: Annotated[int, typer.Option("--per-label", help="Turns sampled per answerability label.")] = 40,
    llm: LLMOpt = "local",
) -> None:
    """Cited answers on sampled MT-RAG turns: citing share, decline share on unanswerable turns, latency."""
    from ..bench.answers import run_answer_benchmark

    run_answer_benchmark(data, out, per_label, llm_spec=llm)


@bench_app.command("service")
def bench_service(
    out: Annotated[Path, typer.Option("--out", help="Where to write the results and the server's data.")] = Path("runs/bench-service"),
    documents: Annotated[int, typer.Option("--documents", help="Documents uploaded and indexed through the API.")] = 1000,
    conversations: Annotated[int, typer.Option("--conversations", help="Concurrent conversations.")] = 20,
    turns: Annotated[int, typer.Option("--turns", help="Turns per conversation.")] = 10,
) -> None:
    """A real `convrag serve` under load: indexing uploads, concurrent conversations, a slow generation."""
    from ..bench.service import run_service_benchmark

    report = run_service_benchmark(out, documents, conversations, turns)
    console.print_json(data=report)


@bench_app.command("strategies")
def bench_strategies(
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder.")] = Path("../shared/mtrag"),
    out: Annotated[Path, typer.Option("--out", help="Where to write the benchmark's results.")] = Path("runs/bench-strategies"),
    strategies: Annotated[str, typer.Option("--strategies", help="Comma-separated strategies.")] = "last_turn,full_rewrite,targeted,mmr_cluster,summary,progressive",
    retriever: Annotated[str, typer.Option("--retriever", "-r", help="Comma-separated retrievers.")] = "bm25,hybrid",
    llm: LLMOpt = "local",
) -> None:
    """All strategies x BM25 and hybrid on all of MT-RAG with the local LLM (cached; resumable), with targets."""
    from ..bench.strategies import run_strategy_benchmark
    from ..strategies import STRATEGIES

    names = _split(strategies)
    unknown = [n for n in names if n not in STRATEGIES]
    if unknown:  # fail fast on a typo, before hours of model calls
        raise ConfigError(f"unknown strategy {unknown[0]!r}; expected one of {', '.join(STRATEGIES)}")
    run_strategy_benchmark(data, out, names, _split(retriever), llm)


@bench_app.command("strategy-latency")
def bench_strategy_latency(
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder.")] = Path("../shared/mtrag"),
    out: Annotated[Path, typer.Option("--out", help="Where to write the benchmark's results.")] = Path("runs/bench-strategy-latency"),
    strategies: Annotated[str, typer.Option("--strategies", help="Comma-separated strategies, timed with prefix reuse.")] = "full_rewrite,targeted,mmr_cluster,summary,progressive",
    without_reuse: Annotated[str, typer.Option("--without-reuse", help="Strategies also timed with the local backend's prefix reuse off ('' for none).")] = "full_rewrite,mmr_cluster,progressive",
    per_domain: Annotated[int, typer.Option("--per-domain", min=1, help="Conversations per domain (the first by id).")] = 2,
    llm: LLMOpt = "local",
) -> None:
    """Live (uncached) latency per turn of each strategy on an idle machine, with the latency targets."""
    from ..bench.strategy_latency import run_strategy_latency_benchmark
    from ..strategies import STRATEGIES

    names, plain = _split(strategies), _split(without_reuse)
    unknown = [n for n in names + plain if n not in STRATEGIES]
    if unknown:
        raise ConfigError(f"unknown strategy {unknown[0]!r}; expected one of {', '.join(STRATEGIES)}")
    run_strategy_latency_benchmark(data, out, names, per_domain, plain, llm)


@app.command()
def serve(
    config: Annotated[Optional[Path], typer.Option("--config", help="YAML settings file (see docs/service.md).")] = None,
    host: Annotated[Optional[str], typer.Option("--host", help="Address to bind (default 127.0.0.1; others need CONVRAG_API_KEY).")] = None,
    port: Annotated[Optional[int], typer.Option("--port", help="Port (default 8000).")] = None,
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", help="Collections, uploads and the database (default $CONVRAG_HOME/service).")] = None,
    llm: Annotated[Optional[str], typer.Option("--llm", help="LLM backend (default local).")] = None,
    llm_url: LLMUrlOpt = None,
) -> None:
    """Start the chat service: OpenAI-compatible API, collections, conversations and the web chat."""
    import uvicorn

    from ..service import ServiceSettings, create_app

    settings = ServiceSettings.load(config, host=host, port=port, data_dir=data_dir, llm=llm, llm_url=llm_url)
    application = create_app(settings)
    console.print(f"convrag serving on http://{settings.host}:{settings.port} (data in {settings.data_dir})")
    uvicorn.run(application, host=settings.host, port=settings.port, log_level="info")


def main() -> None:
    """Entry point: run the app, turning user errors into one line and exit status 1."""
    try:
        app()
    except ConvragError as exc:
        err_console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(1)
    except (FileNotFoundError, PermissionError, IsADirectoryError) as exc:
        err_console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(1)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
