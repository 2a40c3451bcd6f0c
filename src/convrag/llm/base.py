"""The chat interface every backend implements, and the value types it returns.

Strategies only ever see :class:`LLM`: messages in, a :class:`Completion` out. A
completion carries its token counts and latency because on a CPU the prompt is
the cost that matters (about 70 prompt tokens/s here), and traces report both.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from typing_extensions import TypedDict  # pydantic (the service, the trace schema) needs this one on Python < 3.12

from ..data.jsonl import parse_json
from ..errors import ConvragError


class ChatMessage(TypedDict):
    """One chat message: ``role`` is ``system``, ``user`` or ``assistant``."""

    role: str
    content: str


#: the version of the citation steer's rules (:mod:`.steering`), part of a cited request's cache
#: key: a change to where the steer puts a citation changes what the model writes, and a cached
#: answer written under the old rules would be served as the new rules' answer. 2: closing marks
#: written with the full stop come before the citation, and "v." (a court case) ends no sentence;
#: 3: nothing ends a sentence inside code left open (:func:`.steering.in_code`), and a sentence is
#: made to cite once
CITE_RULES = 3


@dataclass(frozen=True)
class GenerationParams:
    """Decoding settings. Greedy by default so that runs are reproducible and cacheable.

    Three *steers* act on the model's choices while it writes (:mod:`.steering`; the local backend
    applies them, a remote API cannot, and its completion then reports ``steering=None``):

    * ``cite_sentences``: when the model is about to end a sentence that cites no passage, it is
      made to open a citation ``[`` first and picks the passage number itself;
    * ``first_choice``: the probability the model gives the first token of this text at its first
      step is reported; at ``first_choice_at`` or above, that token is chosen (the decline sentence
      of the answer prompt, so that a small model's doubt can decide a decline);
    * ``copy_bias`` with ``copy_from``: where the answer's ending occurs in one of these texts (the
      passages shown), the token that follows the longest such ending there gets ``copy_bias`` added
      to its logit, so that a near tie between the passage's wording and a paraphrase goes to the
      passage; an ending of fewer than ``copy_context`` words continues nothing.
    """

    temperature: float = 0.0
    max_tokens: int = 64
    #: the sampler's seed when ``temperature`` > 0: a sampled answer (a regenerated one) is then
    #: reproducible, and cached under a key of its own instead of the greedy answer's
    seed: int | None = None
    #: nucleus sampling's cut when ``temperature`` > 0 (a client's ``top_p``); None: the backend's own
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    cite_sentences: bool = False
    first_choice: str = ""
    first_choice_at: float | None = None
    copy_bias: float = 0.0
    copy_from: tuple[str, ...] = ()
    copy_context: int = 2

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens, "stop": list(self.stop)}
        if self.seed is not None:  # only when set, as the steers below: plain requests keep their keys
            out["seed"] = self.seed
        if self.top_p is not None:
            out["top_p"] = self.top_p
        # the steers only when set, so that the cache keys of plain requests stay what they were
        if self.cite_sentences:
            out["cite_sentences"] = CITE_RULES
        if self.first_choice:
            out["first_choice"] = self.first_choice
            out["first_choice_at"] = self.first_choice_at
        if self.copies:
            # the texts are in the prompt already; their digest keeps the key short and exact
            digest = hashlib.sha256("\x00".join(self.copy_from).encode("utf-8")).hexdigest()[:16]
            out["copy"] = {"bias": self.copy_bias, "from": digest, "context": self.copy_context}
        return out

    @property
    def copies(self) -> bool:
        return self.copy_bias > 0 and any(self.copy_from)

    @property
    def steered(self) -> bool:
        return self.cite_sentences or bool(self.first_choice) or self.copies


class Completion(NamedTuple):
    """What a backend answered. ``latency_s`` is the time the call took when it was made, and
    ``first_token_s`` the time its first piece of text arrived when it was streamed (a cache hit
    keeps both original figures and sets ``cached``). ``steering`` is what the steers of the
    request did (:class:`.steering.Steering` ``report()``), None when none was asked for or the
    backend cannot steer. ``finish_reason`` says why the model stopped: ``"stop"`` (it ended, or
    met a stop sequence), ``"length"`` (it reached ``max_tokens``, so its last sentence may be cut
    off), None when the backend does not say (and for completions cached before it was kept).
    ``sent_without`` names the request's parameters the endpoint refuses, so the call was sent
    without them (OpenAI's reasoning models take no ``max_tokens`` and no temperature): the trace
    says so, as the length limit and greedy decoding it asked for did not reach the model."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    model: str
    cached: bool = False
    first_token_s: float | None = None
    steering: dict[str, Any] | None = None
    finish_reason: str | None = None
    sent_without: tuple[str, ...] = ()


class LLMError(ConvragError):
    """A backend failed (unreachable, timed out, refused, or the model could not be loaded)."""


class PromptTooLong(LLMError):
    """The prompt is longer than the model reads at once (its context window). Asking again fails
    the same way, so it is said apart from a backend that is down: the question has to be shorter."""


class Stopped(LLMError):
    """A call ended unanswered because its turn was stopped while the model read its prompt
    (:func:`stopping`). An LLMError, so that a strategy records it as it records any failed call
    and moves on; the pipeline then sees the stop and drops the turn."""


#: the stop of the turn whose calls are being made (:func:`stopping`)
_TURN_STOP: ContextVar[Callable[[], bool] | None] = ContextVar("convrag_turn_stop", default=None)


@contextmanager
def stopping(stop: Callable[[], bool] | None) -> Iterator[None]:
    """Within, plain calls (:meth:`LLM.complete`: the rewrite's, a query stage's) belong to a turn
    that ``stop`` can end: a backend that reads prompts in pieces (``stoppable``) looks at it
    between them and raises :class:`Stopped`. The answer's stream is handed its stop directly
    (:func:`stream`); these calls are made deep inside strategies, whose interface takes a task,
    not a stop, and only the local model acts on one, so the stop travels with the turn's
    context instead of through every strategy's signature. The context is the thread's (and a
    task's): a read-ahead on another thread never sees it."""
    token = _TURN_STOP.set(stop)
    try:
        yield
    finally:
        _TURN_STOP.reset(token)


def turn_stop() -> Callable[[], bool] | None:
    """The stop of the turn a call is made for (:func:`stopping`); None outside one."""
    return _TURN_STOP.get()


class LLM(Protocol):
    """A chat model. ``backend`` and ``model`` identify it in traces and in the cache key."""

    backend: str
    model: str

    def complete(self, messages: list[ChatMessage], params: GenerationParams = GenerationParams()) -> Completion: ...

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` costs in a prompt; strategies use it to keep within their budget."""
        ...


def stream(llm: LLM, messages: list[ChatMessage], params: GenerationParams = GenerationParams(),
           stop: Callable[[], bool] | None = None) -> Iterator[str | Completion]:
    """The answer's text in pieces as the model writes them, then its :class:`Completion` (the
    same text). Backends with a ``stream`` method stream for real; the others answer in one piece.

    ``stop`` (true once nobody wants the answer) reaches backends that say they look at it
    (``stoppable``: the local model, which reads a long prompt for seconds before its first piece);
    such a stream may then end with no Completion. Callers still look at it between pieces: that is
    what stops the others."""
    method = getattr(llm, "stream", None)
    if method is not None:
        if stop is not None and getattr(llm, "stoppable", False):
            yield from method(messages, params, stop=stop)
        else:
            yield from method(messages, params)
        return
    completion = llm.complete(messages, params)
    if completion.text:
        yield completion.text
    yield completion


def prefill(llm: LLM, messages: list[ChatMessage]) -> int | None:
    """Have the backend read the start of a coming prompt now, while nobody waits for it (after an
    answer, while the user reads it and types). ``messages`` is that start: the last one's content
    may stop short, and the coming request's last message then begins with it. Backends that reuse
    an evaluated prefix (:class:`~convrag.llm.local.LocalLLM`) read it; the others do nothing.
    Returns the prompt tokens read, or None when the backend has nothing to read ahead."""
    method = getattr(llm, "prefill", None)
    return method(messages) if method is not None else None


def holds(llm: LLM, messages: list[ChatMessage]) -> bool:
    """Whether the backend has read ``messages`` (a prompt start, as for :func:`prefill`) already, by
    a read-ahead or an earlier request: a prompt that begins with them then costs only what follows.
    False for backends that read every prompt whole."""
    method = getattr(llm, "holds", None)
    return bool(method(messages)) if method is not None else False


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (models wrap it in prose or code fences), or None."""
    match = _JSON_OBJECT.search(text)
    if not match:
        return None
    try:
        value = parse_json(match.group(0))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def complete_json(
    llm: LLM, messages: list[ChatMessage], params: GenerationParams = GenerationParams(max_tokens=128)
) -> tuple[dict[str, Any] | None, Completion]:
    """Ask for a JSON object; returns the parsed object (None when the answer holds none) and the raw completion."""
    completion = llm.complete(messages, params)
    return parse_json_object(completion.text), completion
