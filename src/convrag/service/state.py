"""What every request handler shares: settings, database, pipelines, indexer, generation gate."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fastapi import Request

from ..index.collection import CollectionStore
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


def get_state(request: Request) -> ServiceState:
    return request.app.state.convrag
