"""Request-size limits as JSON 413 errors: a declared ``Content-Length`` over the limit is refused
before anything is read; a body sent without one is counted while it is read. Uploads
(``POST /api/collections/{name}/documents`` and ``PUT .../documents/{doc_id}``) have their own,
larger limit."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.exceptions import HTTPException

from .errors import body

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class BodyLimit:
    def __init__(self, app: Callable[..., Awaitable[None]], max_body: int, max_upload: int) -> None:
        self.app, self.max_body, self.max_upload = app, max_body, max_upload

    def limit_for(self, path: str) -> int:
        parts = path.strip("/").split("/")
        upload = len(parts) in (4, 5) and parts[:2] == ["api", "collections"] and parts[3] == "documents"
        return self.max_upload if upload else self.max_body

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            payload = json.dumps(body(413, f"request body of {int(declared):,} bytes is over the limit of {limit:,}",
                                      "body_too_large")).encode()
            await send({"type": "http.response.start", "status": 413,
                        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
            await send({"type": "http.response.body", "body": payload})
            return
        received = 0

        async def counted() -> dict[str, Any]:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise HTTPException(413, f"request body is over the limit of {limit:,} bytes")
            return message

        await self.app(scope, counted, send)
