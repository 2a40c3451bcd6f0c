"""Retrievers by name, so a CLI option or config value can pick one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..embeddings import Embedder
from ..errors import ConfigError
from ..index.collection import Collection
from .base import Retriever
from .bm25 import BM25Retriever
from .dense import DenseRetriever
from .hybrid import HybridRetriever


def _hybrid(collection: Collection, embedder: Embedder | None = None, **options: Any) -> Retriever:
    return HybridRetriever(BM25Retriever(collection), DenseRetriever(collection, embedder), **options)


RETRIEVERS: dict[str, Callable[..., Retriever]] = {
    "bm25": lambda collection, embedder=None, **options: BM25Retriever(collection, **options),
    "dense": lambda collection, embedder=None, **options: DenseRetriever(collection, embedder, **options),
    "hybrid": _hybrid,
}


def make_retriever(name: str, collection: Collection, embedder: Embedder | None = None, **options: Any) -> Retriever:
    """Build the retriever ``name`` over ``collection`` (``options`` go to its constructor)."""
    try:
        factory = RETRIEVERS[name]
    except KeyError:
        raise ConfigError(f"unknown retriever {name!r}; expected one of {', '.join(RETRIEVERS)}") from None
    return factory(collection, embedder, **options)
