"""Browser-facing protections, as one ASGI middleware in front of every route.

* Cross-site requests: a page on another origin can make a browser send a ``POST`` (a form,
  or ``fetch`` with ``mode: "no-cors"``) to a server on 127.0.0.1 without reading the answer;
  that alone could upload or delete documents. A state-changing request (anything but GET,
  HEAD, OPTIONS) that a browser marks as coming from another origin (``Origin``, else
  ``Referer``, else ``Sec-Fetch-Site: cross-site``) is refused with 403 unless that origin is
  the server's own or is listed in ``allowed_origins``. Clients that are not browsers send none
  of these headers and are unaffected.
* DNS rebinding: on a loopback bind, a ``Host`` header naming anything but the server itself
  (or ``allowed_hosts``) is refused, so a foreign domain resolved to 127.0.0.1 reaches nothing.
* Every response says ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: same-origin``
  (``no-referrer`` would make browsers send ``Origin: null`` on the page's own requests).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from .errors import body

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
HEADERS = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin")]


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of a URL, lowercased; None for ``null`` or anything unparsable."""
    parts = urlsplit(url.strip())
    if not parts.scheme or not parts.netloc:
        return None
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def host_name(host: str) -> str:
    """The name part of a ``Host`` header (no port; IPv6 brackets kept)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class BrowserGuard:
    def __init__(self, app: Callable[..., Awaitable[None]], loopback: bool, bound_host: str,
                 allowed_origins: Iterable[str] = (), allowed_hosts: Iterable[str] = ()) -> None:
        self.app = app
        self.loopback = loopback
        self.allowed_origins = {o for o in (origin_of(x) for x in allowed_origins) if o}
        self.allowed_hosts = {host_name(h) for h in (*LOOPBACK_NAMES, bound_host, *allowed_hosts)}

    def refusal(self, scope: dict[str, Any]) -> tuple[int, str, str] | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        host = headers.get("host", "")
        if self.loopback and host and host_name(host) not in self.allowed_hosts:
            return 421, f"this server does not answer for host {host_name(host)!r} (add it to allowed_hosts)", "unknown_host"
        if scope.get("method", "GET") in SAFE_METHODS:
            return None
        own = {f"{scope.get('scheme', 'http')}://{host.lower()}"} if host else set()
        for header in ("origin", "referer"):
            if header in headers:
                origin = origin_of(headers[header])
                if origin is None or (origin not in own and origin not in self.allowed_origins):
                    return 403, f"cross-origin request refused ({header}: {headers[header][:100]})", "cross_origin_refused"
                return None
        if headers.get("sec-fetch-site") == "cross-site":
            return 403, "cross-origin request refused (sec-fetch-site: cross-site)", "cross_origin_refused"
        return None

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = self.refusal(scope)
        if refused is not None:
            status, message, code = refused
            payload = json.dumps(body(status, message, code)).encode()
            await send({"type": "http.response.start", "status": status,
                        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                                    *HEADERS]})
            await send({"type": "http.response.body", "body": payload})
            return

        async def with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []), *(h for h in HEADERS if h[0] not in present)]
            await send(message)

        await self.app(scope, receive, with_headers)
