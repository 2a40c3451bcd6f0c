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


def test_a_damaged_database_is_one_clear_error_is_left_as_it_was_and_frees_the_folder(tmp_path: Path) -> None:
    """The database holds the users' conversations: the service refuses to start over a damaged one and
    names it (not a traceback), neither moves nor rebuilds it, and leaves the folder free for the next start."""
    settings = ServiceSettings.load(data_dir=tmp_path / "svc")
    database = tmp_path / "svc" / "convrag.sqlite"
    database.parent.mkdir()
    damaged = b"not a database: a file cut short by a failing disk " * 100
    database.write_bytes(damaged)
    with pytest.raises(ConfigError, match=r"the service database .*convrag\.sqlite cannot be opened .*left as it is"):
        create_app(settings, llm=ScriptedLLM())  # the database's own error, not the lock's
    assert database.read_bytes() == damaged
    database.unlink()  # the user moves it away: a service over the folder starts, empty
    with ThreadServer(settings, ScriptedLLM()) as server, httpx.Client(base_url=server.url) as client:
        assert client.get("/api/conversations").json() == []
