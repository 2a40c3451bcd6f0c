"""The service under load, measured against a real ``convrag serve`` process on 127.0.0.1, with
its collections embedded (folders) or in Milvus (``backend``: a Milvus Lite file in its data folder).

1. Indexing: ``documents`` files (passages of the bundled MT-RAG sample, one file each) uploaded
   through the API in batches; wall time until every job succeeded, and the server's peak memory.
2. Load: ``conversations`` concurrent conversations x ``turns`` turns of standalone questions
   (the progressive strategy's Stage 1: no rewrite). One conversation is run first to put its
   answers in the LLM cache; every conversation asks the same questions in the same order, so
   each answer prompt (passages and history) is one the cache holds, and the run measures the
   service (HTTP, database, search, merge, cache) rather than the model.
3. The same load while one extra request needs a real, uncached generation: it must not block
   the others (the model runs in a worker thread; cached answers and token counts do not wait
   for it).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psutil

from ..data.layout import MTRAGData, sample_root
from ..strategies.standalone import standalone_verdict
from .timing import machine_description, percentiles


def sample_documents(count: int) -> list[tuple[str, bytes]]:
    """``count`` Markdown files made of the bundled sample's passages, taken round-robin over the domains."""
    data = MTRAGData.discover(sample_root())
    streams = []
    for domain in data.domains:
        with gzip.open(data.corpus_path(domain), "rt", encoding="utf-8") as handle:
            streams.append([json.loads(line) for line in handle])
    files: list[tuple[str, bytes]] = []
    for i in range(max(len(s) for s in streams)):
        for domain, rows in zip(data.domains, streams):
            if i < len(rows) and len(files) < count:
                row = rows[i]
                files.append((f"{domain}-{i:05d}.md", f"# {row.get('title') or domain}\n\n{row['text']}\n".encode()))
    if len(files) < count:
        raise ValueError(f"the sample has only {len(files)} passages")
    return files


def standalone_questions(n: int) -> list[str]:
    data = MTRAGData.discover(sample_root())
    questions = [t.question for d in data.domains for t in data.tasks(d) if standalone_verdict(t.question).standalone]
    return list(dict.fromkeys(questions))[:n]


class Server:
    def __init__(self, data_dir: Path, port: int, env: dict[str, str], backend: str = "embedded") -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.log = open(data_dir.parent / "server.log", "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "convrag", "serve", "--data-dir", str(data_dir), "--port", str(port),
                                      "--backend", backend],
                                     env={**os.environ, **env}, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{self.url}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start; see {self.log.name}")
            time.sleep(0.2)
        self.process = psutil.Process(self.proc.pid)

    def rss_mb(self) -> float:
        return self.process.memory_info().rss / 2**20

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)
        self.log.close()


class PeakMemory:
    """Samples a process's resident memory every 50 ms on a thread."""

    def __init__(self, server: Server) -> None:
        self.server, self.peak, self._stop = server, server.rss_mb(), threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, self.server.rss_mb())

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def index_documents(client: httpx.Client, server: Server, files: list[tuple[str, bytes]], batch: int) -> dict[str, Any]:
    client.post("/api/collections", json={"name": "docs"}).raise_for_status()
    before = server.rss_mb()
    start = time.perf_counter()
    with PeakMemory(server) as memory:
        jobs = []
        it = iter(files)
        while chunk := list(islice(it, batch)):
            response = client.post("/api/collections/docs/documents", files=[("files", f) for f in chunk])
            response.raise_for_status()
            jobs.append(response.json()["id"])
        for job_id in jobs:
            while (job := client.get(f"/api/jobs/{job_id}").json())["status"] not in ("succeeded", "failed"):
                time.sleep(0.2)
            if job["status"] != "succeeded":
                raise RuntimeError(f"indexing job failed: {job['error']}")
    seconds = time.perf_counter() - start
    info = client.get("/api/collections/docs").json()
    return {"documents": info["documents"], "passages": info["passages"], "requests": len(jobs), "seconds": round(seconds, 1),
            "documents_per_s": round(len(files) / seconds, 1), "rss_before_mb": round(before), "peak_rss_mb": round(memory.peak)}


def converse(url: str, questions: list[str]) -> tuple[list[float], int]:
    """One conversation; per-turn latency in seconds and the number of errors."""
    latencies, errors = [], 0
    with httpx.Client(base_url=url, timeout=600) as client:
        conv = client.post("/api/conversations", json={"collections": ["docs"]}).json()
        for question in questions:
            start = time.perf_counter()
            response = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": question})
            latencies.append(time.perf_counter() - start)
            errors += response.status_code != 200
    return latencies, errors


def load(url: str, questions: list[str], conversations: int) -> dict[str, Any]:
    start = time.perf_counter()
    with ThreadPoolExecutor(conversations) as pool:
        results = list(pool.map(lambda _: converse(url, questions), range(conversations)))
    seconds = time.perf_counter() - start
    latencies = np.asarray([x for lat, _ in results for x in lat]) * 1000
    stats = percentiles(latencies)
    return {"requests": int(len(latencies)), "errors": sum(e for _, e in results), "seconds": round(seconds, 2),
            "throughput_rps": round(len(latencies) / seconds, 1), "p50_ms": round(stats["p50"], 1),
            "p95_ms": round(stats["p95"], 1), "max_ms": round(float(latencies.max()), 1)}


def run_service_benchmark(out: Path, documents: int = 1000, conversations: int = 20, turns: int = 10, batch: int = 250,
                          port: int = 8931, backend: str = "embedded") -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    data_dir = out / "data"
    shutil.rmtree(data_dir, ignore_errors=True)
    env = {"CONVRAG_LIMITS__MAX_CONCURRENT_GENERATIONS": str(conversations + 4), "CONVRAG_LIMITS__MAX_UPLOAD_FILES": str(batch)}
    server = Server(data_dir, port, env, backend)
    report: dict[str, Any] = {"machine": machine_description(), "date": time.strftime("%Y-%m-%d"), "backend": backend,
                              "conversations": conversations, "turns": turns}
    try:
        with httpx.Client(base_url=server.url, timeout=600) as client:
            report["indexing"] = index_documents(client, server, sample_documents(documents), batch)
        questions = standalone_questions(turns)
        warm, warm_errors = converse(server.url, questions)  # fills the LLM cache (real generations)
        report["warm_conversation"] = {"seconds": round(sum(warm), 1), "errors": warm_errors}
        report["load"] = load(server.url, questions, conversations)

        slow: dict[str, Any] = {}

        def uncached() -> None:
            unique = f"What does the documentation say about account limits, checked at {time.time():.6f}?"
            latency, errors = converse(server.url, [unique])
            slow.update(seconds=round(latency[0], 2), errors=errors)

        thread = threading.Thread(target=uncached)
        thread.start()
        time.sleep(1.0)  # the uncached generation is under way
        report["load_during_slow_generation"] = load(server.url, questions, conversations)
        report["load_during_slow_generation"]["slow_still_running_at_end"] = thread.is_alive()
        thread.join()
        report["slow_generation"] = slow
        report["server_rss_mb_end"] = round(server.rss_mb())
    finally:
        server.stop()
    (out / "service.json").write_text(json.dumps(report, indent=2))
    return report
