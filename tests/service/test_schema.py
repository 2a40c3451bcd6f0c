"""The OpenAPI description matches the behaviour: schemathesis generates requests from it against
a running ``convrag serve`` (real process, real local model configured) and checks every response
(status documented, body matches its schema, no server error, Allow headers, ...)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

ST = str(Path(sys.executable).with_name("st"))
UPLOADS = r"^/api/collections/\{name\}/documents(/\{doc_id\})?$"  # adding and replacing documents


# A field over its length limit is a 413 like every other size limit (README, docs/service.md), so
# a schema-violating request may also be refused with 413.
CONFIG = """
[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429"]
"""


def schemathesis(url: str, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ST, "--config-file", str(config), "run", f"{url}/openapi.json", "--checks", "all", "--max-examples", "15", "--workers", "1",
         "--generation-deterministic", "--request-timeout", "120", "--no-color", *args],
        capture_output=True, text=True, timeout=900,
    )


def test_openapi_matches_the_running_server(tmp_path: Path, process_server) -> None:  # type: ignore[no-untyped-def]
    server = process_server(tmp_path / "svc")
    with httpx.Client(base_url=server.url, timeout=60) as client:  # some data, so that not everything is a 404
        client.post("/api/collections", json={"name": "gov"})
        client.post("/api/conversations", json={"collections": ["gov"]})
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG)
    everything_else = schemathesis(server.url, config, "--exclude-path-regex", UPLOADS)
    assert everything_else.returncode == 0, everything_else.stdout[-6000:]
    # Uploads: which files are acceptable (type, readable text) cannot be said in a schema, so a
    # schema-valid upload may be refused; every other check still applies.
    uploads = schemathesis(server.url, config, "--include-path-regex", UPLOADS, "--exclude-checks", "positive_data_acceptance")
    assert uploads.returncode == 0, uploads.stdout[-6000:]
    assert "Selected: 4/" in uploads.stdout and "Tested: 4" in uploads.stdout  # GET, POST, PUT and DELETE of the two paths
