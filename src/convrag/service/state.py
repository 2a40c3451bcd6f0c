"""What every request handler shares: settings, database, pipelines, indexer, generation gate."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fastapi import Request

from ..pipeline.read_ahead import ReadAhead
from ..types import Message
from .backends import ServiceCollections
from .gate import GenerationGate, OneTurnAtATime
from .indexing import Indexer
from .pipelines import Pipelines
from .settings import PipelineConfig, ServiceSettings
from .store import Store


@dataclass
class ServiceState:
    settings: ServiceSettings
    store: Store
    collections: ServiceCollections
    uploads: Path
    pipelines: Pipelines
    indexer: Indexer
    gate: GenerationGate
    read_ahead: ReadAhead = field(default_factory=ReadAhead)
    turns_in_flight: OneTurnAtATime = field(default_factory=OneTurnAtATime)

    def read_ahead_for(self, config: PipelineConfig, messages: Sequence[Message]) -> bool:
        """Have the next prompt of a conversation whose turns so far are ``messages`` read ahead up
        to its passages while the user types: a new conversation's (the instructions and worked
        examples, most of a first turn's reading) or a reopened one's. The pipeline is built on the
        read-ahead's worker, so the request does not wait. False when nothing is read."""
        if not self.read_ahead.enabled or not self.pipelines.ready(config.collections)[0]:
            return False
        self.read_ahead.submit(lambda: self.pipelines.get(config), messages)
        return True

    def collection_names(self) -> list[str]:
        """The service's collections (its database's), those with documents first. What the backend
        holds beside them (a Milvus collection another program made) is not the service's."""
        names = [c["name"] for c in self.store.collections()]
        built = set(self.collections.built())
        return [n for n in names if n in built] + [n for n in names if n not in built]

    def read_ahead_at_start(self) -> bool:
        """At start, load the model and read a new conversation's prompt start (the instructions and
        worked examples, the same for every collection), so that the first question after a start
        does not wait for them: an OpenAI client's first request creates no conversation to read
        ahead for. It stays in the model's cache for later new conversations too, whose prompts
        begin with it. False when there is no collection with documents yet."""
        first = self.collection_names()[:1]  # one with documents, if any has (read_ahead_for checks)
        return bool(first) and self.read_ahead_for(self.settings.pipeline(first), [])

    def read_ahead_after(self, config: PipelineConfig, messages: Sequence[Message], answer: str) -> None:
        """Have the next turn's prompt read ahead once ``answer`` to ``messages`` is given: the
        conversations API stores the turn, an OpenAI-compatible client sends the same messages
        and this answer back with its next question."""
        self.read_ahead_for(config, [*messages, Message("agent", answer)])


def get_state(request: Request) -> ServiceState:
    return request.app.state.convrag
