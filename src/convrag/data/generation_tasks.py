"""MT-RAG generation-task JSONL: one task per line, the conversation up to that turn.

Each line holds ``conversation_id``, ``task_id``, ``turn``, ``input`` (a list of
``{speaker, text}`` ending with the user's question), ``Collection`` and optional
``targets``, ``contexts``, ``answerability``, ``Multi-Turn`` and ``Question Type``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, DataFormatError
from ..types import Message, Passage, Task
from .conversations import parse_contexts, parse_enrichments
from .domains import domain_of
from .jsonl import read_jsonl, require


@dataclass(frozen=True)
class GenerationTask:
    """A generation task: the retrieval :class:`Task` plus the reference answers and passages."""

    task: Task
    collection: str
    targets: tuple[str, ...] = ()
    contexts: tuple[Passage, ...] = ()


def _targets(raw: Any) -> tuple[str, ...]:
    out: list[str] = []
    for target in raw or []:
        if isinstance(target, dict):
            out.append(str(target.get("text", "")))
        elif isinstance(target, str):
            out.append(target)
    return tuple(out)


def _speaker(raw: Any) -> str:
    # The generation files spell the assistant as "agent"; accept "assistant" too.
    return "agent" if raw in ("agent", "assistant") else str(raw)


def load_generation_tasks(path: Path) -> list[GenerationTask]:
    """Read a generation-task JSONL file; every error names the file and line."""
    tasks: list[GenerationTask] = []
    for line, obj in read_jsonl(path):
        task_id = str(require(obj, "task_id", (str, int), path, line))
        raw_input = require(obj, "input", list, path, line)
        messages: list[Message] = []
        for number, item in enumerate(raw_input):
            if not isinstance(item, dict) or not isinstance(item.get("text"), str):
                raise DataFormatError(path, f"input[{number}] should be an object with a 'text' string", line)
            speaker = _speaker(item.get("speaker"))
            if speaker not in ("user", "agent"):
                raise DataFormatError(path, f"input[{number}] has speaker {item.get('speaker')!r}", line)
            messages.append(Message(speaker=speaker, text=item["text"]))
        if not messages or messages[-1].speaker != "user":
            raise DataFormatError(path, "'input' must end with the user's question", line)
        collection = str(require(obj, "Collection", str, path, line))
        try:
            domain = domain_of(collection)
        except ConfigError as exc:
            raise DataFormatError(path, str(exc), line) from None
        turn_raw = obj.get("turn", sum(1 for m in messages if m.speaker == "user"))
        try:
            turn = int(turn_raw)
        except (TypeError, ValueError):
            raise DataFormatError(path, f"'turn' should be an integer, got {turn_raw!r}", line) from None
        enrichments = parse_enrichments(
            {
                "Question Type": obj.get("Question Type"),
                "Multi-Turn": obj.get("Multi-Turn"),
                "Answerability": obj.get("answerability") or obj.get("Answerability"),
            }
        )
        task = Task(
            task_id=task_id,
            conversation_id=str(obj.get("conversation_id") or task_id.partition("<::>")[0]),
            turn=turn,
            domain=domain,
            question=messages[-1].text,
            history=tuple(messages[:-1]),
            enrichments=enrichments,
        )
        tasks.append(
            GenerationTask(
                task=task, collection=collection, targets=_targets(obj.get("targets")), contexts=parse_contexts(obj.get("contexts"))
            )
        )
    return tasks
