import math
import random

import pytest
from ranx import Qrels, Run, evaluate

from convrag.eval.metrics import collection_score, metric_names, per_query_scores, weighted_average


def test_hand_computed_values() -> None:
    qrels = {"q": {"a": 1, "b": 1}}
    run = {"q": {"x": 3.0, "a": 2.0, "y": 1.0}}
    scores = per_query_scores(qrels, run)["q"]
    assert scores["Recall@1"] == 0.0 and scores["Recall@3"] == 0.5
    ideal = 1 + 1 / math.log2(3)
    assert scores["nDCG@3"] == pytest.approx((1 / math.log2(3)) / ideal)


def test_identical_ids_are_ignored_like_the_official_scorer() -> None:
    scores = per_query_scores({"q": {"a": 1}}, {"q": {"q": 9.0, "a": 1.0}})
    assert scores["q"]["nDCG@1"] == 1.0


def test_unjudged_queries_are_not_scored() -> None:
    assert set(per_query_scores({"q": {"a": 1}}, {"q": {"a": 1.0}, "other": {"a": 1.0}})) == {"q"}


def test_parity_with_ranx_on_random_runs() -> None:
    """Two independent implementations (trec_eval's C code and ranx) agree on tie-free runs."""
    rng = random.Random(7)
    docs = [f"d{i}" for i in range(60)]
    qrels = {f"q{i}": {d: rng.choice([1, 2]) for d in rng.sample(docs, rng.randint(1, 6))} for i in range(40)}
    run = {q: {d: rng.random() for d in rng.sample(docs, 25)} for q in qrels}
    ours = per_query_scores(qrels, run)
    metrics = [f"{m}@{k}" for m in ("ndcg", "recall") for k in (1, 3, 5, 10)]
    for q in qrels:
        theirs = evaluate(Qrels({q: qrels[q]}), Run({q: run[q]}), metrics)
        for k in (1, 3, 5, 10):
            assert ours[q][f"nDCG@{k}"] == pytest.approx(theirs[f"ndcg@{k}"], abs=1e-9)
            assert ours[q][f"Recall@{k}"] == pytest.approx(theirs[f"recall@{k}"], abs=1e-9)


def test_official_aggregation_rounds_then_weights_by_count() -> None:
    a = collection_score("a", {"q1": dict.fromkeys(metric_names(), 0.123456), "q2": dict.fromkeys(metric_names(), 0.0)}, count=2)
    b = collection_score("b", {"q3": dict.fromkeys(metric_names(), 1.0)}, count=1)
    assert a.means["nDCG@10"] == 0.06173  # rounded to 5 decimals, as the official scorer does
    overall = weighted_average([a, b])
    assert overall.count == 3
    assert overall.means["nDCG@10"] == pytest.approx((0.06173 * 2 + 1.0) / 3)
