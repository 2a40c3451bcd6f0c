"""convrag's own API under ``/api``: one router per resource.

``health`` (the service), ``collections`` (create, describe, delete), ``documents`` (uploads,
replacement and removal by background jobs, source files, passages), ``jobs`` (indexing
progress), ``search`` (passages without generation), ``conversations`` (stored chats: ask,
stream, regenerate, rename, export, delete) and ``strategies`` (what a conversation may use).

(No ``from __future__ import annotations`` in these modules: some request models are built per
service from its limits, and FastAPI must see the classes themselves in the annotations.)
"""

from fastapi import APIRouter

from ..settings import Limits
from . import collections, conversations, documents, health, jobs, search, strategies


def api_router(limits: Limits) -> APIRouter:
    """Every ``/api`` route; ``limits`` puts this service's bounds into the request schemas."""
    api = APIRouter(prefix="/api")
    api.include_router(health.router())
    api.include_router(collections.router())
    api.include_router(documents.router(limits))
    api.include_router(jobs.router())
    api.include_router(search.router(limits))
    api.include_router(conversations.router(limits))
    api.include_router(strategies.router())
    return api
