"""Anthropic's Messages API (official ``anthropic`` client: timeouts and bounded retries)."""

from __future__ import annotations

import os
import time

from .base import ChatMessage, Completion, GenerationParams, LLMError
from .tokens import approximate_counter


class AnthropicLLM:
    """Claude models; the key comes from ``ANTHROPIC_API_KEY`` (or ``api_key_env``)."""

    backend = "anthropic"

    def __init__(self, model: str, api_key_env: str = "ANTHROPIC_API_KEY", timeout_s: float = 60.0, max_retries: int = 2) -> None:
        import anthropic

        key = os.environ.get(api_key_env)
        if not key:
            raise LLMError(f"the anthropic backend needs an API key in ${api_key_env}")
        self.model = model
        self._anthropic = anthropic
        self._client = anthropic.Anthropic(api_key=key, timeout=timeout_s, max_retries=max_retries)
        self._count = approximate_counter()

    def count_tokens(self, text: str) -> int:
        return self._count(text)

    def complete(self, messages: list[ChatMessage], params: GenerationParams = GenerationParams()) -> Completion:
        # The Messages API takes the system prompt apart from the turns. The pinned client (2.x) has
        # no sampling parameters: ``params.temperature`` is not sent (current models choose their own).
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        turns = [{"role": m["role"], "content": m["content"]} for m in messages if m["role"] != "system"]
        start = time.perf_counter()
        try:
            kwargs = {"system": system} if system else {}
            response = self._client.messages.create(
                model=self.model,
                messages=turns,  # type: ignore[arg-type]
                max_tokens=params.max_tokens,
                stop_sequences=[s for s in params.stop if s.strip()] or self._anthropic.NOT_GIVEN,
                **kwargs,
            )
        except self._anthropic.AnthropicError as exc:
            raise LLMError(f"anthropic ({self.model}): {type(exc).__name__}: {exc}") from exc
        except ValueError as exc:  # a reply labelled JSON that does not parse
            raise LLMError(f"anthropic ({self.model}): the reply is not valid JSON ({exc})") from exc
        latency = time.perf_counter() - start
        if not isinstance(getattr(response, "content", None), list) or getattr(response, "usage", None) is None:
            # a 200 from something else at the base URL (a proxy's page): it raised AttributeError before
            raise LLMError(f"anthropic ({self.model}): the reply is not a Messages API message: {str(response)[:200]!r}")
        text = "".join(getattr(block, "text", "") or "" for block in response.content)
        return Completion(text, response.usage.input_tokens, response.usage.output_tokens, latency, self.model,
                          finish_reason=finish_reason(response.stop_reason))


#: the Messages API's stop reasons, in the OpenAI terms the rest of convrag reads
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


def finish_reason(stop_reason: str | None) -> str | None:
    """Why a Messages API reply ended, as :attr:`~.base.Completion.finish_reason` says it; a reason
    with no OpenAI counterpart (a tool call, a refusal) is passed on as it is."""
    return _FINISH.get(stop_reason or "", stop_reason)
