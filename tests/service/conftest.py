"""Real servers for the service tests: uvicorn on 127.0.0.1 in a thread (with an injected LLM) or
``convrag serve`` in a subprocess (for restarts and kills)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from convrag.service import ServiceSettings, create_app


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ThreadServer:
    """``create_app`` served by uvicorn in a background thread."""

    def __init__(self, settings: ServiceSettings, llm: Any) -> None:
        self.app = create_app(settings, llm=llm)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.app.state.convrag.store.close()


class ProcessServer:
    """``convrag serve`` as a child process; ``kill()`` sends SIGKILL (a crash)."""

    def __init__(self, data_dir: Path, extra_env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = data_dir.parent / f"server-{self.port}.log"
        env = {**os.environ, **(extra_env or {})}
        self.args = [sys.executable, "-m", "convrag", "serve", "--data-dir", str(data_dir), "--port", str(self.port), *args]
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> ProcessServer:
        self.handle = open(self.log, "ab")
        self.proc = subprocess.Popen(self.args, env=self.env, stdout=self.handle, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/api/health", timeout=2, headers=self.auth_headers()).status_code in (200, 401):
                    return self
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.2)

    def auth_headers(self) -> dict[str, str]:
        key = self.env.get("CONVRAG_API_KEY")
        return {"Authorization": f"Bearer {key}"} if key else {}

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.handle.close()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.handle.close()


def wait_job(client: httpx.Client, job_id: str, timeout: float = 300) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(f"/api/jobs/{job_id}").json()
        if job["status"] in ("succeeded", "failed"):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not finish")


@pytest.fixture
def settings(tmp_path: Path) -> ServiceSettings:
    return ServiceSettings.load(data_dir=tmp_path / "service")


@pytest.fixture
def process_server(tmp_path: Path) -> Iterator[Any]:
    """A factory of ``convrag serve`` processes, all stopped at the end."""
    started: list[ProcessServer] = []

    def make(data_dir: Path, env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> ProcessServer:
        server = ProcessServer(data_dir, env, args)
        started.append(server)
        return server.start()

    yield make
    for server in started:
        server.stop()


def milvus_indexed_elsewhere(path: Path) -> str:
    """A Milvus Lite file as ``convrag index harbour.jsonl -c harbour --backend milvus --milvus-uri path``
    leaves it ("harbour": one passage on mooring fees), plus "other", a collection of another
    program's own schema; its uri."""
    from pymilvus import DataType

    from convrag.backends.milvus import MilvusStore, milvus_name
    from convrag.embeddings import load_embedder
    from convrag.types import Passage

    embedder = load_embedder()
    indexed = MilvusStore(str(path))
    try:
        indexed.create("harbour", embedder.name, embedder.dimension).ingest(
            [Passage("moorings-0-0", "Mooring in the harbour costs 40 dollars a night.", "Moorings")], embedder)
        schema = indexed.client.create_schema(auto_id=False)
        schema.add_field("id", DataType.INT64, is_primary=True)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=4)
        indexed.client.create_collection(milvus_name("other"), schema=schema)
    finally:
        indexed.close()  # a Milvus Lite file serves one process at a time
    return str(path)
