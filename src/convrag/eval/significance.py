"""Paired significance tests between two runs over the same queries (scipy).

Two tests are reported, as IR papers usually do: the paired t-test and a paired
randomization (sign-flip permutation) test, which makes no normality assumption.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class PairedTest:
    metric: str
    n: int
    mean_baseline: float
    mean_run: float
    delta: float
    p_ttest: float
    p_randomization: float

    def significant(self, alpha: float = 0.05) -> bool:
        return self.p_randomization < alpha


def paired_test(
    baseline: Mapping[str, Mapping[str, float]],
    run: Mapping[str, Mapping[str, float]],
    metric: str = "nDCG@10",
    resamples: int = 10_000,
    seed: int = 0,
) -> PairedTest:
    """Compare per-query ``metric`` of ``run`` against ``baseline`` on the queries both scored."""
    shared = sorted(set(baseline) & set(run))
    a = np.array([baseline[q][metric] for q in shared], dtype=float)
    b = np.array([run[q][metric] for q in shared], dtype=float)
    if len(shared) < 2 or np.allclose(a, b):
        p = 1.0
        return PairedTest(metric, len(shared), float(a.mean()) if len(a) else 0.0, float(b.mean()) if len(b) else 0.0,
                          float((b - a).mean()) if len(a) else 0.0, p, p)
    t_p = float(stats.ttest_rel(b, a).pvalue)
    perm = stats.permutation_test(
        (b, a),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=resamples,
        alternative="two-sided",
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    return PairedTest(metric, len(shared), float(a.mean()), float(b.mean()), float((b - a).mean()), t_p, float(perm.pvalue))
