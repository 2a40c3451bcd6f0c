"""The official MT-RAG ``conversations.json``: human conversations with per-turn annotations.

The file is a JSON list. Each conversation has ``messages`` alternating
``user``/``agent``; user messages carry ``enrichments`` (``Question Type``,
``Multi-Turn``, ``Answerability``) and agent messages carry the ``contexts``
shown to the annotator. The copy in ``shared/mtrag`` adds ``conversation_id``;
the official release does not, so :func:`assign_conversation_ids` recovers ids
by matching each conversation's questions against the benchmark's
``{domain}_questions.jsonl`` file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import DataFormatError, not_utf8
from ..types import Enrichments, Message, Passage, Task
from .domains import domain_of
from .jsonl import parse_json

SPEAKERS = ("user", "agent")


@dataclass(frozen=True)
class Conversation:
    """One annotated conversation. ``enrichments[i]`` belongs to the i-th user message."""

    conversation_id: str
    domain: str
    messages: tuple[Message, ...]
    enrichments: tuple[Enrichments, ...] = ()
    agent_contexts: tuple[tuple[Passage, ...], ...] = ()

    def tasks(self) -> list[Task]:
        """One :class:`Task` per user message, each with the messages before it as history."""
        tasks: list[Task] = []
        turn = 0
        for index, message in enumerate(self.messages):
            if message.speaker != "user":
                continue
            turn += 1
            enrichment = self.enrichments[turn - 1] if turn - 1 < len(self.enrichments) else Enrichments()
            tasks.append(
                Task(
                    task_id=f"{self.conversation_id}<::>{turn}",
                    conversation_id=self.conversation_id,
                    turn=turn,
                    domain=self.domain,
                    question=message.text,
                    history=self.messages[:index],
                    enrichments=enrichment,
                )
            )
        return tasks


def _labels(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def parse_enrichments(raw: Mapping[str, Any] | None) -> Enrichments:
    """Read the benchmark's enrichment labels; keys are spelled as in the official files."""
    raw = raw or {}
    return Enrichments(
        question_type=_labels(raw.get("Question Type")),
        multi_turn=_labels(raw.get("Multi-Turn")),
        answerability=_labels(raw.get("Answerability") or raw.get("answerability")),
    )


def parse_contexts(raw: Any) -> tuple[Passage, ...]:
    """Passages given as MT-RAG ``contexts`` (``document_id``, ``text``, ``title``, ``url``)."""
    return tuple(
        Passage(
            doc_id=str(ctx.get("document_id", "")),
            text=str(ctx.get("text", "")),
            title=str(ctx.get("title") or ""),
            url=str(ctx.get("url") or ""),
        )
        for ctx in raw or []
        if isinstance(ctx, dict)
    )


def _collection_name(retriever: Any) -> Any:
    """``retriever.collection.name``, the official files' way to name the domain; None where the
    field is missing or is not the nested objects that spelling needs."""
    collection = retriever.get("collection") if isinstance(retriever, dict) else None
    return collection.get("name") if isinstance(collection, dict) else None


def _parse_conversation(raw: Any, index: int, path: Path) -> Conversation:
    where = f"conversation #{index}"
    if not isinstance(raw, dict):
        raise DataFormatError(path, f"{where}: expected an object, got {type(raw).__name__}")
    messages_raw = raw.get("messages")
    if not isinstance(messages_raw, list) or not messages_raw:
        raise DataFormatError(path, f"{where}: missing or empty 'messages' list")
    domain_field = raw.get("domain") or _collection_name(raw.get("retriever"))
    if not domain_field:
        raise DataFormatError(path, f"{where}: no 'domain' and no retriever.collection.name")
    try:
        domain = domain_of(str(domain_field))
    except Exception as exc:  # ConfigError: re-raise located in the file
        raise DataFormatError(path, f"{where}: {exc}") from None

    messages: list[Message] = []
    enrichments: list[Enrichments] = []
    contexts: list[tuple[Passage, ...]] = []
    for number, message in enumerate(messages_raw):
        mwhere = f"{where}, message #{number}"
        if not isinstance(message, dict):
            raise DataFormatError(path, f"{mwhere}: expected an object")
        speaker, text = message.get("speaker"), message.get("text")
        if speaker not in SPEAKERS:
            raise DataFormatError(path, f"{mwhere}: speaker {speaker!r} is not 'user' or 'agent'")
        if not isinstance(text, str):
            raise DataFormatError(path, f"{mwhere}: 'text' missing or not a string")
        expected = SPEAKERS[number % 2]
        if speaker != expected:
            raise DataFormatError(path, f"{mwhere}: expected a {expected} message (messages alternate user/agent)")
        messages.append(Message(speaker=speaker, text=text))
        if speaker == "user":
            enrichments.append(parse_enrichments(message.get("enrichments")))
        else:
            contexts.append(parse_contexts(message.get("contexts")))
    return Conversation(
        conversation_id=str(raw.get("conversation_id") or ""),
        domain=domain,
        messages=tuple(messages),
        enrichments=tuple(enrichments),
        agent_contexts=tuple(contexts),
    )


def load_conversations(path: Path) -> list[Conversation]:
    """Load and validate a ``conversations.json`` file."""
    path = Path(path)
    if not path.exists():
        raise DataFormatError(path, "file not found")
    try:
        raw = parse_json(path.read_bytes().decode("utf-8-sig"))  # a byte-order mark (Windows editors write one) is skipped
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, f"invalid JSON ({exc.msg}, column {exc.colno})", exc.lineno) from None
    except UnicodeDecodeError as exc:  # JSON is UTF-8 (RFC 8259); a file saved as Latin-1 or cp1252 lands here
        raise DataFormatError(path, not_utf8(exc)) from None
    if not isinstance(raw, list):
        raise DataFormatError(path, f"expected a JSON list of conversations, got {type(raw).__name__}")
    return [_parse_conversation(item, index, path) for index, item in enumerate(raw)]


def assign_conversation_ids(
    conversations: list[Conversation], questions_by_task: Mapping[str, str]
) -> list[Conversation]:
    """Fill in missing ``conversation_id`` values from a ``questions`` query file.

    The questions file maps ``<conversation_id><::><turn>`` to the user questions
    of turns 1..turn, one per line. A conversation whose questions match an entry
    takes that entry's conversation id. Conversations that already have an id,
    or that match nothing, are returned unchanged.
    """
    by_questions: dict[tuple[str, ...], str] = {}
    for task_id, text in questions_by_task.items():
        conversation_id, _, _turn = task_id.partition("<::>")
        key = tuple(_normalize(q) for q in text.split("\n") if q.strip())
        by_questions[key] = conversation_id
    result: list[Conversation] = []
    for conversation in conversations:
        if not conversation.conversation_id:
            questions = [_normalize(m.text) for m in conversation.messages if m.speaker == "user"]
            for n in range(len(questions), 0, -1):
                found = by_questions.get(tuple(questions[:n]))
                if found:
                    conversation = replace(conversation, conversation_id=found)
                    break
        result.append(conversation)
    return result


def _normalize(text: str) -> str:
    return " ".join(text.split())
