"""The OpenAI wire format: ``GET /v1/models`` and ``POST /v1/chat/completions`` (plain and
server-sent events), so any OpenAI client can chat with a collection. The ``model`` selects a
pipeline; citations and the trace come back in an extra ``convrag`` field that standard
clients ignore, and with the service's ``openai_sources`` also at the end of the answer's text
(:func:`sources_block`), for the chat front-ends that show only the text. Stateless: the client
sends the whole conversation each time."""

from __future__ import annotations

import asyncio
import json
import logging
import queue
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, Literal, NamedTuple, TypeVar

from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator
from starlette.concurrency import run_in_threadpool

from ..data.messages import text_parts
from ..generate.answer import ClientLimits, Sampling
from ..types import Message
from .errors import ApiError, body, error_for
from .gate import Busy
from .pipelines import UnknownModel
from .state import ServiceState, get_state
from .turns import TurnError, check_turn, run_turn, stream_turn

log = logging.getLogger("convrag.service")

T = TypeVar("T")

#: how often a plain request's connection is looked at while its answer is written
DISCONNECT_POLL_S = 0.25


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None


class ChatCompletionRequest(BaseModel):
    """The fields convrag reads; other OpenAI parameters (``presence_penalty``, ``logit_bias``, ...)
    are accepted and ignored: the answer's format is the pipeline's."""

    model_config = ConfigDict(extra="allow")
    model: str
    messages: list[ChatMessageIn] = Field(min_length=1)
    stream: StrictBool = False
    #: left out or 0: greedy decoding, convrag's default (reproducible, and cached); above 0 the
    #: answer is sampled, so a client's "regenerate" gets another answer rather than the cached one
    temperature: float | None = Field(None, ge=0, le=2)
    #: the sampler's seed when sampling (the same seed, the same answer); a random one if left out
    seed: int | None = None
    #: a limit on the answer's tokens: it lowers the pipeline's own (160), never raises it; an answer
    #: it cuts keeps its whole sentences and ends with finish_reason "length"
    max_tokens: int | None = Field(None, ge=1)
    #: OpenAI's newer name for ``max_tokens``; the lower of the two applies
    max_completion_tokens: int | None = Field(None, ge=1)
    #: nucleus sampling's cut when sampling (``temperature`` above 0); greedy decoding has no use for it
    top_p: float | None = Field(None, gt=0, le=1)
    #: up to 4 strings at which the answer ends (not included), as OpenAI's; the pipeline's own stay
    stop: str | list[str] | None = None
    #: how many answers: one per request (a client asking for more is told, not handed one)
    n: int | None = Field(None, json_schema_extra={"minimum": 1, "maximum": 1},  # checked by _one_answer, which says why
                          description="answers to write: convrag writes one per request; ask again with temperature above 0 for another")

    @field_validator("stop")
    @classmethod
    def _stop_strings(cls, value: str | list[str] | None) -> str | list[str] | None:
        strings = [value] if isinstance(value, str) else value or []
        if len(strings) > 4 or any(len(s) > 200 for s in strings):
            raise ValueError("at most 4 stop strings of at most 200 characters each")
        return value

    @field_validator("n")
    @classmethod
    def _one_answer(cls, value: int | None) -> int | None:
        if value is not None and value != 1:
            raise ValueError("convrag writes one answer per request (n = 1); ask again with temperature above 0 for another")
        return value

    def sampling(self) -> Sampling | None:
        """How the answer is decoded: ``None`` for greedy."""
        return Sampling.fresh(self.temperature, self.seed, self.top_p) if self.temperature else None

    def limits(self) -> ClientLimits:
        """The client's limits on the answer: the lower of the two length limits, and the stop strings."""
        lengths = [n for n in (self.max_tokens, self.max_completion_tokens) if n is not None]
        stop = [self.stop] if isinstance(self.stop, str) else self.stop or []
        return ClientLimits(min(lengths) if lengths else None, tuple(s for s in stop if s))


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "convrag"
    description: str = ""


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


def _text(message: ChatMessageIn) -> str:
    """A message's text (its text parts one per line: :func:`text_parts`)."""
    if isinstance(message.content, list):
        return text_parts(part.model_dump() for part in message.content)
    return message.content or ""


def unread_question(request: ChatCompletionRequest) -> str | None:
    """Why the question cannot be read when it holds parts but none with text (an image alone), or
    None: convrag reads text, and "the question is empty" told such a client nothing."""
    last = request.messages[-1]
    if not isinstance(last.content, list) or not last.content or _text(last).strip():
        return None
    kinds = ", ".join(sorted({part.type for part in last.content}))
    return f"the question has no text: convrag reads a message's text parts, and this one holds {kinds}"


#: the line that opens the sources an answer's text ends with (``openai_sources``)
SOURCES = "Sources:"
#: the line that gives the answer as checked where it differs from the text the model streamed
CHECKED = "As checked against the passages:"
_ADDED = re.compile(rf"(?:\n\n{re.escape(CHECKED)} (?P<checked>.*?))?(?:\n\n{re.escape(SOURCES)}\n(?:- \[\d+\] [^\n]*(?:\n|\Z))+)?\Z", re.DOTALL)


def sources_block(citations: list[dict[str, Any]]) -> str:
    """The cited passages as lines a chat front-end shows under the answer ("- [1] Fees (gov)
    https://..."), after a blank line; "" for an answer that cites none. Open WebUI, LibreChat and
    the like show a message's text alone, so without it their users read "[1]" with nothing it
    points to."""
    lines = {c["number"]: f"- [{c['number']}] {c['title'] or c['document_id']} ({c['collection']})" + (f" {c['url']}" if c["url"] else "")
             for c in citations}
    return f"\n\n{SOURCES}\n" + "\n".join(lines[n] for n in sorted(lines)) if lines else ""


def added_text(streamed: str, answer: str, citations: list[dict[str, Any]]) -> str:
    """What an answer whose model wrote ``streamed`` ends with for ``openai_sources``: its sources,
    after the answer as checked (:data:`CHECKED`) where that differs: citation markers added or
    re-pointed, or the decline sentence where the answer was not grounded. A client shows the text
    as streamed and cannot take it back."""
    checked = f"\n\n{CHECKED} {answer}" if " ".join(streamed.split()) != " ".join(answer.split()) else ""
    return checked + sources_block(citations)


def without_added(text: str) -> str:
    """An assistant message as the conversation's history: without the sources :func:`sources_block`
    added, and the answer as checked where :func:`added_text` gave it. A client sends its messages
    back as it showed them, and the next turn's rewrite and prompt should read the answer alone."""
    added = _ADDED.search(text)
    if added is None or not added.group(0):
        return text
    return added.group("checked") if added.group("checked") is not None else text[: added.start()]


def to_messages(request: ChatCompletionRequest) -> list[Message]:
    """User and assistant messages as convrag messages; system and tool messages are not part
    of the conversation the strategies read. An assistant's message is read without what
    ``openai_sources`` added to it (:func:`without_added`)."""
    return [Message("user", _text(m)) if m.role == "user" else Message("agent", without_added(_text(m)))
            for m in request.messages if m.role in ("user", "assistant")]


def router() -> APIRouter:
    api = APIRouter(prefix="/v1", tags=["openai"])

    @api.get("/models", response_model=ModelList)
    def list_models(state: ServiceState = Depends(get_state)) -> ModelList:
        now = int(time.time())
        return ModelList(data=[ModelCard(id=i, created=now, description=d)
                               for i, d in state.pipelines.models(state.collection_names())])

    @api.post("/chat/completions", response_model=None, responses={200: {"description": "A chat.completion object, "
              "or with stream=true a text/event-stream of chat.completion.chunk objects ending with [DONE]"}})
    async def chat_completions(request: ChatCompletionRequest, http: Request, state: ServiceState = Depends(get_state)) -> Any:
        try:
            route = state.pipelines.route(request.model, [c["name"] for c in state.store.collections()])
        except UnknownModel as exc:
            raise ApiError(404, str(exc), "model_not_found") from None
        if (unread := unread_question(request)) is not None:
            raise ApiError(400, unread, "empty_question")
        messages = to_messages(request)
        try:
            check_turn(messages, state.settings.limits)
        except TurnError as exc:
            raise ApiError(exc.status, str(exc), exc.code) from None

        completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        created = int(time.time())
        try:
            state.gate.acquire()
        except Busy as exc:
            raise ApiError(429, str(exc), "too_many_generations") from None
        sources = state.settings.openai_sources
        if request.stream:
            turn = _start_turn(state, route.config, messages, request.sampling(), request.limits())
            return _TurnStream(turn, _events(completion_id, created, request.model, turn, sources))

        gone = threading.Event()

        def work() -> dict[str, Any] | None:
            try:
                result = run_turn(state.pipelines, route.config, messages, request.sampling(), stop=gone,
                                  limits=request.limits())
            finally:
                state.gate.release()
            if result is not None:
                state.read_ahead_after(route.config, messages, result["answer"])
            return result

        result = await _while_connected(http, gone, work)
        if result is None:  # nobody is there to read this
            log.info("the client went away: its answer was stopped")
            raise ApiError(499, "the client closed the request before the answer was written", "client_closed_request")
        usage = _usage(result)
        extra = {"citations": result["citations"], "declined": result["declined"], "trace": result["trace"]}
        content = result["answer"] + (sources_block(result["citations"]) if sources else "")
        return {
            "id": completion_id, "object": "chat.completion", "created": created, "model": request.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": _finish_reason(result), "logprobs": None}],
            "usage": usage, "convrag": extra,
        }

    return api


async def _while_connected(http: Request, gone: threading.Event, work: Callable[[], T]) -> T:
    """``work`` on a worker thread, setting ``gone`` if the client goes away meanwhile. A client
    that gives up on a plain (not streamed) request, its timeout say, used to leave the answer
    written to its end, holding the model and the generation slot while the next question waited;
    ``work`` passes ``gone`` on as its turn's stop."""
    task = asyncio.ensure_future(run_in_threadpool(work))
    while not task.done():
        await asyncio.wait({task}, timeout=DISCONNECT_POLL_S)
        if not task.done() and not gone.is_set() and await http.is_disconnected():
            gone.set()
    return task.result()


def _finish_reason(result: dict[str, Any]) -> str:
    """"length" when the client's ``max_tokens`` cut the answer, else "stop"."""
    limit = ((result["trace"].get("answer") or {}).get("details") or {}).get("length_limit") or {}
    return "length" if limit.get("reached") else "stop"


def _usage(result: dict[str, Any]) -> dict[str, int]:
    call = (result["trace"].get("answer") or {}).get("llm_call") or {}
    prompt, completion = int(call.get("prompt_tokens", 0)), int(call.get("completion_tokens", 0))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


_END = object()


class _Turn(NamedTuple):
    """A streamed turn in flight: the queue its pieces arrive on (text, then the turn's JSON or an
    exception, then an end marker), and the event that stops it when its client goes away."""

    pieces: queue.Queue[Any]
    gone: threading.Event


def _start_turn(state: ServiceState, config: Any, messages: list[Message], sampling: Sampling | None,
                limits: ClientLimits | None = None) -> _Turn:
    """Run the turn on its own thread, which releases the generation slot the caller took however
    it ends. A client that goes away (an OpenAI client's "stop") stops the answer at the next piece:
    the model and the slot are free for the next question at once, where on 2 cores the rest of an
    answer nobody reads takes seconds; a stopped answer is not cached and nothing is read ahead.
    (A turn of the conversations API runs to its end instead: it is stored, and the page shows it.)"""
    turn = _Turn(queue.Queue(), threading.Event())

    def work() -> None:
        answer: str | None = None
        sent = 0
        try:
            for item in stream_turn(state.pipelines, config, messages, sampling=sampling, stop=turn.gone, limits=limits):
                turn.pieces.put(item)
                sent += 1
                if isinstance(item, dict):
                    answer = item["answer"]
            if answer is None:
                log.info("the client went away: its answer was stopped after %d piece(s)", sent)
        except Exception as exc:  # reported to the client as an error event
            turn.pieces.put(exc)
        finally:
            state.gate.release()
            try:
                # before the stream ends, as the other endpoints do: a client that sends its next
                # question the moment it has this answer finds the read-ahead already queued
                if answer is not None:
                    state.read_ahead_after(config, messages, answer)
            finally:
                turn.pieces.put(_END)

    threading.Thread(target=work, name="convrag-stream", daemon=True).start()
    return turn


class _TurnStream(StreamingResponse):
    """The turn's events; however the response ends (its client went away, or all was sent) the
    turn is told, so that a turn nobody reads stops. Told here rather than when the events'
    generator closes: after a disconnect that generator lives on in the cancelled task's traceback
    until the garbage collector frees it, while the answer goes on being written."""

    def __init__(self, turn: _Turn, events: Iterator[str]) -> None:
        super().__init__(events, media_type="text/event-stream")
        self.turn = turn

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.turn.gone.set()


def _events(completion_id: str, created: int, model: str, turn: _Turn, sources: bool = False) -> Iterator[str]:
    """chat.completion.chunk events as the model writes, then (with ``sources``) one with the
    answer's sources (:func:`added_text`), then a final chunk with the finish reason, usage and
    convrag's extra field (the final answer text, citations, trace), then ``[DONE]``."""
    def event(delta: dict[str, Any], finish: str | None = None, **more: Any) -> str:
        chunk = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **more}
        return f"data: {json.dumps(chunk)}\n\n"

    yield event({"role": "assistant", "content": ""})
    streamed = ""
    while (item := turn.pieces.get()) is not _END:
        if isinstance(item, Exception):
            status, message, code = error_for(item)
            yield f"data: {json.dumps(body(status, message, code))}\n\n"
        elif isinstance(item, dict):
            extra = {"answer": item["answer"], "citations": item["citations"], "declined": item["declined"], "trace": item["trace"]}
            if sources and (added := added_text(streamed, item["answer"], item["citations"])):
                yield event({"content": added})
            yield event({}, _finish_reason(item), usage=_usage(item), convrag=extra)
        else:
            streamed += item
            yield event({"content": item})
    yield "data: [DONE]\n\n"
