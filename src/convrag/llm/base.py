"""The chat interface every backend implements, and the value types it returns.

Strategies only ever see :class:`LLM`: messages in, a :class:`Completion` out. A
completion carries its token counts and latency because on a CPU the prompt is
the cost that matters (about 70 prompt tokens/s here), and traces report both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from typing_extensions import TypedDict  # pydantic (the service, the trace schema) needs this one on Python < 3.12

from ..errors import ConvragError


class ChatMessage(TypedDict):
    """One chat message: ``role`` is ``system``, ``user`` or ``assistant``."""

    role: str
    content: str


@dataclass(frozen=True)
class GenerationParams:
    """Decoding settings. Greedy by default so that runs are reproducible and cacheable."""

    temperature: float = 0.0
    max_tokens: int = 64
    stop: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "max_tokens": self.max_tokens, "stop": list(self.stop)}


class Completion(NamedTuple):
    """What a backend answered. ``latency_s`` is the time the call took when it was made, and
    ``first_token_s`` the time its first piece of text arrived when it was streamed (a cache hit
    keeps both original figures and sets ``cached``)."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    model: str
    cached: bool = False
    first_token_s: float | None = None


class LLMError(ConvragError):
    """A backend failed (unreachable, timed out, refused, or the model could not be loaded)."""


class LLM(Protocol):
    """A chat model. ``backend`` and ``model`` identify it in traces and in the cache key."""

    backend: str
    model: str

    def complete(self, messages: list[ChatMessage], params: GenerationParams = GenerationParams()) -> Completion: ...

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` costs in a prompt; strategies use it to keep within their budget."""
        ...


def stream(llm: LLM, messages: list[ChatMessage], params: GenerationParams = GenerationParams()) -> Iterator[str | Completion]:
    """The answer's text in pieces as the model writes them, then its :class:`Completion` (the
    same text). Backends with a ``stream`` method stream for real; the others answer in one piece."""
    method = getattr(llm, "stream", None)
    if method is not None:
        yield from method(messages, params)
        return
    completion = llm.complete(messages, params)
    if completion.text:
        yield completion.text
    yield completion


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (models wrap it in prose or code fences), or None."""
    match = _JSON_OBJECT.search(text)
    if not match:
        return None
    try:
        value = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def complete_json(
    llm: LLM, messages: list[ChatMessage], params: GenerationParams = GenerationParams(max_tokens=128)
) -> tuple[dict[str, Any] | None, Completion]:
    """Ask for a JSON object; returns the parsed object (None when the answer holds none) and the raw completion."""
    completion = llm.complete(messages, params)
    return parse_json_object(completion.text), completion
