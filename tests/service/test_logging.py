"""What ``convrag serve`` tells its operator on the terminal."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from tests.helpers import PASSPORT, upload
from tests.pdfs import make_pdf


def test_the_service_logs_its_own_work_beside_uvicorns_lines(tmp_path: Path, process_server) -> None:  # type: ignore[no-untyped-def]
    """convrag's own INFO lines (an indexing job done, an answer stopped) never reached the terminal,
    and its warnings came bare, without uvicorn's level prefix."""
    server = process_server(tmp_path / "svc")
    with httpx.Client(base_url=server.url, timeout=300) as client:
        client.post("/api/collections", json={"name": "gov"})
        job = upload(client, "gov", [("passports.md", PASSPORT.encode())])
        failed = upload(client, "gov", [("scan.pdf", make_pdf([""], title="A scanned form"))])  # no text layer
    assert job["status"] == "succeeded" and failed["status"] == "failed"
    deadline = time.monotonic() + 10
    while "indexing job " + failed["id"] not in server.log.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    lines = server.log.read_text().splitlines()
    done = [line for line in lines if f"indexing job {job['id']}:" in line]
    assert len(done) == 1 and done[0].startswith("INFO:") and "collection gov now 1 passage(s) (1 from 1 file(s))" in done[0]
    assert any(line.startswith("WARNING:") and f"indexing job {failed['id']} failed" in line for line in lines)


def test_log_level_warning_keeps_only_the_problems(tmp_path: Path, process_server) -> None:  # type: ignore[no-untyped-def]
    """Every request, job and read-ahead wrote an INFO line, with no way to quiet them."""
    server = process_server(tmp_path / "svc", args=("--log-level", "warning"))
    with httpx.Client(base_url=server.url, timeout=300) as client:
        client.post("/api/collections", json={"name": "gov"})
        job = upload(client, "gov", [("passports.md", PASSPORT.encode())])
        failed = upload(client, "gov", [("scan.pdf", make_pdf([""], title="A scanned form"))])
    assert job["status"] == "succeeded" and failed["status"] == "failed"
    deadline = time.monotonic() + 10
    while "indexing job " + failed["id"] not in server.log.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    lines = [line for line in server.log.read_text().splitlines() if line.split(":")[0].isupper()]
    assert lines and all(not line.startswith("INFO:") for line in lines), lines
    assert any(line.startswith("WARNING:") and f"indexing job {failed['id']} failed" in line for line in lines)
