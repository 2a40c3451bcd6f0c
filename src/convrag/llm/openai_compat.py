"""Any OpenAI-compatible chat endpoint: vLLM, Ollama, llama.cpp's server, Together, OpenAI.

Uses the official ``openai`` client, which brings timeouts and bounded retries with backoff.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from typing import Any

from .base import ChatMessage, Completion, GenerationParams, LLMError, PromptTooLong
from .tokens import approximate_counter

log = logging.getLogger("convrag.llm")

#: how servers say a prompt is longer than the model's context, in a 400: OpenAI's error code,
#: vLLM's message, llama.cpp server's error type and message
_TOO_LONG = ("context_length_exceeded", "maximum context length", "exceed_context_size", "exceeds the available context size")

#: the reasoning a thinking model (Qwen3, DeepSeek-R1, QwQ) writes before its reply, where its server
#: leaves it in the reply's content (vLLM without a reasoning parser, llama.cpp's server with
#: ``--reasoning-format none``, LM Studio): it became the rewritten query, and the answer shown
_THINK, _THOUGHT = "<think>", "</think>"
#: the completion tokens a reasoning model is given besides the reply's own limit, where it counts its
#: reasoning in them (an endpoint that takes ``max_completion_tokens`` only): with the reply's 160 alone,
#: its reasoning used them all and the reply was empty
REASONING_TOKENS = 4096


def without_reasoning(text: str) -> str:
    """``text`` without the reasoning before the reply: a leading ``<think>`` block, or all up to a
    ``</think>`` that none opened (DeepSeek-R1's chat template opens the block in the prompt). A
    block never closed (the token limit reached while the model reasoned) leaves no reply."""
    start = text.lstrip()
    if start.startswith(_THINK):
        end = start.find(_THOUGHT)
        return start[end + len(_THOUGHT):].lstrip() if end >= 0 else ""
    if _THOUGHT in text and _THINK not in text:
        return text.split(_THOUGHT, 1)[1].lstrip()
    return text


class _ReplyAfterReasoning:
    """Streamed pieces with a leading ``<think>`` block held back (:func:`without_reasoning`): the
    reader sees the reply as it is written, not the reasoning before it."""

    def __init__(self) -> None:
        self.held = ""  # what came before the reply could be told from reasoning
        self.replying = False

    def feed(self, piece: str) -> str:
        """What of ``piece`` (and of the pieces held before it) is the reply's, so far."""
        if self.replying:
            return piece
        self.held += piece
        start = self.held.lstrip()
        if _THINK.startswith(start) or (start.startswith(_THINK) and _THOUGHT not in start):
            return ""  # blank so far, the first letters of "<think>", or reasoning not yet closed
        self.replying = True
        return without_reasoning(self.held)


class OpenAICompatibleLLM:
    """Chat completions at ``base_url``; the key is read from the environment variable ``api_key_env``."""

    backend = "openai"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        import openai

        self.model = model
        self.base_url = base_url or os.environ.get("CONVRAG_OPENAI_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
        # Local servers need no key, but the client insists on one.
        key = os.environ.get(api_key_env) or "not-needed"
        self._openai = openai
        self._client = openai.OpenAI(base_url=self.base_url, api_key=key, timeout=timeout_s, max_retries=max_retries)
        self._count = approximate_counter()
        #: what the endpoint said it refuses of a request (:meth:`_learned`), kept for the next one
        self.refuses: set[str] = set()

    def count_tokens(self, text: str) -> int:
        return self._count(text)

    @property
    def _where(self) -> str:
        return f"{self.base_url or 'OpenAI'} ({self.model})"

    def _failure(self, exc: Exception) -> LLMError:
        """The client's error as convrag's; a request refused for a prompt longer than the model's
        context is a :class:`PromptTooLong` (servers say so each in their own words: :data:`_TOO_LONG`)."""
        said = f"{getattr(exc, 'code', '') or ''} {exc}".lower()
        too_long = isinstance(exc, self._openai.BadRequestError) and any(mark in said for mark in _TOO_LONG)
        return (PromptTooLong if too_long else LLMError)(f"{self._where}: {type(exc).__name__}: {exc}")

    def _request(self, messages: list[ChatMessage], params: GenerationParams, **extra: Any) -> Any:
        """The chat completion request, as the endpoint takes it: one it refuses for a parameter it
        does not take is sent again, once, without that parameter (:meth:`_learned`)."""
        while True:
            sampling = {} if "temperature" in self.refuses else {
                "temperature": params.temperature, **({} if params.seed is None else {"seed": params.seed}),
                **({} if params.top_p is None else {"top_p": params.top_p})}
            # a reasoning model counts its reasoning in its completion tokens: room for it besides the reply
            length = ({"max_completion_tokens": params.max_tokens + REASONING_TOKENS} if "max_tokens" in self.refuses
                      else {"max_tokens": params.max_tokens})
            try:
                return self._client.chat.completions.create(
                    model=self.model, messages=list(messages), stop=list(params.stop) or None,  # type: ignore[arg-type]
                    **sampling, **length, **extra)
            except self._openai.BadRequestError as exc:
                if not self._learned(exc):
                    raise

    def _learned(self, exc: Exception) -> bool:
        """Whether ``exc`` is the endpoint refusing a parameter it does not take, newly: OpenAI's
        reasoning models (o-series, gpt-5) refuse ``max_tokens`` ("use 'max_completion_tokens'
        instead") and any temperature but their own, and every call of such a model had failed."""
        said = str(exc).lower()
        for parameter in ("max_tokens", "temperature"):
            if parameter not in self.refuses and f"'{parameter}'" in said and ("unsupported" in said or "not supported" in said):
                self.refuses.add(parameter)
                log.info("%s does not take %s; sent without it from now on", self._where, parameter)
                return True
        return False

    def complete(self, messages: list[ChatMessage], params: GenerationParams = GenerationParams()) -> Completion:
        start = time.perf_counter()
        try:
            response = self._request(messages, params)
        except self._openai.OpenAIError as exc:
            raise self._failure(exc) from exc
        except ValueError as exc:  # a reply labelled JSON that does not parse
            raise LLMError(f"{self._where}: the reply is not valid JSON ({exc})") from exc
        latency = time.perf_counter() - start
        choice = _first_choice(response, self._where)
        text = without_reasoning(choice.message.content or "")
        usage = getattr(response, "usage", None)
        return Completion(
            text,
            usage.prompt_tokens if usage else self._count(" ".join(m["content"] for m in messages)),
            usage.completion_tokens if usage else self._count(text),
            latency,
            self.model,
            finish_reason=choice.finish_reason,
            sent_without=tuple(sorted(self.refuses)),
        )

    def stream(self, messages: list[ChatMessage], params: GenerationParams = GenerationParams()) -> Iterator[str | Completion]:
        """Server-sent pieces of the answer, then the :class:`Completion` (token counts estimated:
        not every compatible server reports usage when streaming)."""
        start = time.perf_counter()
        pieces: list[str] = []
        first: float | None = None
        finish: str | None = None
        chunks_seen = 0
        reply = _ReplyAfterReasoning()
        try:
            chunks = self._request(messages, params, stream=True)
            for chunk in chunks:
                chunks_seen += 1
                choices = getattr(chunk, "choices", None) or []
                if choices and choices[0].finish_reason:
                    finish = choices[0].finish_reason
                piece = reply.feed(getattr(choices[0].delta, "content", None) or "") if choices else None
                if piece:
                    if first is None:
                        first = time.perf_counter() - start
                    pieces.append(piece)
                    yield piece
        except self._openai.OpenAIError as exc:
            raise self._failure(exc) from exc
        except ValueError as exc:  # an event whose data does not parse
            raise LLMError(f"{self._where}: a streamed event is not valid JSON ({exc})") from exc
        if not chunks_seen:  # a 200 that is not a stream of events (a proxy's page): an answer of nothing, else
            raise LLMError(f"{self._where}: the reply is not a stream of chat completion chunks")
        text = without_reasoning("".join(pieces))  # the reasoning a block that none opened closes
        yield Completion(text, self._count(" ".join(m["content"] for m in messages)), self._count(text),
                         time.perf_counter() - start, self.model, first_token_s=first, finish_reason=finish,
                         sent_without=tuple(sorted(self.refuses)))


def _first_choice(response: Any, where: str) -> Any:
    """The first choice of a chat completion, or an :class:`LLMError` saying what came instead. A
    server (or a proxy in front of it) that answers 200 with a page, a list, or a choice without a
    message got past the client's checks and raised AttributeError deep in a strategy, which
    catches only LLMError to fall back."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list):
        raise LLMError(f"{where}: the reply is not a chat completion: {str(response)[:200]!r}")
    if not choices:
        raise LLMError(f"{where} returned no choices")
    if getattr(choices[0], "message", None) is None:
        raise LLMError(f"{where}: the reply's first choice has no message")
    return choices[0]
