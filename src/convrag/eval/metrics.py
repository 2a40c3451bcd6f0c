"""Recall@k and nDCG@k exactly as MT-RAG's official retrieval scorer computes them.

The official scorer (``scripts/evaluation/run_retrieval_eval.py``) evaluates each
collection separately with pytrec_eval (``recall.k`` and ``ndcg_cut.k``), takes
the mean over the evaluated queries rounded to 5 decimals, and averages the
collections weighted by their number of tasks. These functions reproduce each
step; the per-query values come straight from pytrec_eval (trec_eval's C code).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pytrec_eval

K_VALUES: tuple[int, ...] = (1, 3, 5, 10)
Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]
PerQuery = dict[str, dict[str, float]]


def metric_names(k_values: Sequence[int] = K_VALUES) -> list[str]:
    """Display names, recall first: ``Recall@1 ... nDCG@10``."""
    return [f"Recall@{k}" for k in k_values] + [f"nDCG@{k}" for k in k_values]


def per_query_scores(qrels: Qrels, run: Run, k_values: Sequence[int] = K_VALUES) -> PerQuery:
    """pytrec_eval's per-query Recall@k and nDCG@k, renamed to display names.

    As in the official scorer, a passage whose id equals the query id is
    ignored, and queries without judgements are not scored.
    """
    cleaned = {qid: {pid: float(s) for pid, s in docs.items() if pid != qid} for qid, docs in run.items()}
    ks = ",".join(str(k) for k in k_values)
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: dict(d) for q, d in qrels.items()}, {f"ndcg_cut.{ks}", f"recall.{ks}"}
    )
    raw = evaluator.evaluate(cleaned)
    return {
        qid: {
            **{f"Recall@{k}": values[f"recall_{k}"] for k in k_values},
            **{f"nDCG@{k}": values[f"ndcg_cut_{k}"] for k in k_values},
        }
        for qid, values in raw.items()
    }


@dataclass(frozen=True)
class CollectionScore:
    """One collection's official aggregate: means rounded to 5 decimals, and its task count."""

    name: str
    count: int
    evaluated: int
    means: dict[str, float]


def collection_score(name: str, scores: PerQuery, count: int, k_values: Sequence[int] = K_VALUES) -> CollectionScore:
    """The official per-collection mean (rounded to 5 decimals, as the scorer does before weighting)."""
    names = metric_names(k_values)
    if not scores:
        return CollectionScore(name, count, 0, {m: 0.0 for m in names})
    means = {m: round(sum(s[m] for s in scores.values()) / len(scores), 5) for m in names}
    return CollectionScore(name, count, len(scores), means)


def weighted_average(parts: Iterable[CollectionScore], name: str = "ALL") -> CollectionScore:
    """Collections averaged weighted by task count, the official scorer's ``all`` row."""
    parts = list(parts)
    total = sum(p.count for p in parts)
    if not parts or total == 0:
        return CollectionScore(name, 0, 0, {})
    metrics = list(parts[0].means)
    means = {m: sum(p.means[m] * p.count for p in parts) / total for m in metrics}
    return CollectionScore(name, total, sum(p.evaluated for p in parts), means)
