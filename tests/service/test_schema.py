"""The OpenAPI description matches the behaviour: schemathesis generates requests from it against
a running ``convrag serve`` (real process, real local model configured) and checks every response
(status documented, body matches its schema, no server error, Allow headers, ...)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

ST = str(Path(sys.executable).with_name("st"))
UPLOAD = "/api/collections/{name}/documents"


def schemathesis(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ST, "run", f"{url}/openapi.json", "--checks", "all", "--max-examples", "15", "--workers", "1",
         "--generation-deterministic", "--request-timeout", "120", "--no-color", *args],
        capture_output=True, text=True, timeout=900,
    )


def test_openapi_matches_the_running_server(tmp_path: Path, process_server) -> None:  # type: ignore[no-untyped-def]
    server = process_server(tmp_path / "svc")
    with httpx.Client(base_url=server.url, timeout=60) as client:  # some data, so that not everything is a 404
        client.post("/api/collections", json={"name": "gov"})
        client.post("/api/conversations", json={"collections": ["gov"]})
    everything_else = schemathesis(server.url, "--exclude-path", UPLOAD)
    assert everything_else.returncode == 0, everything_else.stdout[-6000:]
    # Uploads: which files are acceptable (type, readable text) cannot be said in a schema, so a
    # schema-valid upload may be refused; every other check still applies.
    uploads = schemathesis(server.url, "--include-path", UPLOAD, "--exclude-checks", "positive_data_acceptance")
    assert uploads.returncode == 0, uploads.stdout[-6000:]
    assert "Selected: 2/" in uploads.stdout and "Tested: 2" in uploads.stdout  # GET and POST of the path
