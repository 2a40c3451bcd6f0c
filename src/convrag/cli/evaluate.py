"""``convrag eval``, ``compare``, ``score``, ``score-answers``, ``rewrite``, ``run-incremental`` and ``trace-schema``: measuring strategies and retrievers on MT-RAG."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from ..console import RichReporter, console
from ..errors import ConfigError
from ..limits import check_question
from .app import (
    AnswersOpt,
    BackendOpt,
    DeclineBelowOpt,
    LLMOpt,
    LLMUrlOpt,
    MilvusUriOpt,
    ModelOpt,
    NoCacheOpt,
    SplitOpt,
    WorkersOpt,
    app,
    check_backend,
    make_llm_from,
    milvus_token,
    split_list,
)
from .output import print_results_table


@app.command("eval", rich_help_panel="Evaluation on MT-RAG")
def evaluate(
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder (the shared folder or the official repository layout).")],
    domains: Annotated[str, typer.Option("--domains", help="Comma-separated domains, or 'all'.")] = "all",
    retriever: Annotated[str, typer.Option("--retriever", "-r", help="Comma-separated: bm25, dense, hybrid.")] = "bm25,dense,hybrid",
    queries: Annotated[str, typer.Option("--queries", "-q", help="Comma-separated query sources (lastturn, rewrite, questions) or .jsonl query files; '' for none.")] = "lastturn,rewrite",
    strategy: Annotated[str, typer.Option("--strategy", "-s", help="Comma-separated conversational strategies: last_turn, full_rewrite, targeted, mmr_cluster, summary, progressive, or your own as package.module:Class or file.py:Class.")] = "",
    fuse: Annotated[str, typer.Option("--fuse", help="Multi-query fusion runs: comma-separated groups of '+'-joined sources or strategies, e.g. lastturn+progressive.")] = "",
    tasks: Annotated[Optional[Path], typer.Option("--tasks", help="Generation-task JSONL to evaluate instead of the benchmark's retrieval tasks.")] = None,
    llm: LLMOpt = "local",
    llm_url: LLMUrlOpt = None,
    workers: WorkersOpt = 1,
    no_llm_cache: NoCacheOpt = False,
    out: Annotated[Path, typer.Option("--out", help="Output folder for results, run files and tables.")] = Path("runs/eval"),
    baseline: Annotated[Optional[str], typer.Option(help="Run to test the others against, e.g. bm25+lastturn (default: the first run).")] = None,
    k: Annotated[int, typer.Option("-k", help="Passages retrieved per task.")] = 10,
    fusion: Annotated[Optional[str], typer.Option(help="Hybrid fusion: rrf (constant 60), combsum or combmnz (min-max normalized scores) (default: combsum).")] = None,
    alpha: Annotated[Optional[float], typer.Option(help="Hybrid: weight of dense vs BM25 in [0, 1] (default: 0.7).")] = None,
    windows: Annotated[Optional[str], typer.Option(help="Dense scoring of long passages: first, max or mix (their mean) (default: mix).")] = None,
    prf: Annotated[Optional[str], typer.Option(help="Pseudo-relevance feedback: none, rm3 (BM25), rocchio (dense) or both (default: none).")] = None,
    index_dir: Annotated[Optional[Path], typer.Option(help="Where the per-domain collections live (default: under $CONVRAG_HOME).")] = None,
    embedding_model: ModelOpt = "all-MiniLM-L6-v2",
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Rebuild the per-domain collections.")] = False,
    backend: BackendOpt = "embedded",
    milvus_uri: MilvusUriOpt = "./data/convrag.db",
    split: SplitOpt = "all",
) -> None:
    """Evaluate retrievers x query sources (and conversational strategies) on MT-RAG; write official results,
    run files, tables and, for strategies, BEIR queries, every trace and the decision statistics."""
    from ..data.domains import parse_domains
    from ..data.layout import MTRAGData
    from ..eval.experiment import run_grid, write_outputs
    from ..eval.runner import BenchmarkIndexes

    layout = MTRAGData.discover(data, split)
    chosen = parse_domains(domains)
    missing = [d for d in chosen if d not in layout.domains]
    if missing:
        raise ConfigError(f"no corpus or tasks for {', '.join(missing)} under {data}")
    retrievers = split_list(retriever)
    sources: list = split_list(queries)
    reporter = RichReporter()
    groups = [g.split("+") for g in split_list(fuse)]
    from ..strategies.registry import is_strategy

    fused_strategies = [m for g in groups for m in g if is_strategy(m)]
    strategy_sources: dict = {}
    if strategy or fused_strategies:
        from ..queries.strategy import StrategySource
        from ..strategies import make_strategy
        from ..strategies.registry import NEEDS_LLM, check_strategy

        names = [check_strategy(n) for n in dict.fromkeys(split_list(strategy) + fused_strategies)]
        model = make_llm_from(llm, llm_url, no_llm_cache) if any(n in NEEDS_LLM for n in names) else None
        strategy_sources = {n: StrategySource(make_strategy(n, model), workers if llm != "local" else 1, reporter) for n in names}
        sources += [strategy_sources[n] for n in split_list(strategy)]
    fused_groups = [[strategy_sources.get(m, m) for m in g] for g in groups]
    if not sources and not fused_groups:
        raise ConfigError("nothing to evaluate: give --queries and/or --strategy")
    check_backend(backend)
    indexes = BenchmarkIndexes(
        layout, index_dir, embedding_model, dense=backend == "milvus" or any(r != "bm25" for r in retrievers), rebuild=rebuild, reporter=reporter
    )
    if backend == "milvus":
        from ..eval.runner import MilvusIndexes

        indexes = MilvusIndexes(indexes, milvus_uri, milvus_token(), reporter)  # type: ignore[assignment]
    if alpha is not None and not 0.0 <= alpha <= 1.0:
        raise ConfigError(f"--alpha must be between 0 and 1, got {alpha}")
    generation = None
    if tasks is not None:
        from ..data.generation_tasks import load_generation_tasks

        generation = load_generation_tasks(tasks)
    options = {k: v for k, v in {"fusion": fusion, "alpha": alpha, "windows": windows, "prf": prf}.items() if v is not None}
    results = run_grid(indexes, chosen, retrievers, sources, k, options, reporter, generation, fused_groups, baseline)
    baseline = baseline or results[0].name
    summary = write_outputs(results, out, baseline)
    print_results_table(results, baseline)
    console.out(f"\nwrote {summary} and one folder per run under {out}")


@app.command("compare", rich_help_panel="Evaluation on MT-RAG")
def compare(
    baseline: Annotated[Path, typer.Argument(help="A `convrag eval --out` folder: the reference configuration.")],
    other: Annotated[Path, typer.Argument(help="Another such folder: its runs are tested against the same-named runs of the first.")],
    metric: Annotated[str, typer.Option(help="Per-query metric to pair.")] = "nDCG@10",
    show: Annotated[int, typer.Option("--show", min=0, help="Also list, for each run, the N tasks it gained most on and the N it lost most on, with the queries each folder searched.")] = 0,
) -> None:
    """Pair the same-named runs of two eval folders task by task (e.g. two embedding models): means,
    delta, tasks better, the same and worse, paired t-test and randomization p-values."""
    from rich.table import Table

    from ..eval.compare import compare_folders

    table = Table(title=f"{metric}: {escape(str(other))} against {escape(str(baseline))}")
    comparisons = compare_folders(baseline, other, metric)
    unpaired = any(c.only_baseline or c.only_other for c in comparisons)
    columns = ("run", "tasks", *(("left out (baseline / other)",) if unpaired else ()), "baseline", "other", "delta",
               "better / same / worse", "p (t-test)", "p (randomization)")
    for column in columns:
        table.add_column(column, justify="left" if column == "run" else "right")
    for comparison in comparisons:
        test = comparison.test
        left_out = (f"{comparison.only_baseline} / {comparison.only_other}",) if unpaired else ()
        table.add_row(escape(comparison.name), str(test.n), *left_out, f"{test.mean_baseline:.4f}", f"{test.mean_run:.4f}",
                      f"{test.delta:+.4f}", " / ".join(map(str, comparison.counts())), f"{test.p_ttest:.3g}", f"{test.p_randomization:.3g}")
    if unpaired:
        table.caption = "tasks scored in one folder only are left out: the means are over the tasks both scored"
    console.print(table)
    if show:
        for comparison in comparisons:
            for title, changes in (("gained most on", comparison.gains()[:show]), ("lost most on", comparison.losses()[:show])):
                if not changes:
                    continue
                asked = {c.task: [c.baseline_query, c.other_query] for c in changes}
                alike = all(a == b for a, b in asked.values())  # one column where both searched the same words
                listing = Table(title=f"{comparison.name}: the tasks {escape(str(other))} {title} ({metric})", show_lines=True)
                listing.add_column("task", overflow="fold")  # whole, to be looked up
                for column in ("baseline", "other", "delta"):
                    listing.add_column(column, justify="right")
                for column in (("query",) if alike else ("baseline's query", "other's query")):
                    listing.add_column(column)
                for c in changes:
                    listing.add_row(escape(c.task), f"{c.baseline:.4f}", f"{c.other:.4f}", f"{c.delta:+.4f}",
                                    *map(escape, asked[c.task][:1] if alike else asked[c.task]))
                console.print(listing)


@app.command("score", rich_help_panel="Evaluation on MT-RAG")
def score(
    runs: Annotated[list[str], typer.Argument(help="Run files to score: TREC runs (qid Q0 docid rank score tag), the benchmark's result JSONL, or a JSON object {task: {passage: score}} as ranx saves one; plain, .gz or .zip; NAME=PATH names a run (default: the file's name, or the run a `convrag eval` folder's run.trec or results.jsonl belongs to).")],
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder (the shared folder or the official repository layout).")],
    domains: Annotated[str, typer.Option("--domains", help="Comma-separated domains, or 'all'.")] = "all",
    split: SplitOpt = "all",
    complete: Annotated[bool, typer.Option("--complete", help="A task a run has no results for counts as retrieving nothing (trec_eval -c), instead of being left out as the official scorer leaves it.")] = False,
    out: Annotated[Path, typer.Option("--out", help="Output folder: a `convrag eval` folder's files for each run, and summary.md.")] = Path("runs/score"),
    baseline: Annotated[Optional[str], typer.Option(help="Run to test the others against (default: the first).")] = None,
) -> None:
    """Score other systems' run files as `convrag eval` scores its own runs: official MT-RAG scoring,
    the same split and breakdowns, paired tests against a baseline (give a `convrag eval` run.trec to
    test against convrag's)."""
    from ..data.domains import parse_domains
    from ..data.layout import MTRAGData
    from ..eval.experiment import write_outputs
    from ..eval.run_files import coverage, read_run, score_external

    layout = MTRAGData.discover(data, split)
    chosen = parse_domains(domains)
    missing_domains = [d for d in chosen if d not in layout.domains]
    if missing_domains:
        raise ConfigError(f"no corpus or tasks for {', '.join(missing_domains)} under {data}")
    read = [read_run(path, name) for name, path in _named_files(runs, baseline, "runs")]
    tasks = {t.task_id: t for d in chosen for t in layout.tasks(d)}
    whole = layout.with_split("all")  # once: each copy reads conversations.json again
    every = [t.task_id for d in whole.domains for t in whole.tasks(d)]
    qrels = {d: layout.qrels(d) for d in chosen}
    results = []
    for run in read:
        results.append(score_external(run, tasks, qrels, complete))
        cover = coverage(run, tasks, every)
        notes = []
        if cover.missing:
            notes.append(f"{len(cover.missing)} of the {len(tasks)} tasks have no results "
                         + ("and count as retrieving nothing" if complete else "and are left out, as the official scorer leaves them (--complete counts them)"))
        if cover.other_split:
            notes.append(f"{cover.other_split} of its tasks are in another split or domain and are not scored")
        if cover.unknown:
            notes.append(f"{len(cover.unknown)} of its task ids are no MT-RAG task (e.g. {cover.unknown[0]!r})")
        console.out(f"{run.name}: {cover.scored} task(s) scored from {run.path} ({run.format})" + "".join(f"; {n}" for n in notes))
    baseline = baseline or results[0].name
    summary = write_outputs(results, out, baseline)
    print_results_table(results, baseline if len(results) > 1 else None)
    console.out(f"\nwrote {summary} and one folder per run under {out}")


def _named_files(specs: list[str], baseline: str | None, what: str) -> list[tuple[str, Path]]:
    """Each ``NAME=PATH`` or ``PATH`` (a path that exists is a path, whatever it holds) with its name,
    the file's own where none is given; the names and ``baseline`` checked before any file is read
    (a run of a million lines takes seconds to read)."""
    from ..eval.run_files import default_name

    named = []
    for spec in specs:
        name, sep, rest = spec.partition("=")
        given = bool(sep) and not Path(spec).exists()
        path = Path(rest) if given else Path(spec)
        named.append((name if given else default_name(path), path))
    names = [name for name, _ in named]
    duplicate = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if duplicate is not None:
        raise ConfigError(f"two {what} are named {duplicate!r}: name them as NAME=PATH")
    if baseline is not None and baseline not in names:
        raise ConfigError(f"--baseline {baseline!r} is not one of the {what}: {', '.join(names)}")
    return named


@app.command("score-answers", rich_help_panel="Evaluation on MT-RAG")
def score_answers_cmd(
    files: Annotated[list[str], typer.Argument(help="JSONL answers: MT-RAG's generation results (\"predictions\": [{\"text\"}]), or lines with \"task_id\" and \"answer\" (what eval-answers writes) or \"text\"; a line's \"contexts\" (the passages answered from, [n] the n-th) or eval-answers' \"citation_checks\" get its citations checked; NAME=PATH names a system (default: the file's name).")],
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder (the shared folder or the official repository layout).")],
    split: SplitOpt = "all",
    decline: Annotated[Optional[str], typer.Option("--decline", help="A regular expression that finds a system's own way of declining, beside the phrasings convrag knows.")] = None,
    out: Annotated[Path, typer.Option("--out", help="Output folder: each system's scored rows, summary.md and summary.json.")] = Path("runs/score-answers"),
    baseline: Annotated[Optional[str], typer.Option(help="System to test the others against (default: the first).")] = None,
) -> None:
    """Score other systems' answers on MT-RAG turns as `eval-answers` scores convrag's: declines on
    unanswerable turns, false declines, ROUGE-L and token recall against the reference answers, and
    citations (supported by their passage, judged relevant) where a line lists the passages it
    answered from, by domain and turn, with paired tests against a baseline."""
    import re

    from ..data.layout import MTRAGData
    from ..eval.answer_files import answers_report, read_answers, score_answers
    from ..eval.answers import LABELS, answer_turns
    from ..index.atomic import write_json, write_jsonl, write_text

    pattern = None
    if decline is not None:
        try:
            pattern = re.compile(decline, re.IGNORECASE)
        except re.error as exc:
            raise ConfigError(f"--decline {decline!r} is not a regular expression ({exc})") from None
    named = _named_files(files, baseline, "systems")
    turns = answer_turns(MTRAGData.discover(data, split), {label: None for label in LABELS})
    scored = {}
    for name, path in named:
        answers = read_answers(path, name)
        scored[name] = score_answers(answers, turns, pattern)
        left = len(turns) - len(scored[name])
        outside = len(answers.answers) - len(scored[name])
        console.out(f"{name}: {len(scored[name])} of the {len(turns)} labelled turns answered in {path}"
                    + (f"; {left} not answered there, left out" if left else "")
                    + (f"; {outside} of its answers are for no labelled turn of this split, not scored" if outside else ""))
        write_jsonl(out / f"answers-{name.replace('+', '_')}.jsonl", scored[name])
    markdown, summary = answers_report(scored, baseline or named[0][0], split)
    write_json(out / "summary.json", summary)
    write_text(out / "summary.md", markdown)
    console.out(markdown, highlight=False)
    console.out(f"wrote {out / 'summary.md'}")


@app.command(rich_help_panel="Evaluation on MT-RAG")
def rewrite(
    question: Annotated[str, typer.Argument(help="The user's question.")],
    history: Annotated[Optional[Path], typer.Option("--history", help="JSON file: a list of {speaker|role, text|content} messages before the question.")] = None,
    strategy: Annotated[str, typer.Option("--strategy", "-s", help="Strategy name, or your own as package.module:Class or file.py:Class.")] = "progressive",
    llm: LLMOpt = "local",
    llm_url: LLMUrlOpt = None,
    no_llm_cache: NoCacheOpt = False,
    trace: Annotated[bool, typer.Option("--trace", help="Print the full trace as JSON.")] = False,
) -> None:
    """Turn one conversational question into a retrieval query and show how the strategy decided."""
    import json

    from ..data.messages import read_history
    from ..strategies import make_strategy
    from ..strategies.registry import NEEDS_LLM, check_strategy
    from ..types import Task

    check_question(question)
    messages = read_history(history) if history else ()
    model = make_llm_from(llm, llm_url, no_llm_cache) if check_strategy(strategy) in NEEDS_LLM else None
    task = Task("cli", "cli", 1 + sum(m.speaker == "user" for m in messages), "", question, tuple(messages))
    result = make_strategy(strategy, model).rewrite(task)
    t = result.trace
    console.print(f"[bold]query:[/bold] {escape(result.query)}")
    console.print(
        f"[dim]strategy {t.strategy}, stage {t.stage}, {len(t.calls)} LLM call(s), {t.prompt_tokens} prompt tokens, "
        f"{t.effective_latency_s:.2f} s{', no-op' if t.noop else ''}[/dim]"
    )
    for fb in t.fallbacks:
        console.print(f"[yellow]fallback[/yellow] stage {fb.stage}: {escape(fb.reason)} {escape(fb.rejected[:120])}")
    if trace:
        console.print_json(json.dumps(t.to_dict(), ensure_ascii=False))


@app.command("run-incremental", rich_help_panel="Evaluation on MT-RAG")
def run_incremental_cmd(
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder.")],
    domains: Annotated[str, typer.Option("--domains", help="Comma-separated domains, or 'all'.")] = "all",
    strategy: Annotated[str, typer.Option("--strategy", "-s", help="Query strategy.")] = "progressive",
    retriever: Annotated[str, typer.Option("--retriever", "-r", help="bm25, dense or hybrid.")] = "hybrid",
    out: Annotated[Path, typer.Option("--out", help="Output folder (datasets/, intermediate/, summary).")] = Path("runs/incremental"),
    conversations: Annotated[Optional[int], typer.Option("--conversations", min=1, help="Only the first N conversations per domain.")] = None,
    k: Annotated[int, typer.Option("-k", help="Passages retrieved per turn.")] = 10,
    llm: LLMOpt = "local",
    llm_url: LLMUrlOpt = None,
    no_llm_cache: NoCacheOpt = False,
    split: SplitOpt = "all",
) -> None:
    """Turn by turn with convrag's own answers as history; writes the seed's dataset and intermediate JSONL; resumable."""
    from ..data.domains import parse_domains
    from ..data.layout import MTRAGData
    from ..eval.experiment import write_outputs
    from ..eval.incremental import run_incremental
    from ..eval.runner import BenchmarkIndexes
    from ..pipeline import PipelineSpec, build_pipeline

    layout = MTRAGData.discover(data, split)
    chosen = parse_domains(domains)
    reporter = RichReporter()
    indexes = BenchmarkIndexes(layout, dense=retriever != "bm25", reporter=reporter)
    model = make_llm_from(llm, llm_url, no_llm_cache)
    pipelines = {d: build_pipeline(PipelineSpec((d,), strategy=strategy, retriever=retriever, k=k), llm=model,
                                   opened={d: indexes.collection(d)}, embedder=indexes.embedder) for d in chosen}
    result = run_incremental(layout, chosen, pipelines, out, max_conversations=conversations, reporter=reporter)
    summary = write_outputs([result], out / "eval")
    print_results_table([result])
    console.out(f"\nwrote {out / 'datasets'}, {out / 'intermediate'} and {summary}")


@app.command("strategies", rich_help_panel="Evaluation on MT-RAG")
def list_strategies(
    own: Annotated[Optional[str], typer.Argument(help="Also load these (comma-separated package.module:Class or file.py:Class) to check them.")] = None,
) -> None:
    """List the strategies a name can pick: the six built in, those installed packages declare, and any given here."""
    from rich.table import Table

    from ..strategies.registry import NEEDS_LLM, check_strategy, make_strategy, offered_strategies

    for name in split_list(own or ""):  # one that cannot be used is said here, not hours into an eval
        if check_strategy(name) not in NEEDS_LLM:
            make_strategy(name)  # built too, where that needs no model: its shape and name are checked
    table = Table(box=None, header_style="bold")
    for column in ("strategy", "LLM", "what it does"):
        table.add_column(column, overflow="fold")
    for strategy in offered_strategies():
        table.add_row(escape(strategy.name) + ("" if strategy.built_in else " [dim](yours)[/dim]"),
                      "needed" if strategy.needs_llm else "-", escape(strategy.description))
    console.print(table)


@app.command("trace-schema", rich_help_panel="Evaluation on MT-RAG")
def trace_schema() -> None:
    """Print the JSON schema of a turn's trace (what `ask --json`, the service and the web page exchange)."""
    import json

    from ..pipeline import turn_trace_schema

    print(json.dumps(turn_trace_schema(), indent=2, sort_keys=True))


def answer_spec(domain: str, strategy: str, preset: str, answers: str, decline_below: Optional[float]):  # type: ignore[no-untyped-def]
    """The pipeline ``eval-answers`` answers ``domain``'s turns with: the floor ``--decline-below``
    sets is the gate's of the settings asked for (``answers``), not of the first prompt's it is
    compared with, which has no gate."""
    from ..pipeline import PipelineSpec

    return PipelineSpec((domain,), strategy=strategy, answer=preset, decline_below=decline_below if preset == answers else None)


@app.command("eval-answers", rich_help_panel="Evaluation on MT-RAG")
def eval_answers(
    data: Annotated[Path, typer.Option("--data", help="MT-RAG data folder.")] = Path("../shared/mtrag"),
    split: SplitOpt = "test",
    answerable: Annotated[int, typer.Option("--answerable", min=0, help="ANSWERABLE turns sampled (seeded).")] = 60,
    partial: Annotated[int, typer.Option("--partial", min=0, help="PARTIAL turns sampled (seeded).")] = 20,
    unanswerable: Annotated[int, typer.Option("--unanswerable", min=-1, help="UNANSWERABLE turns sampled (-1: all).")] = -1,
    answers: AnswersOpt = "default",
    decline_below: DeclineBelowOpt = None,
    compare: Annotated[bool, typer.Option("--compare/--no-compare", help="Also answer the same turns with the first prompt, for the overlap target.")] = True,
    strategy: Annotated[str, typer.Option("--strategy", "-s", help="Query strategy.")] = "progressive",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the turn sample.")] = 0,
    conversations: Annotated[int, typer.Option("--conversations", min=0, help="Replay whole conversations instead of sampling turns: every labelled turn of the first N conversations of each domain, in order, as a chat sends them (the prompt prefix is reused from turn to turn); the --answerable/--partial/--unanswerable counts are then ignored. Time it with --no-llm-cache.")] = 0,
    read_ahead: Annotated[bool, typer.Option("--read-ahead/--no-read-ahead", help="With --conversations: between two turns, read the next turn's prompt up to its passages, as the service does while the user reads an answer (the time is recorded apart, not in the latency).")] = True,
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = Path("runs/eval-answers"),
    llm: LLMOpt = "local",
    llm_url: LLMUrlOpt = None,
    no_llm_cache: NoCacheOpt = False,
) -> None:
    """Answers on MT-RAG turns: declines on unanswerable turns, false declines, ROUGE-L and token recall against
    the reference answers, citation correctness, time to first token and to the whole answer; with the targets."""
    import datetime as dt

    from ..bench.timing import machine_description
    from ..data.layout import MTRAGData
    from ..eval.answers import answer_turns, breakdowns, conversation_turns, report_markdown, run_answer_eval, summarize
    from ..eval.runner import BenchmarkIndexes
    from ..index.atomic import write_json, write_jsonl, write_text
    from ..pipeline import build_pipeline
    from ..pipeline.spec import check_decline_below

    check_decline_below(decline_below, answers)  # a floor the settings cannot take: said before anything loads
    layout = MTRAGData.discover(data, split)
    reporter = RichReporter()
    indexes = BenchmarkIndexes(layout, reporter=reporter)
    model = make_llm_from(llm, llm_url, no_llm_cache)
    if conversations > 0:
        turns = conversation_turns(layout, conversations)
    else:
        turns = answer_turns(layout, {"ANSWERABLE": answerable, "PARTIAL": partial, "UNANSWERABLE": None if unanswerable < 0 else unanswerable}, seed)

    def run(preset: str) -> list[dict]:
        pipelines = {d: build_pipeline(answer_spec(d, strategy, preset, answers, decline_below), llm=model,
                                       opened={d: indexes.collection(d)}, embedder=indexes.embedder) for d in layout.domains}
        rows = run_answer_eval(pipelines, turns, reporter, read_ahead=read_ahead and conversations > 0)
        write_jsonl(out / f"answers-{preset}.jsonl", rows)
        return rows

    rows = run(answers)
    baseline = summarize(run("first")) if compare and answers != "first" else None
    summary = summarize(rows)
    chosen = "sampled turns"
    if conversations > 0:
        chosen = f"{conversations} whole conversations per domain, replayed in order{', reading ahead' if read_ahead else ''}"
    build = ""
    if model.backend == "local":  # its latencies depend on how llama.cpp was built, not only on the CPU
        from ..llm.local import llama_build

        build = f" ({llama_build()})"
    floor = "" if decline_below is None else f" (decline below {decline_below})"
    header = (f"Answers on MT-RAG ({split} split, {chosen}), settings `{answers}`{floor}, strategy {strategy}, {model.backend}:{model.model}{build}; "
              f"machine: {machine_description()}; date {dt.date.today().isoformat()}.")
    parts = breakdowns(rows)
    markdown = report_markdown(summary, parts, header, baseline)
    write_json(out / "summary.json", {"summary": summary, "first_prompt": baseline, "breakdowns": parts, "decline_below": decline_below})
    write_text(out / "summary.md", markdown)
    console.out(markdown, highlight=False)
