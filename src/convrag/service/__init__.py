"""The chat service: an HTTP API (OpenAI-compatible chat, collections, conversations, search)
and a web chat page, over the same pipeline as the library. ``convrag serve`` starts it."""

from .app import create_app
from .settings import ServiceSettings

__all__ = ["ServiceSettings", "create_app"]
