"""The small value types every layer shares.

They are immutable (NamedTuple or frozen dataclass) so that a run, a trace or a
cached result can be passed around without defensive copies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class Passage(NamedTuple):
    """One retrievable unit of a collection (an MT-RAG passage, or a chunk of an ingested document)."""

    doc_id: str
    text: str
    title: str = ""
    url: str = ""

    @property
    def searchable_text(self) -> str:
        """What indexes see: the text, headed by the title unless it already starts with it (MT-RAG's do)."""
        if self.title and not self.text.startswith(self.title):
            return f"{self.title}\n{self.text}"
        return self.text


class Hit(NamedTuple):
    """One ranked search result. ``rank`` is 1-based within its result list."""

    doc_id: str
    score: float
    text: str
    title: str
    url: str = ""
    rank: int = 0

    @property
    def key(self) -> str:
        """What fusion matches hits on: the passage id."""
        return self.doc_id


class SourcedHit(NamedTuple):
    """A search hit with its attribution: the collection, the passage (chunk) id, the document it
    belongs to, and its original score and rank within that collection's result list."""

    collection: str
    passage_id: str
    document_id: str
    text: str
    title: str = ""
    url: str = ""
    score: float = 0.0
    rank: int = 0
    metadata: Mapping[str, Any] = {}

    @property
    def key(self) -> str:
        """What fusion matches hits on: the passage id (one passage found in two collections is one passage)."""
        return self.passage_id


def document_of(passage_id: str) -> str:
    """The document id inside an MT-RAG style passage id ``<doc>-<start>-<end>`` (else the id itself)."""
    parts = passage_id.rsplit("-", 2)
    return parts[0] if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit() else passage_id


@dataclass(frozen=True)
class Message:
    """One message of a conversation: ``speaker`` is ``"user"`` or ``"agent"``."""

    speaker: str
    text: str


@dataclass(frozen=True)
class Enrichments:
    """The benchmark's annotations of a user turn (lists, as annotators may give several labels)."""

    question_type: tuple[str, ...] = ()
    multi_turn: tuple[str, ...] = ()
    answerability: tuple[str, ...] = ()


@dataclass(frozen=True)
class Task:
    """One retrieval task: a user question in the context of the conversation before it.

    ``history`` holds every message before ``question`` (alternating user/agent);
    ``turn`` is the 1-based index of the question among the user's messages, which
    is how MT-RAG numbers task ids (``<conversation_id><::><turn>``).
    """

    task_id: str
    conversation_id: str
    turn: int
    domain: str
    question: str
    history: tuple[Message, ...] = ()
    enrichments: Enrichments = field(default_factory=Enrichments)

    @property
    def user_questions(self) -> list[str]:
        """All user questions so far, the current one last."""
        return [m.text for m in self.history if m.speaker == "user"] + [self.question]
