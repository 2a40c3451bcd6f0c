"""The OpenAI wire format: ``GET /v1/models`` and ``POST /v1/chat/completions`` (plain and
server-sent events), so any OpenAI client can chat with a collection. The ``model`` selects a
pipeline; citations and the trace come back in an extra ``convrag`` field that standard
clients ignore. Stateless: the client sends the whole conversation each time."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any, Literal

from fastapi import APIRouter, Depends
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from ..types import Message
from .errors import ApiError
from .gate import Busy
from .pipelines import UnknownModel
from .state import ServiceState, get_state
from .turns import TurnError, check_turn, run_turn


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None


class ChatCompletionRequest(BaseModel):
    """The fields convrag reads; other OpenAI parameters are accepted and ignored (greedy
    decoding and the answer length are the pipeline's)."""

    model_config = ConfigDict(extra="allow")
    model: str
    messages: list[ChatMessageIn] = Field(min_length=1)
    stream: bool = False


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
    if isinstance(message.content, list):
        return "".join(p.text or "" for p in message.content if p.type == "text")
    return message.content or ""


def to_messages(request: ChatCompletionRequest) -> list[Message]:
    """User and assistant messages as convrag messages; system and tool messages are not part
    of the conversation the strategies read."""
    return [Message("user" if m.role == "user" else "agent", _text(m)) for m in request.messages if m.role in ("user", "assistant")]


def router() -> APIRouter:
    api = APIRouter(prefix="/v1", tags=["openai"])

    @api.get("/models", response_model=ModelList)
    def list_models(state: ServiceState = Depends(get_state)) -> ModelList:
        now = int(time.time())
        return ModelList(data=[ModelCard(id=i, created=now, description=d)
                               for i, d in state.pipelines.models(state.collections.names() + _empty(state))])

    @api.post("/chat/completions", response_model=None, responses={200: {"description": "A chat.completion object, "
              "or with stream=true a text/event-stream of chat.completion.chunk objects ending with [DONE]"}})
    async def chat_completions(request: ChatCompletionRequest, state: ServiceState = Depends(get_state)) -> Any:
        try:
            route = state.pipelines.route(request.model, [c["name"] for c in state.store.collections()])
        except UnknownModel as exc:
            raise ApiError(404, str(exc), "model_not_found") from None
        messages = to_messages(request)
        try:
            check_turn(messages, state.settings.limits)
        except TurnError as exc:
            raise ApiError(exc.status, str(exc), exc.code) from None

        def work() -> dict[str, Any]:
            with state.gate.slot():
                return run_turn(state.pipelines, route.config, messages)

        try:
            result = await run_in_threadpool(work)
        except Busy as exc:
            raise ApiError(429, str(exc), "too_many_generations") from None
        completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        created = int(time.time())
        usage = _usage(result)
        extra = {"citations": result["citations"], "declined": result["declined"], "trace": result["trace"]}
        if request.stream:
            return StreamingResponse(_chunks(completion_id, created, request.model, result["answer"], extra, usage),
                                     media_type="text/event-stream")
        return {
            "id": completion_id, "object": "chat.completion", "created": created, "model": request.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": result["answer"]}, "finish_reason": "stop",
                         "logprobs": None}],
            "usage": usage, "convrag": extra,
        }

    return api


def _empty(state: ServiceState) -> list[str]:
    """Collections created but without documents yet (still valid models)."""
    built = set(state.collections.names())
    return [c["name"] for c in state.store.collections() if c["name"] not in built]


def _usage(result: dict[str, Any]) -> dict[str, int]:
    call = (result["trace"].get("answer") or {}).get("llm_call") or {}
    prompt, completion = int(call.get("prompt_tokens", 0)), int(call.get("completion_tokens", 0))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _chunks(completion_id: str, created: int, model: str, text: str, extra: dict[str, Any],
            usage: dict[str, int]) -> Iterator[str]:
    """The answer as chat.completion.chunk events (a few words each), then the final chunk with
    the finish reason, usage and convrag's extra field, then ``[DONE]``."""
    def event(delta: dict[str, Any], finish: str | None = None, **more: Any) -> str:
        chunk = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **more}
        return f"data: {json.dumps(chunk)}\n\n"

    yield event({"role": "assistant", "content": ""})
    words = text.split(" ")
    for i in range(0, len(words), 4):
        piece = " ".join(words[i:i + 4])
        yield event({"content": piece if i == 0 else " " + piece})
    yield event({}, "stop", usage=usage, convrag=extra)
    yield "data: [DONE]\n\n"
