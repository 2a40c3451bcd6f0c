"""The ``convrag`` Typer app, the options its command groups share, and the entry point.

The commands live by group in this package (``collections``, ``evaluate``, ``answers``,
``bench``, ``service``, ``demo``); :mod:`convrag.cli.main` imports them all. Every user error
(bad file, unknown collection, mismatched model) is printed as one line and the command exits
with status 1.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from ..console import err_console
from ..errors import ConfigError, ConvragError

app = typer.Typer(
    name="convrag",
    help="Conversational retrieval-augmented generation, measured on MT-RAG.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
bench_app = typer.Typer(help="Benchmarks whose results go into docs/benchmarks.md.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")

StoreOpt = Annotated[Optional[Path], typer.Option("--store", help="Folder of collections (default: $CONVRAG_HOME/collections).")]
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
WorkersOpt = Annotated[int, typer.Option("--workers", min=1, help="Concurrent LLM calls (remote backends; the local model runs one at a time).")]
NoCacheOpt = Annotated[bool, typer.Option("--no-llm-cache", help="Do not read or write the persistent LLM completion cache.")]
SplitOpt = Annotated[
    str,
    typer.Option("--split", help="MT-RAG conversations to use: dev (tune here), test (report here) or all; split by conversation."),
]


def make_llm_from(spec: str, url: str | None, no_cache: bool):  # type: ignore[no-untyped-def]
    """The LLM backend a command's --llm, --llm-url and --no-llm-cache options describe."""
    from ..llm import make_llm

    options = {"base_url": url} if spec.startswith("openai") else {}
    return make_llm(spec, cache=not no_cache, **options)


# The token is read from the environment only, so it never shows up in shell history or process lists.
BACKENDS = ("embedded", "milvus")


def milvus_token() -> str | None:
    return os.environ.get("CONVRAG_MILVUS_TOKEN") or None


def check_backend(backend: str, store: Path | None = None) -> None:
    """A known backend, and no ``--store`` (a folder of embedded collections) beside Milvus, where
    it would be ignored: a user naming both meant one of them."""
    if backend not in BACKENDS:
        raise ConfigError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    if backend == "milvus" and store is not None:
        raise ConfigError("--store names a folder of embedded collections; with --backend milvus, name the Milvus with --milvus-uri")


def milvus_from(backend: str, milvus_uri: str, store: Path | None):  # type: ignore[no-untyped-def]
    """The Milvus store that ``--backend milvus`` names, or None for the embedded backend. For the
    commands that read collections: a Milvus Lite file that is not there is an error, not made."""
    check_backend(backend, store)
    if backend != "milvus":
        return None
    from ..backends.milvus import MilvusStore

    return MilvusStore(milvus_uri, milvus_token(), create=False)


def split_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


PipelineCollectionsOpt = Annotated[str, typer.Option("--collections", "-c", help="Comma-separated collection names.")]
QueriesOpt = Annotated[str, typer.Option("--queries", help="Queries searched and fused: 'strategy' first, then any of summary, "
                                                          "question, reformulations (e.g. strategy,summary).")]
DepthOpt = Annotated[int, typer.Option("-k", help="Passages retrieved per collection and query.")]
PipelineRetrieverOpt = Annotated[str, typer.Option("--retriever", "-r", help="auto (hybrid; several collections are routed to those the turn is about), bm25, dense or hybrid.")]
StrategyOpt = Annotated[str, typer.Option("--strategy", "-s", help="Query strategy.")]
MergeOpt = Annotated[str, typer.Option("--merge", help="rrf, combsum, combmnz or enhanced.")]
AnswersOpt = Annotated[str, typer.Option("--answers", help=(
    "Answer settings: default, first (the first prompt, no compression, no decline gate), ungated (the default "
    "without the decline gate), fast (the standalone question in place of the conversation: a shorter prompt), copy "
    "(the default with the copy steer: the passages' wording kept), self-contained (a follow-up that needs no context "
    "shown only the user's questions, unless read ahead), layout (headings and a table's rows shown on lines of "
    "their own) or retry-repeat (an answer that repeats an earlier one written once more, sampled)."))]
DeclineBelowOpt = Annotated[Optional[float], typer.Option("--decline-below", help=(
    "Decline without a model call when no passage sentence is this close to the question (a cosine; default "
    "0.45, chosen on MT-RAG). Lower it where answers are phrased far from the questions (/trace shows the best "
    "cosine of a declined turn); 0 turns the gate off."), show_default=False)]


AnswerTokensOpt = Annotated[Optional[int], typer.Option("--answer-tokens", min=0, show_default=False, help=(
    "The kept passages' tokens together, counted on whole passages (default 1000, chosen on MT-RAG): a collection "
    "of long passages (512-token chunks of a user's documents) gets 2 or 3 through; 0 lifts the budget, so all 5 "
    "kept passages reach the compression, which reads more sentences and is slower to the first token."))]


def said(exc: ConvragError) -> str:
    """What the command line says of an error. A failed answer also gives the backend's own reason
    (its URL, what it replied): the service keeps that in its log, away from its clients, but at the
    command line the reader is the one who configured the backend, and "try again" alone does not
    say whether the server is down or a proxy answered in its place."""
    detail = getattr(exc, "detail", None)
    return f"{exc} ({detail})" if isinstance(detail, str) and detail else str(exc)


def main() -> None:
    """Entry point: run the app, turning user errors into one line and exit status 1."""
    try:
        app()
    except ConvragError as exc:
        err_console.print(f"[red]error:[/red] {escape(said(exc))}", highlight=False, soft_wrap=True)
        sys.exit(1)
    except (FileNotFoundError, PermissionError, IsADirectoryError) as exc:
        err_console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(1)
    except KeyboardInterrupt:  # before a command runs (Typer handles it inside one)
        err_console.print("interrupted")
        sys.exit(130)
    except SystemExit as exc:
        if exc.code == 130:  # Typer's own exit for Ctrl-C inside a command, which it keeps silent
            err_console.print("interrupted")
        raise
