"""One conversational turn through the service: limits, the pipeline, and the JSON the API
returns (answer, citations with their passages, the full trace)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import closing
from typing import Any

from ..generate.answer import DECLINE, ClientLimits, Sampling
from ..pipeline import PipelineResult, TurnTrace
from ..types import Message
from .pipelines import Pipelines
from .settings import Limits, PipelineConfig


class TurnError(ValueError):
    """A request the service refuses; ``status`` and ``code`` go into the HTTP error."""

    def __init__(self, message: str, status: int = 400, code: str = "invalid_request") -> None:
        super().__init__(message)
        self.status, self.code = status, code


def check_turn(messages: Sequence[Message], limits: Limits) -> None:
    if not messages or messages[-1].speaker != "user":
        raise TurnError("the conversation must end with a user message", code="no_question")
    question = messages[-1].text
    if not question.strip():
        raise TurnError("the question is empty", code="empty_question")
    if len(question) > limits.max_question_chars:
        raise TurnError(f"the question is {len(question):,} characters; the limit is {limits.max_question_chars:,}",
                        413, "question_too_long")
    if len(messages) > limits.max_history_messages:
        raise TurnError(f"the conversation has {len(messages)} messages; the limit is {limits.max_history_messages} "
                        "(start a new conversation)", 413, "history_too_long")


def run_turn(pipelines: Pipelines, config: PipelineConfig, messages: Sequence[Message],
             sampling: Sampling | None = None, stop: threading.Event | None = None,
             limits: ClientLimits | None = None) -> dict[str, Any] | None:
    """Answer the last user message; collections without documents are skipped and named in the
    trace. With ``stop``, the answer is streamed inside (the same text; the pieces are dropped), so
    that a stop ends it at the next piece; then None (see :func:`stream_turn`)."""
    result = None
    for item in stream_turn(pipelines, config, messages, stream_text=stop is not None, sampling=sampling, stop=stop,
                            limits=limits):
        if isinstance(item, dict):
            result = item
    return result


def stream_turn(pipelines: Pipelines, config: PipelineConfig, messages: Sequence[Message], stream_text: bool = True,
                sampling: Sampling | None = None, stop: threading.Event | None = None,
                limits: ClientLimits | None = None) -> Iterator[str | dict[str, Any]]:
    """:func:`run_turn` with the answer's text in pieces as the model writes it; the turn's JSON last.
    ``sampling``: the answer sampled instead of decoded greedily (a regenerate, or a client's temperature);
    ``limits``: a client's lower limit on its length and stop strings.
    ``stop`` (a user's "Stop", a client gone): once set, the turn ends at the next piece, before the
    JSON, its generation closed so that the model is free at once; set while the question is
    rewritten or searched, the answer is not begun (:meth:`Pipeline.stream`). A stopped turn
    yields no JSON."""
    start = time.perf_counter()
    ready, empty = pipelines.ready(config.collections)
    if not ready:
        trace = TurnTrace(fallback="no chosen collection has documents yet: declined without a model call",
                          empty_collections=empty, timings_s={"total": time.perf_counter() - start})
        yield DECLINE
        yield {"answer": DECLINE, "declined": True, "citations": [], "trace": trace.to_dict()}
        return
    pipeline = pipelines.get(config)
    with closing(pipeline.stream(list(messages), stream_text=stream_text, sampling=sampling, stop=stop,
                                 limits=limits)) as items:
        for item in items:
            yield _turn_json(item, empty) if isinstance(item, PipelineResult) else item


def _turn_json(result: PipelineResult, empty: list[str]) -> dict[str, Any]:
    result.trace.empty_collections = list(empty)
    trace = result.trace.to_dict()
    texts = {(r.hit.collection, r.hit.passage_id): r.hit.text for r in result.merged.results}
    citations = [
        {**c._asdict(), "text": texts.get((c.collection, c.passage_id), "")}
        for c in result.citations
    ]
    passages = [
        {"number": i, "collection": r.hit.collection, "passage_id": r.hit.passage_id, "title": r.hit.title,
         "url": r.hit.url, "text": r.hit.text, "selection_reason": r.selection_reason}
        for i, r in enumerate(result.merged.results, start=1)
    ]
    trace["passages"] = passages
    return {"answer": result.text, "declined": result.declined, "citations": citations, "trace": trace}
