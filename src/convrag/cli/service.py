"""``convrag serve``: the chat service."""

from __future__ import annotations

import copy
import errno
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.markup import escape

from ..console import console
from ..errors import ConfigError
from .app import (
    LLMUrlOpt,
    app,
)


class LogLevel(StrEnum):
    """What ``convrag serve`` logs, uvicorn's lines and convrag's alike."""

    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"


@app.command(rich_help_panel="Service")
def serve(
    config: Annotated[Optional[Path], typer.Option("--config", help="YAML settings file (see docs/service.md).")] = None,
    host: Annotated[Optional[str], typer.Option("--host", help="Address to bind (default 127.0.0.1; others need CONVRAG_API_KEY).")] = None,
    port: Annotated[Optional[int], typer.Option("--port", help="Port (default 8000).")] = None,
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", help="Collections, uploads and the database (default $CONVRAG_HOME/service).")] = None,
    llm: Annotated[Optional[str], typer.Option("--llm", help="LLM backend (default local).")] = None,
    llm_url: LLMUrlOpt = None,
    backend: Annotated[Optional[str], typer.Option("--backend", help="Where collections are kept: embedded (default) or milvus.")] = None,
    milvus_uri: Annotated[Optional[str], typer.Option("--milvus-uri", help="With --backend milvus: a Milvus Lite file (default DATA_DIR/milvus.db) or a server's http://host:19530; its token in CONVRAG_MILVUS_TOKEN.")] = None,
    log_level: Annotated[LogLevel, typer.Option("--log-level", help="What the terminal shows: info (each request, job, stop "
                                                "and read-ahead), warning (problems only), error, or debug.")] = LogLevel.info,
) -> None:
    """Start the chat service: OpenAI-compatible API, collections, conversations and the web chat."""
    import uvicorn

    from ..embeddings import load_embedder
    from ..service import ServiceSettings, create_app

    settings = ServiceSettings.load(config, host=host, port=port, data_dir=data_dir, llm=llm, llm_url=llm_url, backend=backend,
                                    milvus_uri=milvus_uri)
    settings.check()  # an exposed address is refused before anything is bound
    with listening(settings.host, settings.port) as sockets:
        application = create_app(settings)  # refuses a data folder in use first
        with console.status(f"loading the embedding model {escape(settings.embedding_model)}"):
            # refused now rather than at the first upload, and the first question does not wait for it
            load_embedder(settings.embedding_model)
        kept = f"; collections in Milvus at {settings.milvus_target}" if settings.backend == "milvus" else ""
        console.out(f"convrag serving on http://{settings.host}:{settings.port} (data in {settings.data_dir}{kept}; Ctrl-C stops it)")
        server = uvicorn.Server(uvicorn.Config(application, host=settings.host, port=settings.port, log_level=log_level.value,
                                               log_config=log_config(log_level.value)))
        try:
            server.run(sockets=sockets)
        except KeyboardInterrupt:  # as uvicorn.run ends on a Ctrl-C that comes before its own handler
            pass
    if not server.started:
        raise typer.Exit(3)


@contextmanager
def listening(host: str, port: int) -> Iterator[list[socket.socket]]:
    """The service's sockets, bound before the models load and the service starts: uvicorn bound
    them last, so a port already in use was reported after "convrag serving on …", once the service
    had started and begun reading ahead. Bound as asyncio binds a host for uvicorn: one socket per
    address the name resolves to (``localhost`` may be 127.0.0.1 and ::1), IPv6 ones for IPv6
    only. Closed when the service ends."""
    sockets: list[socket.socket] = []
    try:
        addresses = {(family, address) for family, _, _, _, address in
                     socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)}
        for family, address in sorted(addresses, key=str):
            sock = socket.socket(family, socket.SOCK_STREAM)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: a port in TIME_WAIT is free
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(2048)  # claimed now (uvicorn's backlog): a client that comes while the models load waits
    except OSError as exc:
        for sock in sockets:
            sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(f"port {port} on {host} is in use (another convrag serve?); choose another with --port") from None
        raise ConfigError(f"cannot listen on {host} port {port}: {exc.strerror or exc}") from None
    try:
        yield sockets
    finally:
        for sock in sockets:
            sock.close()


def log_config(level: str = "info") -> dict[str, Any]:
    """uvicorn's logging, with convrag's own loggers through the same handler at ``level``: without
    it only their warnings reached the terminal, bare, and none of what the service does on its own
    (indexing jobs done, answers stopped because their client went away, reading ahead)."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["convrag"] = {"handlers": ["default"], "level": level.upper(), "propagate": False}
    return config
