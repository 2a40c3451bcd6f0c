import numpy as np

from convrag.strategies.mmr import mmr_select


def unit(*v: float) -> np.ndarray:
    a = np.array(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def test_pure_relevance_orders_by_similarity():
    q = unit(1, 0)
    cands = np.stack([unit(0, 1), unit(1, 0.1), unit(1, 0.5)])
    assert mmr_select(q, cands, 3, lambda_=1.0) == [1, 2, 0]


def test_diversity_skips_a_near_duplicate():
    q = unit(1, 0.2)
    cands = np.stack([unit(1, 0.2), unit(1, 0.19), unit(0.3, 1)])
    assert mmr_select(q, cands, 2, lambda_=0.7) == [0, 1]
    assert mmr_select(q, cands, 2, lambda_=0.3) == [0, 2]
    assert mmr_select(q, cands, 2, lambda_=1.0) == [0, 1]


def test_edge_cases():
    assert mmr_select(unit(1, 0), np.zeros((0, 2)), 5) == []
    assert mmr_select(unit(1, 0), np.stack([unit(1, 0)]), 5) == [0]
