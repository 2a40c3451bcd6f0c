"""Everything survives a restart; a kill during indexing leaves the collection as it was and
the job failed, not half-applied."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from convrag.service import ServiceSettings
from tests.helpers import PASSPORT, ScriptedLLM, upload

from .conftest import ThreadServer, wait_job


def test_restart_keeps_collections_conversations_and_traces(tmp_path: Path) -> None:
    settings = ServiceSettings.load(data_dir=tmp_path / "svc")
    with ThreadServer(settings, ScriptedLLM(answer=["It costs 130 dollars [1]."])) as server, \
            httpx.Client(base_url=server.url, timeout=120) as client:
        client.post("/api/collections", json={"name": "gov"})
        upload(client, "gov", [("passports.md", PASSPORT.encode())])
        conv = client.post("/api/conversations", json={"collections": ["gov"]}).json()
        turn = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "How much does passport renewal cost?"}).json()
    with ThreadServer(settings, ScriptedLLM()) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        stored = client.get(f"/api/conversations/{conv['id']}").json()
        assert stored["turns"][0]["answer"] == turn["answer"] and stored["turns"][0]["trace"] == turn["trace"]
        assert stored["turns"][0]["citations"] == turn["citations"]
        info = client.get("/api/collections/gov").json()
        assert info["passages"] == 1 and info["jobs"][0]["status"] == "succeeded"
        hits = client.post("/api/search", json={"collections": ["gov"], "query": "passport renewal", "k": 1}).json()["hits"]
        assert hits[0]["document_id"] == "passports"


def _big_upload(count: int) -> list[tuple[str, bytes]]:
    words = "harbour boats sailing permits mooring fees inspection season".split()
    return [(f"doc{i:04d}.txt", " ".join(f"{words[(i + j) % len(words)]}{j % 97}" for j in range(500)).encode())
            for i in range(count)]


def test_kill_during_indexing_leaves_the_collection_unchanged(tmp_path: Path, process_server) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "svc"
    server = process_server(data)
    with httpx.Client(base_url=server.url, timeout=300) as client:
        client.post("/api/collections", json={"name": "gov"})
        assert upload(client, "gov", [("passports.md", PASSPORT.encode())])["status"] == "succeeded"
        before = client.get("/api/collections/gov").json()
        files = _big_upload(200)  # about 800 passages: seconds of embedding
        response = client.post("/api/collections/gov/documents", files=[("files", f) for f in files])
        job_id = response.json()["id"]
        deadline = time.monotonic() + 300
        while True:  # kill in the middle of embedding
            job = client.get(f"/api/jobs/{job_id}").json()
            if job["status"] == "running" and job["stage"].startswith("gov: embedding"):
                break
            assert job["status"] in ("queued", "running") and time.monotonic() < deadline, job
            time.sleep(0.05)
    server.kill()

    server = process_server(data)
    with httpx.Client(base_url=server.url, timeout=300) as client:
        job = client.get(f"/api/jobs/{job_id}").json()
        assert job["status"] == "failed" and "interrupted" in job["error"]
        after = client.get("/api/collections/gov").json()
        assert after["version"] == before["version"] and after["passages"] == before["passages"] == 1
        assert [d["doc_id"] for d in client.get("/api/collections/gov/documents").json()] == ["passports"]
        assert not (data / "uploads" / job_id).exists()
        # the collection still answers, and a new upload still works
        hits = client.post("/api/search", json={"collections": ["gov"], "query": "passport renewal", "k": 3}).json()["hits"]
        assert [h["document_id"] for h in hits] == ["passports"]
        retry = client.post("/api/collections/gov/documents", files=[("files", f) for f in files[:3]]).json()
        assert wait_job(client, retry["id"])["status"] == "succeeded"
        assert client.get("/api/collections/gov").json()["documents"] == 4
