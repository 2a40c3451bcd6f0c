"""Stored conversations: create, list, read, rename, export, delete; ask the next question (plain
JSON, or server-sent events with the answer as the model writes it); regenerate the last answer.

A turn is stored only once its answer exists: a model failure is an error response (503), never
a stored turn, so the user can ask again and the history never holds an error message.
"""

import json
import queue
import threading
from collections.abc import Iterator
from typing import Any, Literal

from fastapi import APIRouter, Depends, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field, StrictBool, StrictFloat, create_model

from ...errors import ConfigError
from ...generate.answer import Sampling
from ...pipeline.spec import check_decline_below
from ...pipeline.trace import TurnTraceDict
from ...strategies.registry import check_known_strategy, offered_strategies
from ...types import Message
from ..errors import ApiError, error_for
from ..export import conversation_markdown
from ..gate import Busy, ConversationBusy
from ..settings import Limits
from ..state import ServiceState, get_state
from ..store import ConversationChanged
from ..turns import TurnError, check_turn, run_turn, stream_turn
from .common import CollectionNames, require_collection


class CitationOut(BaseModel):
    number: int
    collection: str
    passage_id: str
    document_id: str
    title: str
    url: str
    inferred: bool
    text: str


class TurnOut(BaseModel):
    """A stored turn: the question, the answer with its citations, and the full trace of its decisions
    (the schema of ``trace`` is the one ``convrag trace-schema`` prints)."""

    conversation_id: str
    idx: int
    question: str
    answer: str
    declined: bool
    citations: list[CitationOut]
    trace: TurnTraceDict
    created: float


class ConversationOut(BaseModel):
    id: str
    title: str
    collections: list[str]
    strategy: str
    created: float
    updated: float
    turns: list[TurnOut] = []


EVENT_STREAM: dict[int | str, dict[str, Any]] = {
    200: {"model": TurnOut,
          "description": "The stored turn as JSON; with stream=true a text/event-stream of `token` events (the answer as it "
                         "is written), then one `turn` event (the stored turn) or `error`",
          "content": {"text/event-stream": {}}}}


def _offered_names(schema: dict[str, Any]) -> None:
    """The OpenAPI description of a ``strategy`` field lists the strategies this server offers
    (``GET /api/strategies``, read when the description is made); any other name is a 422
    ``unknown_strategy``."""
    names = [s.name for s in offered_strategies()]
    schema["anyOf"] = [{"type": "string", "enum": names} if part.get("type") == "string" else part for part in schema["anyOf"]]


class ConversationIn(BaseModel):
    collections: CollectionNames
    title: str = Field("", max_length=200)
    strategy: str | None = Field(None, json_schema_extra=_offered_names)


class ConversationPatch(BaseModel):
    """A new title, and/or the collections the conversation's next turns search, and/or the strategy
    they use (one of ``GET /api/strategies``). The turns so far keep the passages, citations and
    decisions they were answered with."""

    title: str | None = Field(None, min_length=1, max_length=200, pattern=r"\S")
    collections: CollectionNames | None = None
    strategy: str | None = Field(None, json_schema_extra=_offered_names)


class RegenerateIn(BaseModel):
    stream: StrictBool = False  # strict: "yes" or 0 is a client bug, not a choice
    #: the decline gate's floor for this answer alone (0: the gate off), as the web chat's "Answer
    #: anyway" asks after a turn the gate declined ("best cosine 0.37 < 0.45"); the answer is then
    #: decoded greedily, the one the question gets under that floor
    decline_below: StrictFloat | None = Field(None, ge=0, le=1)  # strict: false is no floor


def message_model(limits: Limits) -> type[BaseModel]:
    return create_model(
        "MessageIn",
        question=(str, Field(min_length=1, max_length=limits.max_question_chars, pattern=r"\S")),
        stream=(StrictBool, Field(False, description="answer as server-sent events while the model writes")),
    )


def _conversation(state: ServiceState, conv_id: str, with_turns: bool = True) -> dict[str, Any]:
    conversation = state.store.conversation(conv_id, with_turns=with_turns)
    if conversation is None:
        raise ApiError(404, f"no conversation {conv_id!r}", "conversation_not_found")
    return conversation


def _known(strategy: str) -> None:
    """422 ``unknown_strategy`` unless the server offers ``strategy``: a client may pick among the
    strategies the server lists, never make it import one."""
    try:
        check_known_strategy(strategy)
    except ConfigError as exc:
        raise ApiError(422, str(exc), "unknown_strategy") from None


def _history(turns: list[dict[str, Any]]) -> list[Message]:
    messages: list[Message] = []
    for turn in turns:
        messages += [Message("user", turn["question"]), Message("agent", turn["answer"])]
    return messages


def _same_collection(state: ServiceState, name: str, conversation: dict[str, Any]) -> bool:
    """Whether the collection the conversation was started over still exists. A conversation can only be
    started over an existing collection, so one created after the conversation is a re-creation under
    the same name: other documents, which the earlier answers never cited."""
    collection = state.store.collection(name)
    return collection is not None and collection["created"] <= conversation["created"]


class _Turn:
    """One question to answer and store: plain or streamed, new or regenerated."""

    def __init__(self, state: ServiceState, conversation: dict[str, Any], question: str, replace_last: bool,
                 decline_below: float | None = None) -> None:
        deleted = [name for name in conversation["collections"] if not _same_collection(state, name, conversation)]
        if deleted:  # else the turn would be declined as if the collection were only empty, or search another one
            raise ApiError(409, f"this conversation searches {', '.join(map(repr, deleted))}, deleted since (a collection of "
                           "the same name made later is another one); its turns stay readable: start a new conversation "
                           "to ask more", "collection_deleted")
        turns = conversation["turns"][:-1] if replace_last else conversation["turns"]
        self.messages = [*_history(turns), Message("user", question)]
        try:
            check_turn(self.messages, state.settings.limits)
        except TurnError as exc:
            raise ApiError(exc.status, str(exc), exc.code) from None
        self.state, self.conversation, self.question, self.replace_last = state, conversation, question, replace_last
        self.config = state.settings.pipeline(conversation["collections"], conversation["strategy"])
        if decline_below is not None:
            try:
                check_decline_below(decline_below, self.config.answer)
            except ConfigError as exc:
                raise ApiError(422, str(exc), "no_decline_gate") from None
            self.config = self.config.model_copy(update={"decline_below": decline_below})
        # a regenerate is another attempt: sampled with a seed of its own, where greedy decoding (and
        # the completion cache) gave the very answer it replaces; under another floor it is the
        # answer the question gets there
        self.sampling = Sampling.fresh() if replace_last and decline_below is None else None

    def _claim(self) -> threading.Event:
        """This conversation's one turn in flight, else 409 at once; the event is the user's "Stop"."""
        try:
            return self.state.turns_in_flight.claim(self.conversation["id"])
        except ConversationBusy as exc:
            raise ApiError(409, str(exc), "conversation_busy") from None

    def _store(self, result: dict[str, Any]) -> dict[str, Any]:
        first = not self.conversation["turns"] and self.conversation["title"] == "New conversation"
        stored = self.state.store.add_turn(self.conversation["id"], self.question, result["answer"], result["declined"],
                                           result["citations"], result["trace"], title=self.question[:80] if first else None,
                                           replace_last=self.replace_last, expected_turns=len(self.conversation["turns"]))
        # the next question's prompt starts with this conversation, now one answer longer
        self.state.read_ahead_after(self.config, self.messages, result["answer"])
        return stored

    def run(self) -> dict[str, Any]:
        """The stored turn. A "Stop" ends it at the model's next piece (or before the answer is
        begun); nothing is then stored (409 ``turn_stopped``), as a stopped streamed turn is not."""
        stop = self._claim()
        try:
            with self.state.gate.slot():
                result = run_turn(self.state.pipelines, self.config, self.messages, self.sampling, stop)
            if result is None or stop.is_set():
                raise ApiError(409, "the answer was stopped before it was stored; ask again", "turn_stopped")
            return self._store(result)
        except Busy as exc:
            raise ApiError(429, str(exc), "too_many_generations") from None
        except ConversationChanged as exc:
            raise ApiError(*error_for(exc)) from None
        finally:
            self.state.turns_in_flight.release(self.conversation["id"])

    def stream(self) -> StreamingResponse:
        """The answer as events: ``token`` pieces, then the stored ``turn`` (or an ``error``). The
        user's "Stop" ends it with a ``stopped`` event at the next piece, storing nothing: a half
        answer would become history that later questions are rewritten and answered from. A client
        that merely goes away does not stop it: the turn is stored and shows when reopened."""
        stop = self._claim()
        try:
            self.state.gate.acquire()
        except Busy as exc:
            self.state.turns_in_flight.release(self.conversation["id"])
            raise ApiError(429, str(exc), "too_many_generations") from None
        events: queue.Queue[str | None] = queue.Queue()

        def work() -> None:
            try:
                stored = False
                for item in stream_turn(self.state.pipelines, self.config, self.messages, sampling=self.sampling, stop=stop):
                    if isinstance(item, dict):
                        events.put(_event("turn", self._store(item)))
                        stored = True
                    else:
                        events.put(_event("token", {"text": item}))
                if not stored:  # the stop came first
                    events.put(_event("stopped", {"question": self.question}))
            except Exception as exc:  # the client gets an error event; nothing is stored
                status, message, code = error_for(exc)
                events.put(_event("error", {"error": {"message": message, "code": code, "status": status}}))
            finally:
                self.state.gate.release()
                self.state.turns_in_flight.release(self.conversation["id"])
                events.put(None)

        threading.Thread(target=work, name="convrag-turn", daemon=True).start()
        return StreamingResponse(_drain(events), media_type="text/event-stream", headers={"Cache-Control": "no-store"})


def _event(kind: str, data: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps(data, default=str)}\n\n"


def _drain(events: "queue.Queue[str | None]") -> Iterator[str]:
    while (item := events.get()) is not None:
        yield item


def router(limits: Limits) -> APIRouter:
    api = APIRouter(tags=["conversations"])
    MessageIn = message_model(limits)  # noqa: N806 - a class

    @api.get("/conversations")
    def list_conversations(state: ServiceState = Depends(get_state)) -> list[dict[str, Any]]:
        return state.store.conversations()

    @api.post("/conversations", status_code=201)
    def create_conversation(body: ConversationIn, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        for name in body.collections:
            require_collection(state, name)
        strategy = body.strategy or state.settings.strategy
        _known(strategy)
        conversation = state.store.add_conversation(body.title or "New conversation", body.collections, strategy)
        state.read_ahead_for(state.settings.pipeline(body.collections, strategy), [])
        return conversation

    @api.get("/conversations/{conv_id}", response_model=None, responses={200: {"model": ConversationOut}})
    def read_conversation(conv_id: str, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        return _conversation(state, conv_id)

    @api.patch("/conversations/{conv_id}")
    def update_conversation(conv_id: str, body: ConversationPatch, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        """Rename the conversation, or choose the collections or the strategy of its next questions
        (what is left out stays as it was)."""
        _conversation(state, conv_id, with_turns=False)
        for name in body.collections or ():
            require_collection(state, name)
        if body.strategy is not None:
            _known(body.strategy)
        if body.title is not None or body.collections is not None or body.strategy is not None:
            state.store.update_conversation(conv_id, title=body.title.strip() if body.title else None,
                                            collections=body.collections,
                                            strategy=body.strategy)
        return state.store.conversation(conv_id) or {}

    @api.get("/conversations/{conv_id}/export", response_class=Response,
             responses={200: {"content": {"text/markdown": {}, "application/json": {}}}})
    def export_conversation(conv_id: str, format: Literal["markdown", "json"] = "markdown",
                            state: ServiceState = Depends(get_state)) -> Response:
        """The whole conversation as a file: Markdown (questions, answers, sources) or JSON (with every trace)."""
        conversation = _conversation(state, conv_id)
        if format == "json":
            content, media, suffix = json.dumps(conversation, indent=2, ensure_ascii=False, default=str), "application/json", "json"
        else:
            content, media, suffix = conversation_markdown(conversation), "text/markdown; charset=utf-8", "md"
        headers = {"Content-Disposition": f'attachment; filename="conversation-{conv_id}.{suffix}"'}
        return Response(content, media_type=media, headers=headers)

    @api.delete("/conversations/{conv_id}", status_code=204)
    def delete_conversation(conv_id: str, state: ServiceState = Depends(get_state)) -> Response:
        if not state.store.delete_conversation(conv_id):
            raise ApiError(404, f"no conversation {conv_id!r}", "conversation_not_found")
        return Response(status_code=204)

    @api.post("/conversations/{conv_id}/messages", response_model=None, responses=EVENT_STREAM)
    def ask(conv_id: str, body: MessageIn, state: ServiceState = Depends(get_state)) -> Any:  # type: ignore[valid-type]
        """Ask the next question; the history is this conversation's questions and convrag's own answers."""
        turn = _Turn(state, _conversation(state, conv_id), body.question, replace_last=False)  # type: ignore[attr-defined]
        return turn.stream() if body.stream else turn.run()  # type: ignore[attr-defined]

    @api.post("/conversations/{conv_id}/read-ahead", status_code=202)
    def read_ahead(conv_id: str, state: ServiceState = Depends(get_state)) -> dict[str, bool]:
        """Have this conversation's next prompt read up to its passages in the background (the web
        chat asks when a conversation is opened): an earlier conversation's prompt is no longer in
        the model's cache, and its next question would wait for all of it. ``reading`` is false
        where there is nothing to read (read-ahead is off, or its collections have no documents)."""
        conversation = _conversation(state, conv_id)
        config = state.settings.pipeline(conversation["collections"], conversation["strategy"])
        return {"reading": state.read_ahead_for(config, _history(conversation["turns"]))}

    @api.post("/conversations/{conv_id}/stop")
    def stop(conv_id: str, state: ServiceState = Depends(get_state)) -> dict[str, bool]:
        """Stop the answer being written in this conversation ("Stop" in the web chat): its stream
        ends with a ``stopped`` event at the next piece and nothing is stored (a regenerate leaves
        the answer it was to replace). ``stopped`` is false when no answer was being written."""
        _conversation(state, conv_id, with_turns=False)  # 404 for one that does not exist
        return {"stopped": state.turns_in_flight.stop(conv_id)}

    @api.post("/conversations/{conv_id}/regenerate", response_model=None, responses=EVENT_STREAM)
    def regenerate(conv_id: str, body: RegenerateIn | None = None, state: ServiceState = Depends(get_state)) -> Any:
        """Answer the last question again; the new answer replaces the old one once it is written.
        ``decline_below``: under another decline floor (0: the gate off), decoded greedily."""
        conversation = _conversation(state, conv_id)
        if not conversation["turns"]:
            raise ApiError(409, "the conversation has no answer to regenerate", "nothing_to_regenerate")
        turn = _Turn(state, conversation, conversation["turns"][-1]["question"], replace_last=True,
                     decline_below=body.decline_below if body is not None else None)
        return turn.stream() if body is not None and body.stream else turn.run()

    return api

