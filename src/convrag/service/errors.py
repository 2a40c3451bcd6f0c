"""One error shape for every endpoint, readable by OpenAI clients and by people:
``{"error": {"message", "type", "code"}, "detail": message}``."""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException

log = logging.getLogger("convrag.service")


class ApiError(Exception):
    """An error answered as :class:`ErrorBody`; ``errors`` lists its parts where there are several
    (an upload's refused files, each ``{"file", "code", "message"}``)."""

    def __init__(self, status: int, message: str, code: str, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.errors = status, message, code, errors


class ErrorDetail(BaseModel):
    message: str
    type: str
    code: str


class ErrorBody(BaseModel):
    """Every error response."""

    error: ErrorDetail
    detail: str
    #: a request's invalid fields (``loc``, ``msg``), or an upload's refused files (``file``, ``code``, ``message``)
    errors: list[dict[str, Any]] | None = None


def documented(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for error statuses, all with :class:`ErrorBody`."""
    return {s: {"model": ErrorBody} for s in statuses}


#: what any API route may answer besides its success (authentication, origin, limits, validation, model down, ...)
COMMON_ERRORS = documented(400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 500, 503)

#: fields whose "too long" is a 413 like every other size limit (not a 422)
_SIZE_LIMITED = {"question", "query", "content"}


def error_for(exc: BaseException) -> tuple[int, str, str]:
    """(status, message safe to show, code) for an exception raised while serving a request."""
    from ..errors import BackendUnavailable, CollectionDamaged, ConvragError
    from ..generate.answer import AnswerFailed
    from .store import ConversationChanged

    if isinstance(exc, ApiError):
        return exc.status, exc.message, exc.code
    if isinstance(exc, ConversationChanged):
        return 409, str(exc), "conversation_changed"
    if isinstance(exc, AnswerFailed):  # a prompt the model cannot read at once is the request's size, not a passing failure
        return (413, str(exc), "prompt_too_long") if exc.too_long else (503, str(exc), "llm_unavailable")
    if isinstance(exc, BackendUnavailable):  # Milvus down or unreachable: passing, not the request's fault; no address shown
        return 503, exc.public, "backend_unavailable"
    if isinstance(exc, CollectionDamaged):  # the server's files, not the request, are at fault
        return 500, str(exc), "collection_damaged"
    if isinstance(exc, ConvragError):
        return 400, str(exc), "invalid_request"
    return 500, "internal error; the server log has the details", "internal_error"


def body(status: int, message: str, code: str) -> dict[str, object]:
    kind = "invalid_request_error" if status < 500 else "server_error"
    if status in (401, 403):
        kind = "authentication_error"
    return {"error": {"message": message, "type": kind, "code": code}, "detail": message}


def _template(path: str, greedy_last: bool) -> re.Pattern[str]:
    """A regular expression for an OpenAPI path template: ``{name}`` is one segment; with
    ``greedy_last`` the last parameter may span several, wherever it stands (OpenAPI drops the
    ``:path`` of a route such as ``/passages/{id:path}`` or ``/documents/{doc_id:path}/file``)."""
    out, position = [], 0
    params = list(re.finditer(r"\{([^}:]+)(:path)?\}", path))
    for m in params:
        out.append(re.escape(path[position:m.start()]))
        out.append(".+" if m.group(2) or (greedy_last and m is params[-1]) else "[^/]+")
        position = m.end()
    out.append(re.escape(path[position:]))
    return re.compile("^" + "".join(out) + "$")


def allowed_methods(app: FastAPI, path: str) -> list[str]:
    """The methods the API documents for ``path`` (HEAD with GET), for a 405's ``Allow`` header:
    templates matching segment by segment, else the most specific one whose last parameter
    spans the rest of the path."""
    templates = getattr(app.state, "convrag_path_templates", None)
    if templates is None:
        templates = [(_template(p, False), _template(p, True), len(re.sub(r"\{[^}]*\}", "", p)), {m.upper() for m in ops})
                     for p, ops in app.openapi().get("paths", {}).items()]
        app.state.convrag_path_templates = templates
    matches = [(literal, ops) for strict, _, literal, ops in templates if strict.match(path)]
    if not matches:
        greedy = [(literal, ops) for _, loose, literal, ops in templates if loose.match(path)]
        best = max((literal for literal, _ in greedy), default=0)
        matches = [(literal, ops) for literal, ops in greedy if literal == best]
    methods: set[str] = set().union(*(ops for _, ops in matches)) if matches else set()
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)


def _headers(status: int) -> dict[str, str] | None:
    return {401: {"WWW-Authenticate": "Bearer"}, 429: {"Retry-After": "1"}, 503: {"Retry-After": "5"}}.get(status)


def install(app: FastAPI) -> None:
    from ..errors import ConvragError
    from ..generate.answer import AnswerFailed

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        payload = body(exc.status, exc.message, exc.code)
        if exc.errors is not None:
            payload["errors"] = exc.errors
        return JSONResponse(payload, status_code=exc.status, headers=_headers(exc.status))

    @app.exception_handler(AnswerFailed)
    async def _model_down(request: Request, exc: AnswerFailed) -> JSONResponse:
        log.warning("the language model failed: %s", exc.detail)  # the detail (backend URL, reason) stays in the log
        status, message, code = error_for(exc)
        return JSONResponse(body(status, message, code), status_code=status, headers=_headers(status))

    @app.exception_handler(ConvragError)
    async def _convrag_error(request: Request, exc: ConvragError) -> JSONResponse:
        """What a route did not turn into an answer itself: said as JSON with its status, not as a bare
        "Internal Server Error" (a damaged collection's turn, for one)."""
        status, message, code = error_for(exc)
        if status >= 500:
            log.error("%s %s: %s", request.method, request.url.path, message)
        return JSONResponse(body(status, message, code), status_code=status, headers=_headers(status))

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
        message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        status = exc.status_code
        if status == 400 and message.startswith("Too many files"):  # the multipart parser's max_files
            status = 413
        code = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "body_too_large"}.get(status, "http_error")
        if message.startswith("Too many files"):
            code = "too_many_files"
        headers = dict(exc.headers or {})
        if exc.status_code == 405:  # every method of every route at this path, not only the first route's
            headers["Allow"] = ", ".join(allowed_methods(request.app, request.url.path))
        return JSONResponse(body(status, message, code), status_code=status, headers=headers or None)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        message = f"{where}: {first.get('msg', 'invalid request')}" if where else "invalid request"
        status, code = 422, "invalid_request"
        too_long = [e for e in errors if e.get("type") == "string_too_long" and set(map(str, e.get("loc", ()))) & _SIZE_LIMITED]
        if too_long:
            status, code = 413, "question_too_long"
            limit = (too_long[0].get("ctx") or {}).get("max_length")
            message = f"the question is longer than the limit of {limit:,} characters" if limit else message
        payload = body(status, message, code)
        payload["errors"] = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", "")} for e in errors]
        return JSONResponse(payload, status_code=status)
