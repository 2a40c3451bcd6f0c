"""convrag's own API: collections and their documents (uploads indexed by background jobs),
jobs, passages, search without generation, and stored conversations.

(No ``from __future__ import annotations`` here: the request models are built per service from
its limits, and FastAPI must see the classes themselves in the endpoints' annotations.)"""


import re
import shutil
from typing import Any

from fastapi import APIRouter, Depends, File, Response, UploadFile
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field, create_model
from starlette.concurrency import run_in_threadpool

from ..errors import ConvragError
from ..index.collection import CURRENT_FILE
from ..index.manifest import Manifest
from ..retrieve.multi import open_collections, search_collections
from ..types import Message
from .errors import ApiError
from .gate import Busy
from .settings import Limits, PipelineConfig
from .state import ServiceState, get_state
from .turns import TurnError, check_turn, run_turn
from .uploads import UploadError, doc_id_for, inside, safe_filename

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class CollectionIn(BaseModel):
    name: str = Field(pattern=NAME.pattern, description="letters, digits, '-' and '_'; at most 64")
    description: str = Field("", max_length=2000)


class ConversationIn(BaseModel):
    collections: list[str] = Field(min_length=1, max_length=50)
    title: str = Field("", max_length=200)
    strategy: str | None = None


def request_models(limits: Limits) -> tuple[type[BaseModel], type[BaseModel]]:
    """The search and question bodies, with this service's limits in their schema (so the OpenAPI
    description says what is accepted)."""
    text = (str, Field(min_length=1, max_length=limits.max_question_chars, pattern=r"\S"))
    search = create_model("SearchIn", collections=(list[str], Field(min_length=1, max_length=50)), query=text,
                          k=(int, Field(10, ge=1, le=limits.max_search_k)))
    message = create_model("MessageIn", question=text)
    return search, message


def _collection_info(state: ServiceState, record: dict[str, Any]) -> dict[str, Any]:
    name = record["name"]
    path = state.collections.path(name)
    info: dict[str, Any] = {**record, "passages": 0, "documents": len(state.store.documents(name)), "version": None,
                            "indexing": state.indexer.busy(name)}
    if (path / CURRENT_FILE).exists():
        try:
            version = (path / CURRENT_FILE).read_text().strip()
            info.update(passages=Manifest.read(path / version).passage_count, version=version)
        except (ConvragError, OSError) as exc:
            info["problem"] = str(exc)
    return info


def _job_info(job: dict[str, Any]) -> dict[str, Any]:
    out = {k: job[k] for k in ("id", "collection", "status", "stage", "done", "total", "created", "started", "finished")}
    out["files"] = [{"filename": f["filename"], "doc_id": f["doc_id"], "bytes": f["bytes"]} for f in job["files"]]
    out["error" if job["status"] == "failed" else "warning"] = job["error"]
    return out


def _require(state: ServiceState, name: str) -> dict[str, Any]:
    record = state.store.collection(name)
    if record is None:
        raise ApiError(404, f"no collection named {name!r}", "collection_not_found")
    return record


def router(limits: Limits) -> APIRouter:
    """The ``/api`` routes; ``limits`` sets the upload route's body and file-count bounds."""
    api = APIRouter(prefix="/api")
    SearchIn, MessageIn = request_models(limits)  # noqa: N806 - classes

    @api.get("/health", tags=["service"])
    def health(state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        return {"status": "ok", "llm": state.settings.llm, "collections": len(state.store.collections())}

    # collections -------------------------------------------------------------------------
    @api.get("/collections", tags=["collections"])
    def list_collections(state: ServiceState = Depends(get_state)) -> list[dict[str, Any]]:
        return [_collection_info(state, c) for c in state.store.collections()]

    @api.post("/collections", status_code=201, tags=["collections"])
    def create_collection(body: CollectionIn, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        if state.store.collection(body.name) is not None or state.collections.path(body.name).exists():
            raise ApiError(409, f"a collection named {body.name!r} exists", "collection_exists")
        record = state.store.add_collection(body.name, body.description, state.settings.embedding_model)
        return _collection_info(state, record)

    @api.get("/collections/{name}", tags=["collections"])
    def describe_collection(name: str, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        info = _collection_info(state, _require(state, name))
        info["documents_list"] = state.store.documents(name)
        info["jobs"] = [_job_info(j) for j in state.store.jobs(name)[:20]]
        return info

    @api.delete("/collections/{name}", status_code=204, tags=["collections"])
    def delete_collection(name: str, state: ServiceState = Depends(get_state)) -> Response:
        _require(state, name)
        if state.indexer.busy(name):
            raise ApiError(409, f"collection {name!r} is being indexed; delete it when the job ends", "collection_busy")
        state.store.delete_collection(name)
        state.pipelines.forget(name)
        shutil.rmtree(state.collections.path(name), ignore_errors=True)
        return Response(status_code=204)

    @api.post("/collections/{name}/documents", status_code=202, tags=["collections"],
              form_limits={"max_files": limits.max_upload_files})
    async def upload_documents(name: str, files: list[UploadFile] = File(..., description="txt, md, html or pdf files"),
                               state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        """Store the files and start a background job that indexes them; poll ``/api/jobs/{id}``.
        A file with the name of an existing document replaces it."""
        _require(state, name)
        staged: list[tuple[UploadFile, str]] = []
        seen: set[str] = set()
        try:
            for upload in files:
                filename = safe_filename(upload.filename or "")
                if filename in seen:
                    raise UploadError(f"{filename!r} appears twice in this upload")
                seen.add(filename)
                staged.append((upload, filename))
        except UploadError as exc:
            raise ApiError(exc.status, str(exc), "invalid_upload") from None
        return await run_in_threadpool(_stage, state, name, staged)

    @api.get("/collections/{name}/documents", tags=["collections"])
    def list_documents(name: str, state: ServiceState = Depends(get_state)) -> list[dict[str, Any]]:
        _require(state, name)
        return state.store.documents(name)

    @api.get("/collections/{name}/documents/{doc_id}/file", tags=["collections"], response_class=FileResponse)
    def document_file(name: str, doc_id: str, state: ServiceState = Depends(get_state)) -> FileResponse:
        """The uploaded file itself (the source a citation points to); served as a download."""
        _require(state, name)
        row = next((d for d in state.store.documents(name) if d["doc_id"] == doc_id), None)
        job = state.store.job(row["job_id"]) if row else None
        stored = next((f["stored"] for f in (job or {}).get("files", []) if f["doc_id"] == doc_id), None)
        if stored is None:
            raise ApiError(404, f"no document {doc_id!r} in {name!r}", "document_not_found")
        path = inside(state.uploads / row["job_id"], stored)  # type: ignore[index]
        return FileResponse(path, filename=row["filename"], content_disposition_type="attachment")  # type: ignore[index]

    @api.get("/collections/{name}/passages/{passage_id:path}", tags=["collections"])
    def passage(name: str, passage_id: str, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        _require(state, name)
        try:
            collection = state.collection(name)
        except (ConvragError, OSError):
            raise ApiError(404, f"collection {name!r} has no documents yet", "passage_not_found") from None
        for p in collection.passages:
            if p.doc_id == passage_id:
                return {"collection": name, "passage_id": p.doc_id, "title": p.title, "url": p.url, "text": p.text}
        raise ApiError(404, f"no passage {passage_id!r} in {name!r}", "passage_not_found")

    # jobs ---------------------------------------------------------------------------------
    @api.get("/jobs", tags=["jobs"])
    def list_jobs(collection: str | None = None, state: ServiceState = Depends(get_state)) -> list[dict[str, Any]]:
        return [_job_info(j) for j in state.store.jobs(collection)]

    @api.get("/jobs/{job_id}", tags=["jobs"])
    def get_job(job_id: str, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        job = state.store.job(job_id)
        if job is None:
            raise ApiError(404, f"no job {job_id!r}", "job_not_found")
        return _job_info(job)

    # search -------------------------------------------------------------------------------
    @api.post("/search", tags=["search"])
    def search(body: SearchIn, state: ServiceState = Depends(get_state)) -> dict[str, Any]:  # type: ignore[valid-type]
        """Passages for a query from one or more collections, without rewriting or generation."""
        for name in body.collections:
            _require(state, name)
        ready, empty = state.pipelines.ready(body.collections)
        searches = open_collections({n: state.collection(n) for n in ready}, "hybrid", body.k)
        report = search_collections(searches, [body.query])
        hits = [
            {"collection": h.collection, "passage_id": h.passage_id, "document_id": h.document_id, "title": h.title,
             "url": h.url, "text": h.text, "score": h.score, "rank": h.rank}
            for name in ready for h in (report.results.get(name) or [[]])[0]
        ]
        return {"query": body.query, "hits": hits, "failures": report.failures, "empty_collections": empty}

    # conversations ------------------------------------------------------------------------
    @api.get("/conversations", tags=["conversations"])
    def list_conversations(state: ServiceState = Depends(get_state)) -> list[dict[str, Any]]:
        return state.store.conversations()

    @api.post("/conversations", status_code=201, tags=["conversations"])
    def create_conversation(body: ConversationIn, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        for name in body.collections:
            _require(state, name)
        strategy = body.strategy or state.settings.strategy
        from ..strategies import STRATEGIES

        if strategy not in STRATEGIES:
            raise ApiError(422, f"unknown strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}", "unknown_strategy")
        return state.store.add_conversation(body.title or "New conversation", body.collections, strategy)

    @api.get("/conversations/{conv_id}", tags=["conversations"])
    def read_conversation(conv_id: str, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        conversation = state.store.conversation(conv_id, with_turns=True)
        if conversation is None:
            raise ApiError(404, f"no conversation {conv_id!r}", "conversation_not_found")
        return conversation

    @api.delete("/conversations/{conv_id}", status_code=204, tags=["conversations"])
    def delete_conversation(conv_id: str, state: ServiceState = Depends(get_state)) -> Response:
        if not state.store.delete_conversation(conv_id):
            raise ApiError(404, f"no conversation {conv_id!r}", "conversation_not_found")
        return Response(status_code=204)

    @api.post("/conversations/{conv_id}/messages", tags=["conversations"])
    def ask(conv_id: str, body: MessageIn, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        """Ask the next question; the history is this conversation's questions and convrag's own answers."""
        conversation = state.store.conversation(conv_id, with_turns=True)
        if conversation is None:
            raise ApiError(404, f"no conversation {conv_id!r}", "conversation_not_found")
        messages: list[Message] = []
        for turn in conversation["turns"]:
            messages += [Message("user", turn["question"]), Message("agent", turn["answer"])]
        messages.append(Message("user", body.question))
        try:
            check_turn(messages, state.settings.limits)
        except TurnError as exc:
            raise ApiError(exc.status, str(exc), exc.code) from None
        config = PipelineConfig(collections=conversation["collections"], strategy=conversation["strategy"])
        try:
            with state.gate.slot():
                result = run_turn(state.pipelines, config, messages)
        except Busy as exc:
            raise ApiError(429, str(exc), "too_many_generations") from None
        title = body.question[:80] if not conversation["turns"] and conversation["title"] == "New conversation" else None
        return state.store.add_turn(conv_id, body.question, result["answer"], result["declined"], result["citations"],
                                    result["trace"], title=title)

    return api


def _stage(state: ServiceState, name: str, staged: list[tuple[UploadFile, str]]) -> dict[str, Any]:
    """Write the files under a new job's folder, then queue the job (a failure removes the folder)."""
    from .store import new_id

    folder_id = new_id()
    folder = state.uploads / f".incoming-{folder_id}"
    folder.mkdir(parents=True)
    files = []
    try:
        for number, (upload, filename) in enumerate(staged):
            stored = f"{number:05d}-{filename}"
            with open(inside(folder, stored), "wb") as out:
                size = 0
                while chunk := upload.file.read(1 << 20):
                    size += len(chunk)
                    out.write(chunk)
            files.append({"filename": filename, "doc_id": doc_id_for(filename), "stored": stored, "bytes": size})
        job = state.store.add_job(name, files)
        folder.rename(state.uploads / job["id"])
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    state.indexer.submit(job["id"], name)
    return _job_info(job)
