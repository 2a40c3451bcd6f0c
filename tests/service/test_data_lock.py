"""One service per data folder: a second one is refused before it touches the folder, and the
folder is free again once the first has stopped."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from convrag.errors import ConfigError
from convrag.service import ServiceSettings, create_app
from tests.helpers import ScriptedLLM

from .conftest import ThreadServer


def test_a_second_service_on_the_same_folder_is_refused_and_the_first_keeps_its_uploads(tmp_path: Path) -> None:
    settings = ServiceSettings.load(data_dir=tmp_path / "svc")
    with ThreadServer(settings, ScriptedLLM()) as server:
        in_flight = tmp_path / "svc" / "uploads" / ".incoming-abc"  # an upload the first service is receiving
        in_flight.mkdir()
        with pytest.raises(ConfigError, match="another convrag service is using .*svc"):
            create_app(settings, llm=ScriptedLLM())
        assert in_flight.is_dir()  # refused before it cleared the folder's leftovers
        with httpx.Client(base_url=server.url) as client:
            assert client.get("/api/health").status_code == 200  # the first one still serves
    # stopped: the folder is free, and a new service over it starts
    with ThreadServer(settings, ScriptedLLM()) as again, httpx.Client(base_url=again.url) as client:
        assert client.get("/api/health").status_code == 200


def test_a_service_that_cannot_start_leaves_the_folder_free(tmp_path: Path) -> None:
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "convrag.sqlite").write_bytes(b"not a database" * 100)
    settings = ServiceSettings.load(data_dir=tmp_path / "svc")
    with pytest.raises(Exception) as failed:
        create_app(settings, llm=ScriptedLLM())
    assert not isinstance(failed.value, ConfigError)  # the database's own error, not the lock's
    (tmp_path / "svc" / "convrag.sqlite").unlink()
    create_app(settings, llm=ScriptedLLM()).state.convrag.store.close()
