"""LLM backends by name, so configuration and the CLI can pick one with a string.

Specs: ``local`` (the default model), ``local:/path/model.gguf``, ``openai:MODEL``
(base URL from ``--llm-url`` or ``CONVRAG_OPENAI_BASE_URL``; key from ``OPENAI_API_KEY``),
``anthropic:MODEL`` (key from ``ANTHROPIC_API_KEY``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import config
from ..errors import ConfigError
from .base import LLM
from .cache import CachedLLM


def _local(arg: str, options: dict[str, Any]) -> LLM:
    from .local import LocalLLM

    return LocalLLM(arg or None, **options)


def _openai(arg: str, options: dict[str, Any]) -> LLM:
    from .openai_compat import OpenAICompatibleLLM

    if not arg:
        raise ConfigError("the openai backend needs a model name: openai:MODEL")
    return OpenAICompatibleLLM(arg, **options)


def _anthropic(arg: str, options: dict[str, Any]) -> LLM:
    from .anthropic_api import AnthropicLLM

    if not arg:
        raise ConfigError("the anthropic backend needs a model name: anthropic:MODEL")
    return AnthropicLLM(arg, **options)


LLM_BACKENDS: dict[str, Callable[[str, dict[str, Any]], LLM]] = {
    "local": _local,
    "openai": _openai,
    "anthropic": _anthropic,
}


def default_cache_path() -> Path:
    return config.home() / "llm-cache.sqlite"


def make_llm(spec: str = "local", cache: Path | None | bool = True, **options: Any) -> LLM:
    """A backend from ``NAME[:ARG]``; wrapped in the persistent cache unless ``cache`` is False/None."""
    name, _, arg = spec.partition(":")
    if name not in LLM_BACKENDS:
        raise ConfigError(f"unknown LLM backend {name!r}; expected one of {', '.join(LLM_BACKENDS)}")
    llm = LLM_BACKENDS[name](arg, {k: v for k, v in options.items() if v is not None})
    if cache is True:
        return CachedLLM(llm, default_cache_path())
    if cache:
        return CachedLLM(llm, Path(cache))
    return llm
