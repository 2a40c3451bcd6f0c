"""Lexical retrieval with the collection's BM25 index."""

from __future__ import annotations

from collections.abc import Sequence

from ..index.collection import Collection
from ..types import Hit
from .base import hits_from_positions


class BM25Retriever:
    """BM25 over one opened collection version. Its index is loaded when the retriever is made, not
    at the first search: a build that publishes in between (a service indexing an upload while a
    question is being rewritten) removes the version this retriever searches."""

    name = "bm25"

    def __init__(self, collection: Collection) -> None:
        self.collection = collection
        self.index = collection.bm25

    def search(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        positions, scores = self.index.search(queries, k)
        return [hits_from_positions(self.collection, p, s) for p, s in zip(positions, scores)]
