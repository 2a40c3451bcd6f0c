"""Pseudo-relevance feedback: search once, take the top passages as if relevant, search again.

* :class:`RM3` (BM25): the most frequent content words of the top ``docs`` passages that the query
  lacks are appended (``terms`` of them), the query repeated ``query_weight`` times so that its own
  words keep most of the weight (an RM3-style interpolation for a bag-of-words engine).
* :class:`Rocchio` (dense): the query vector moves toward the mean of the top ``docs`` passage
  vectors by ``beta``, then the search is repeated.

Both are options, measured on the dev split and not the default: on MT-RAG neither beat plain
retrieval (docs/benchmarks.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..index.collection import Collection
from ..index.topk import top_k
from ..text import STOP, words
from ..types import Hit
from .base import hits_from_positions
from .bm25 import BM25Retriever
from .dense import DenseRetriever


@dataclass(frozen=True)
class RM3Settings:
    docs: int = 3
    terms: int = 5
    query_weight: int = 2


@dataclass(frozen=True)
class RocchioSettings:
    docs: int = 3
    beta: float = 0.3


def expansion_terms(query: str, passages: Sequence[str], terms: int) -> list[str]:
    """The most frequent content words of ``passages`` that ``query`` does not contain."""
    counts: Counter[str] = Counter()
    for text in passages:
        counts.update(w for w in words(text) if w not in STOP and len(w) > 2 and not w.isdigit())
    asked = set(words(query))
    return [w for w, _ in counts.most_common(terms + len(asked)) if w not in asked][:terms]


class RM3:
    """BM25 with RM3-style query expansion from its own first results."""

    name = "bm25"

    def __init__(self, collection: Collection, settings: RM3Settings = RM3Settings()) -> None:
        self.base = BM25Retriever(collection)
        self.settings = settings

    def expand(self, queries: Sequence[str]) -> list[str]:
        s = self.settings
        first = self.base.search(list(queries), s.docs)
        return [" ".join([q] * s.query_weight + expansion_terms(q, [h.text for h in hits], s.terms))
                for q, hits in zip(queries, first)]

    def search(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        return self.base.search(self.expand(queries), k)


class Rocchio:
    """Dense retrieval with the query vector moved toward its first results."""

    name = "dense"

    def __init__(self, dense: DenseRetriever, settings: RocchioSettings = RocchioSettings()) -> None:
        self.dense = dense
        self.settings = settings

    def search(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        if not queries:
            return []
        index, s = self.dense.index, self.settings
        vectors = self.dense.embedder.encode(list(queries))
        first = index.scores(vectors, self.dense.windows)
        out = []
        for vector, row in zip(vectors, first):
            centroid = np.asarray(index.embeddings[top_k(row, s.docs)]).mean(axis=0)
            moved = vector + s.beta * centroid
            moved = moved / np.linalg.norm(moved)
            scores = index.scores(moved[None, :], self.dense.windows)[0]
            best = top_k(scores, k)
            out.append(hits_from_positions(self.dense.collection, best, scores[best]))
        return out
