"""Lexical retrieval with the collection's BM25 index."""

from __future__ import annotations

from collections.abc import Sequence

from ..index.collection import Collection
from ..types import Hit
from .base import hits_from_positions


class BM25Retriever:
    name = "bm25"

    def __init__(self, collection: Collection) -> None:
        self.collection = collection

    def search(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        positions, scores = self.collection.bm25.search(queries, k)
        return [hits_from_positions(self.collection, p, s) for p, s in zip(positions, scores)]
