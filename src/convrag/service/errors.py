"""One error shape for every endpoint, readable by OpenAI clients and by people:
``{"error": {"message", "type", "code"}, "detail": message}``."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.routing import Match


class ApiError(Exception):
    def __init__(self, status: int, message: str, code: str) -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


class ErrorDetail(BaseModel):
    message: str
    type: str
    code: str


class ErrorBody(BaseModel):
    """Every error response."""

    error: ErrorDetail
    detail: str
    errors: list[dict[str, Any]] | None = None


def documented(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for error statuses, all with :class:`ErrorBody`."""
    return {s: {"model": ErrorBody} for s in statuses}


#: what any API route may answer besides its success (authentication, limits, validation, ...)
COMMON_ERRORS = documented(400, 401, 404, 405, 409, 413, 415, 422, 429)


def body(status: int, message: str, code: str) -> dict[str, object]:
    kind = "invalid_request_error" if status < 500 else "server_error"
    if status in (401, 403):
        kind = "authentication_error"
    return {"error": {"message": message, "type": kind, "code": code}, "detail": message}


def install(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else ({"Retry-After": "1"} if exc.status == 429 else None)
        return JSONResponse(body(exc.status, exc.message, exc.code), status_code=exc.status, headers=headers)

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
        message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        code = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "body_too_large"}.get(exc.status_code, "http_error")
        headers = dict(exc.headers or {})
        if exc.status_code == 405:  # every method of every route at this path, not only the first route's
            allowed: set[str] = set()
            for route in request.app.router.routes:
                match, _ = route.matches(request.scope)
                if match != Match.NONE:
                    allowed |= set(getattr(route, "methods", None) or ())
            headers["Allow"] = ", ".join(sorted(allowed))
        return JSONResponse(body(exc.status_code, message, code), status_code=exc.status_code, headers=headers or None)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        message = f"{where}: {first.get('msg', 'invalid request')}" if where else "invalid request"
        payload = body(422, message, "invalid_request")
        payload["errors"] = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", "")} for e in errors]
        return JSONResponse(payload, status_code=422)
