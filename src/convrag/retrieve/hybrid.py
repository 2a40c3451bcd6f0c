"""Hybrid retrieval: the BM25 and dense top-``depth`` lists fused by a :mod:`convrag.fusion` method.

The default, chosen on MT-RAG's dev half (human rewrites), is min-max normalized score fusion
(CombSUM) with weight 0.7 on the dense side: 0.364 ALL-3 nDCG@10 against 0.330 for equal-weight RRF
(docs/benchmarks.md). RRF (constant ``rrf_k``) and CombMNZ remain options."""

from __future__ import annotations

from collections.abc import Sequence

from ..fusion import RRF_K, fuse_lists, get_fusion
from ..types import Hit
from .base import Retriever

DEFAULT_FUSION = "combsum"
DEFAULT_ALPHA = 0.7


class HybridRetriever:
    """Fuse two retrievers' top-``depth`` lists into the top ``k``.

    ``alpha`` weighs dense against BM25: in score fusion the weights are ``(1 - alpha, alpha)``
    (``None``: 0.5 each); in RRF, ``None`` gives both lists weight 1 (plain RRF) and a number gives
    ``(2 * (1 - alpha), 2 * alpha)``. Each list is ranked by score, equal
    scores by passage id, before fusing, so that ties do not depend on index order.
    """

    name = "hybrid"

    def __init__(
        self,
        sparse: Retriever,
        dense: Retriever,
        fusion: str = DEFAULT_FUSION,
        depth: int = 100,
        rrf_k: float = RRF_K,
        alpha: float | None = DEFAULT_ALPHA,
        norm: str = "minmax",
    ) -> None:
        get_fusion(fusion)  # refuses an unknown name
        self.sparse, self.dense = sparse, dense
        self.fusion, self.depth, self.rrf_k, self.alpha, self.norm = fusion, depth, rrf_k, alpha, norm

    def weights(self) -> list[float] | None:
        if self.fusion == "rrf":
            return None if self.alpha is None else [2 * (1 - self.alpha), 2 * self.alpha]
        alpha = 0.5 if self.alpha is None else self.alpha
        return [1.0 - alpha, alpha]

    def search(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        depth = max(self.depth, k)
        pairs = zip(self.sparse.search(queries, depth), self.dense.search(queries, depth))
        weights = self.weights()
        return [
            fuse_lists([_by_score(sparse_hits), _by_score(dense_hits)], self.fusion, weights, self.rrf_k, self.norm, depth=k)
            for sparse_hits, dense_hits in pairs
        ]


def _by_score(hits: Sequence[Hit]) -> list[Hit]:
    return sorted(hits, key=lambda h: (-h.score, h.doc_id))
