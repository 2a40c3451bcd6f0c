"""Dense retrieval: embed the queries with the collection's model, exact inner-product search."""

from __future__ import annotations

from collections.abc import Sequence

from ..embeddings import Embedder, load_embedder
from ..errors import CollectionError, ConfigError
from ..index.collection import Collection
from ..index.windows import AGGREGATIONS
from ..types import Hit
from .base import hits_from_positions

#: how a passage with extra windows is scored when the collection has them (chosen on the dev split)
DEFAULT_WINDOWS = "mix"


def check_windows(windows: str) -> str:
    """``windows`` when it names a way to score long passages, else a :class:`ConfigError`."""
    if windows not in AGGREGATIONS:
        raise ConfigError(f"unknown window scoring {windows!r}; expected one of {', '.join(AGGREGATIONS)}")
    return windows


class DenseRetriever:
    """``windows``: for collections built with extra windows of long passages, ``first`` (the passage
    embedding), ``max`` (its best window) or ``mix`` (their mean); ignored without windows. The index
    is opened (memory-mapped) when the retriever is made, for the reason :class:`BM25Retriever` gives."""

    name = "dense"

    def __init__(self, collection: Collection, embedder: Embedder | None = None, windows: str = DEFAULT_WINDOWS) -> None:
        self.windows = check_windows(windows)
        if collection.manifest.embedding_model is None:
            raise CollectionError(
                f"collection {collection.name!r} was built without embeddings; rebuild it with an embedding model"
            )
        self.collection = collection
        self.embedder = embedder or load_embedder(collection.manifest.embedding_model or "")
        collection.check_embedder(self.embedder)
        self.index = collection.dense

    def search(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        if not queries:
            return []
        vectors = self.embedder.encode(list(queries))
        positions, scores = self.index.search(vectors, k, aggregate=self.windows)
        return [hits_from_positions(self.collection, p, s) for p, s in zip(positions, scores)]
