"""What every request handler shares: settings, database, pipelines, indexer, generation gate."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from fastapi import Request

from ..errors import CollectionError
from ..index.collection import Collection, CollectionStore
from ..pipeline.read_ahead import ReadAhead
from .gate import GenerationGate
from .indexing import Indexer
from .pipelines import Pipelines
from .settings import ServiceSettings
from .store import Store


@dataclass
class ServiceState:
    settings: ServiceSettings
    store: Store
    collections: CollectionStore
    uploads: Path
    pipelines: Pipelines
    indexer: Indexer
    gate: GenerationGate
    read_ahead: ReadAhead = field(default_factory=ReadAhead)
    _opened: dict[str, Collection] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def collection(self, name: str) -> Collection:
        """The live version of a collection, opened once per version (opening reads every passage)."""
        version = self.collections.version(name)
        if version is None:
            raise CollectionError(f"collection {name!r} has no documents yet")
        with self._lock:
            opened = self._opened.get(name)
            if opened is None or opened.version_dir.name != version:
                opened = self._opened[name] = self.collections.open(name)
            return opened


def get_state(request: Request) -> ServiceState:
    return request.app.state.convrag
