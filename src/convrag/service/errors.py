"""One error shape for every endpoint, readable by OpenAI clients and by people:
``{"error": {"message", "type", "code"}, "detail": message}``."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException


class ApiError(Exception):
    def __init__(self, status: int, message: str, code: str) -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


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
        code = {404: "not_found", 405: "method_not_allowed", 413: "body_too_large"}.get(exc.status_code, "http_error")
        return JSONResponse(body(exc.status_code, message, code), status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        message = f"{where}: {first.get('msg', 'invalid request')}" if where else "invalid request"
        payload = body(422, message, "invalid_request")
        payload["errors"] = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", "")} for e in errors]
        return JSONResponse(payload, status_code=422)
