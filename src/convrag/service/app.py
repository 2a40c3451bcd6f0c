"""The FastAPI application: ``create_app(settings)`` wires the database, collections, pipelines,
indexer and routes. ``llm`` may be given (tests, embedding in another program); otherwise the
settings' backend is made with the persistent completion cache."""

from __future__ import annotations

import logging
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from filelock import FileLock
from swagger_ui_bundle import swagger_ui_path

from .. import __version__
from ..errors import BackendUnavailable
from ..index.collection import SERVICE_DATABASE
from ..llm.base import LLM
from ..pipeline.read_ahead import ReadAhead
from . import errors, openai_api
from .auth import require_key
from .backends import make_collections
from .body_limit import BodyLimit
from .data_lock import lock_data_dir
from .gate import GenerationGate
from .indexing import Indexer
from .pipelines import Pipelines
from .routes import api_router
from .security import BrowserGuard
from .settings import ServiceSettings
from .state import ServiceState
from .store import Store

log = logging.getLogger("convrag.service")

CSP = "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
# Swagger UI sets inline styles and shows data: images; its scripts are still only our own files.
DOCS_CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
            "object-src 'none'; base-uri 'none'; frame-ancestors 'none'")
DOCS_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>convrag API</title>
<link rel="stylesheet" href="/docs-assets/swagger-ui.css"><link rel="icon" href="/docs-assets/favicon-32x32.png"></head>
<body><div id="swagger-ui"></div>
<script src="/docs-assets/swagger-ui-bundle.js"></script><script src="/static/docs.js"></script></body></html>
"""


def _make_llm(settings: ServiceSettings) -> LLM:
    from ..llm import make_llm

    options: dict[str, Any] = {}
    if settings.llm.startswith("openai") and settings.llm_url:
        options["base_url"] = settings.llm_url
    if settings.llm.partition(":")[0] == "local":
        options["slots"] = settings.llm_slots
    return make_llm(settings.llm, **options)


def create_app(settings: ServiceSettings | None = None, llm: LLM | None = None) -> FastAPI:
    settings = settings or ServiceSettings.load()
    settings.check()
    data = Path(settings.data_dir)
    data.mkdir(parents=True, exist_ok=True)
    lock = lock_data_dir(data)  # before anything in the folder is touched
    try:
        return _create_app(settings, llm, data, lock)
    except BaseException:  # a database or model that cannot be opened: the folder is free again
        lock.release()
        raise


def _create_app(settings: ServiceSettings, llm: LLM | None, data: Path, lock: FileLock) -> FastAPI:
    uploads = data / "uploads"
    uploads.mkdir(exist_ok=True)
    for leftover in uploads.glob(".incoming-*"):  # an upload cut off before its job was recorded
        shutil.rmtree(leftover, ignore_errors=True)
    store = Store(data / SERVICE_DATABASE)
    collections = make_collections(settings)
    try:
        collections.keep([record["name"] for record in store.collections()])
    except BackendUnavailable as exc:  # not a reason to refuse to start: the next upload marks its collection
        log.warning("could not mark the service's collections in %s: %s", collections.kind, exc.public)
    indexer = Indexer(store, collections, uploads, public_only=not settings.allow_private_web,
                      max_web_bytes=settings.limits.max_web_bytes)
    pipelines = Pipelines(settings, collections, llm or _make_llm(settings))
    indexer.on_change = pipelines.forget
    state = ServiceState(settings, store, collections, uploads, pipelines, indexer,
                         GenerationGate(settings.limits.max_concurrent_generations), ReadAhead(settings.read_ahead))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        indexer.start()
        state.read_ahead_at_start()
        yield
        state.read_ahead.stop()
        indexer.stop()
        collections.close()
        lock.release()  # another service may use the folder now

    app = FastAPI(title="convrag", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Conversational RAG: OpenAI-compatible chat over your collections, with citations and "
                              "the trace of every decision.")
    app.state.convrag = state
    errors.install(app)
    app.add_middleware(BodyLimit, max_body=settings.limits.max_body_bytes, max_upload=settings.limits.max_upload_bytes)
    app.add_middleware(BrowserGuard, loopback=settings.loopback, bound_host=settings.host,
                       allowed_origins=settings.allowed_origins, allowed_hosts=settings.allowed_hosts)
    app.include_router(openai_api.router(), dependencies=[Depends(require_key)], responses=errors.COMMON_ERRORS)
    app.include_router(api_router(settings.limits), dependencies=[Depends(require_key)], responses=errors.COMMON_ERRORS)
    static = resources.files("convrag.service") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    app.mount("/docs-assets", StaticFiles(directory=swagger_ui_path), name="docs-assets")

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    def docs() -> HTMLResponse:
        """Swagger UI from local files (no CDN: it works offline), under a Content-Security-Policy."""
        return HTMLResponse(DOCS_PAGE, headers={"Content-Security-Policy": DOCS_CSP, "X-Frame-Options": "DENY"})

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def page() -> HTMLResponse:
        # Defence in depth beside the page's text-only rendering: no inline or foreign scripts.
        return HTMLResponse((static / "index.html").read_text(encoding="utf-8"),
                            headers={"Content-Security-Policy": CSP, "X-Frame-Options": "DENY"})

    return app
