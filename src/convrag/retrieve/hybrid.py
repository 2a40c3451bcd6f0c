"""Hybrid retrieval: BM25 and dense lists fused by RRF (default, k=60) or by normalized score fusion."""

from __future__ import annotations

from collections.abc import Sequence

from ..fusion.rrf import reciprocal_rank_fusion
from ..fusion.score import combsum
from ..types import Hit
from .base import Retriever

FUSION_METHODS = ("rrf", "score")


class HybridRetriever:
    """Fuse two retrievers' top-``depth`` lists.

    ``alpha`` weighs dense against BM25: in score fusion the weights are
    ``(1 - alpha, alpha)``; in RRF, ``None`` (the default) gives both lists weight 1
    (plain RRF) and a number gives ``(2 * (1 - alpha), 2 * alpha)``.
    """

    name = "hybrid"

    def __init__(
        self,
        sparse: Retriever,
        dense: Retriever,
        fusion: str = "rrf",
        depth: int = 100,
        rrf_k: float = 60.0,
        alpha: float | None = None,
        norm: str = "minmax",
    ) -> None:
        if fusion not in FUSION_METHODS:
            raise ValueError(f"unknown fusion {fusion!r}; expected one of {', '.join(FUSION_METHODS)}")
        self.sparse, self.dense = sparse, dense
        self.fusion, self.depth, self.rrf_k, self.alpha, self.norm = fusion, depth, rrf_k, alpha, norm

    def search(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        depth = max(self.depth, k)
        sparse_lists = self.sparse.search(queries, depth)
        dense_lists = self.dense.search(queries, depth)
        results = []
        for sparse_hits, dense_hits in zip(sparse_lists, dense_lists):
            runs = [{h.doc_id: h.score for h in sparse_hits}, {h.doc_id: h.score for h in dense_hits}]
            alpha = 0.5 if self.alpha is None else self.alpha
            if self.fusion == "rrf":
                weights = None if self.alpha is None else [2 * (1 - alpha), 2 * alpha]
                fused = reciprocal_rank_fusion(runs, k=self.rrf_k, weights=weights)
            else:
                fused = combsum(runs, weights=[1.0 - alpha, alpha], norm=self.norm)
            by_id = {h.doc_id: h for h in dense_hits}
            by_id.update({h.doc_id: h for h in sparse_hits})
            ranked = sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:k]
            results.append(
                [by_id[doc_id]._replace(score=score, rank=rank) for rank, (doc_id, score) in enumerate(ranked, start=1)]
            )
        return results
