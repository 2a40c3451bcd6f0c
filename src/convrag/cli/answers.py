"""``convrag ask`` and ``convrag chat``: cited answers from a pipeline over collections."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..console import console
from ..limits import check_question
from .app import (
    AnswersOpt,
    AnswerTokensOpt,
    BackendOpt,
    DeclineBelowOpt,
    DepthOpt,
    LLMOpt,
    LLMUrlOpt,
    MergeOpt,
    MilvusUriOpt,
    NoCacheOpt,
    PipelineCollectionsOpt,
    PipelineRetrieverOpt,
    QueriesOpt,
    StoreOpt,
    StrategyOpt,
    app,
    make_llm_from,
    milvus_from,
    split_list,
)


def spec_from(collections: str, retriever: str, strategy: str, merge: str, queries: str, k: int,  # type: ignore[no-untyped-def]
              answers: str = "default", decline_below: Optional[float] = None, answer_tokens: Optional[int] = None):
    from ..pipeline import PipelineSpec
    from ..pipeline.spec import ANSWER_TOKENS, answer_budget

    return PipelineSpec(tuple(split_list(collections)), strategy=strategy, queries=tuple(split_list(queries)), retriever=retriever,
                        merge=merge, k=k, answer=answers, decline_below=decline_below,
                        answer_tokens=answer_budget(ANSWER_TOKENS if answer_tokens is None else answer_tokens))


def pipeline_from(collections: str, store: Optional[Path], retriever: str, strategy: str, merge: str, queries: str, k: int,  # type: ignore[no-untyped-def]
              llm: str, llm_url: Optional[str], no_llm_cache: bool, milvus=None, answers: str = "default",
              decline_below: Optional[float] = None, answer_tokens: Optional[int] = None):
    from ..pipeline import build_pipeline

    spec = spec_from(collections, retriever, strategy, merge, queries, k, answers, decline_below, answer_tokens)
    return build_pipeline(spec, llm=make_llm_from(llm, llm_url, no_llm_cache), store=store, milvus=milvus)



@app.command(rich_help_panel="Answers")
def ask(
    question: Annotated[str, typer.Argument(help="The user's question; - reads it from standard input.")],
    collections: PipelineCollectionsOpt,
    history: Annotated[Optional[Path], typer.Option("--history", help="JSON list of earlier messages.")] = None,
    store: StoreOpt = None,
    retriever: PipelineRetrieverOpt = "auto",
    strategy: StrategyOpt = "progressive",
    merge: MergeOpt = "enhanced",
    queries: QueriesOpt = "strategy",
    k: DepthOpt = 10,
    answers: AnswersOpt = "default",
    decline_below: DeclineBelowOpt = None,
    answer_tokens: AnswerTokensOpt = None,
    llm: LLMOpt = "local",
    llm_url: LLMUrlOpt = None,
    no_llm_cache: NoCacheOpt = False,
    trace: Annotated[bool, typer.Option("--trace", help="Also print the decisions; --json for the full trace.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the answer, citations and full trace as JSON.")] = False,
    backend: BackendOpt = "embedded",
    milvus_uri: MilvusUriOpt = "./data/convrag.db",
) -> None:
    """Answer one question (optionally after a conversation) from one or more collections, with citations.
    The answer shows as it is written (on a terminal); Ctrl-C stops it."""
    import json

    from ..data.messages import read_history
    from ..types import Message
    from .chat import print_answer, print_decisions, stream_answer

    if question == "-":  # a question too long or awkward to quote on a command line, or piped from another program
        _read_any_bytes()
        question = sys.stdin.read().strip()
    messages = [*(read_history(history) if history else ()), Message("user", check_question(question))]
    pipeline = pipeline_from(collections, store, retriever, strategy, merge, queries, k, llm, llm_url, no_llm_cache,
                             milvus_from(backend, milvus_uri, store), answers, decline_below, answer_tokens)
    if as_json:  # for programs: one JSON document once the answer is whole
        result = pipeline.answer(messages)
        payload = {"answer": result.text, "declined": result.declined, "citations": [c._asdict() for c in result.citations],
                   "trace": result.trace.to_dict()}
        console.print_json(json.dumps(payload, ensure_ascii=False, default=str))
        return
    result = stream_answer(pipeline, messages, task_id="turn")  # the first words come seconds before the whole
    print_answer(result)
    if trace:
        print_decisions(result)


@app.command(rich_help_panel="Answers")
def chat(
    collections: PipelineCollectionsOpt,
    history: Annotated[Optional[Path], typer.Option("--history", help="Go on from earlier messages: a JSON list, as /save writes.")] = None,
    store: StoreOpt = None,
    retriever: PipelineRetrieverOpt = "auto",
    strategy: StrategyOpt = "progressive",
    merge: MergeOpt = "enhanced",
    queries: QueriesOpt = "strategy",
    k: DepthOpt = 10,
    answers: AnswersOpt = "default",
    decline_below: DeclineBelowOpt = None,
    answer_tokens: AnswerTokensOpt = None,
    llm: LLMOpt = "local",
    llm_url: LLMUrlOpt = None,
    no_llm_cache: NoCacheOpt = False,
    backend: BackendOpt = "embedded",
    milvus_uri: MilvusUriOpt = "./data/convrag.db",
) -> None:
    """Chat in the terminal over chosen collections; answers show citations, /trace shows the decisions."""
    from ..data.messages import read_history
    from ..pipeline import LivePipeline
    from .chat import chat_loop

    earlier = read_history(history) if history else ()  # a bad file is said before anything loads
    spec = spec_from(collections, retriever, strategy, merge, queries, k, answers, decline_below, answer_tokens)
    milvus = milvus_from(backend, milvus_uri, store)
    _read_any_bytes()
    chat_loop(LivePipeline(spec, make_llm_from(llm, llm_url, no_llm_cache), store, milvus), history=earlier)


def _read_any_bytes() -> None:
    """Let standard input pass on bytes that are not UTF-8: in a UTF-8 locale other than C, Python's
    stdin is strict, and piped cp1252 text was a UnicodeDecodeError traceback (that ended a chat).
    Read on, a question's check (:func:`~convrag.limits.check_question`) names the byte instead."""
    if isinstance(sys.stdin, io.TextIOWrapper):
        sys.stdin.reconfigure(errors="surrogateescape")
