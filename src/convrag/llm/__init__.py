"""The LLM layer: one small chat interface with local, OpenAI-compatible and Anthropic backends."""

from .base import LLM, ChatMessage, Completion, GenerationParams, LLMError, complete_json
from .registry import LLM_BACKENDS, make_llm

__all__ = ["LLM", "ChatMessage", "Completion", "GenerationParams", "LLMError", "complete_json", "LLM_BACKENDS", "make_llm"]
