"""Conversation histories given by users (``--history`` files, API payloads) as ``Message`` tuples.

Accepts convrag's form (``speaker``: user/agent, ``text``) and the chat form (``role``:
user/assistant, ``content``, a string or a list of parts), so an OpenAI-style message list works
as is. System and developer messages are skipped: they are instructions, not conversation; so are
tool results and an assistant's tool call without text. A ``--history`` file may also be a
conversation the service exported as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..characters import not_utf8_text
from ..errors import DataFormatError, not_utf8
from ..types import Message
from .jsonl import parse_json

_SPEAKERS = {"user": "user", "agent": "agent", "assistant": "agent"}
#: roles in an OpenAI-style list that are not the conversation: instructions and tool calls' results
_NOT_CONVERSATION = frozenset({"system", "developer", "tool", "function"})


def text_parts(parts: Iterable[Any]) -> str:
    """The text of a message given as OpenAI content parts: its text parts, one per line (an image
    or audio part holds none). Joined as they came, "How much does renewal" and "by mail cost?"
    asked about "renewalby"."""
    return "\n".join(part["text"] for part in parts
                     if isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str))


def parse_messages(items: Iterable[Mapping[str, Any]], source: str = "history") -> tuple[Message, ...]:
    out: list[Message] = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise DataFormatError(source, f"message {i} is not an object")
        role = str(item.get("speaker", item.get("role", ""))).lower()
        text = item.get("text", item.get("content"))
        if isinstance(text, list):
            text = text_parts(text)
        if role in _NOT_CONVERSATION or (role == "assistant" and text is None and item.get("tool_calls")):
            continue
        if role not in _SPEAKERS:
            raise DataFormatError(source, f"message {i} has speaker/role {role!r}; expected user, agent or assistant")
        if not isinstance(text, str):
            raise DataFormatError(source, f"message {i} has no text/content string")
        if (reason := not_utf8_text(text)) is not None:  # a JSON escape like "\udce9"
            raise DataFormatError(source, f"message {i} is {reason}")
        out.append(Message(_SPEAKERS[role], text))
    return tuple(out)


def read_history(path: Path) -> tuple[Message, ...]:
    """A JSON list of messages (or ``{"messages": [...]}``) from ``path``; a file that cannot be
    read is a :class:`DataFormatError` naming it, like one that does not parse."""
    try:
        value = parse_json(Path(path).read_bytes().decode("utf-8-sig"))  # a byte-order mark is skipped
    except json.JSONDecodeError as exc:
        raise DataFormatError(str(path), f"not valid JSON: {exc.msg}", exc.lineno) from exc
    except UnicodeDecodeError as exc:
        raise DataFormatError(str(path), f"{not_utf8(exc)} (a history is a JSON file)") from None
    except OSError as exc:
        raise DataFormatError(str(path), f"cannot read the history file: {exc.strerror or exc}") from None
    if isinstance(value, Mapping):
        value = _exported_turns(value["turns"]) if "messages" not in value and isinstance(value.get("turns"), list) \
            else value.get("messages")
    if not isinstance(value, list):
        raise DataFormatError(str(path), "expected a list of messages, {\"messages\": [...]}, or a conversation the "
                                         "service exported as JSON")
    return parse_messages(value, str(path))


def _exported_turns(turns: list[Any]) -> list[Any]:
    """The messages of a conversation the service exported as JSON (``GET .../export?format=json``:
    turns of ``question`` and ``answer``), so a web chat can go on in ``convrag chat --history``."""
    return [message for turn in turns if isinstance(turn, Mapping)
            for message in ({"speaker": "user", "text": turn.get("question")}, {"speaker": "agent", "text": turn.get("answer")})]
