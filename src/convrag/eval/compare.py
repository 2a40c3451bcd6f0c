"""Paired comparison of two ``convrag eval`` output folders, run by run.

``convrag eval --baseline`` tests runs of one grid against each other. Comparing two *configurations*
of the same grid (two embedding models, two index builds, before and after a change) means pairing the
runs of the same name across two output folders, task by task. Each folder holds one sub-folder per
run with its ``metrics.json``, whose ``per_query`` figures are what the test pairs.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

from ..data.jsonl import parse_json
from ..errors import ConfigError
from .significance import PairedTest, paired_test

METRICS_FILE = "metrics.json"


class RunComparison(NamedTuple):
    """One run present in both folders, its paired test (``run`` against ``baseline``) on the tasks
    both scored, and how many tasks only one of them scored (left out of the test)."""

    name: str
    test: PairedTest
    only_baseline: int = 0
    only_other: int = 0


def per_query_runs(folder: Path) -> dict[str, dict[str, dict[str, float]]]:
    """``{run name: per-query metrics}`` of every run under an eval output folder."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{folder} is not a folder of `convrag eval` runs")
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for path in sorted(folder.glob(f"*/{METRICS_FILE}")):
        try:
            data = parse_json(path.read_text())
            runs[str(data["name"])] = {str(q): {str(k): _figure(v, q, k) for k, v in m.items()} for q, m in data["per_query"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(f"{path} is not a convrag run's metrics file ({exc})") from None
    if not runs:
        raise ConfigError(f"{folder} holds no run ({METRICS_FILE} under a sub-folder); give a `convrag eval --out` folder")
    return runs


def _figure(value: object, task: str, metric: str) -> float:
    """A per-query figure as a number; a string, a null or a NaN (a hand-edited or foreign file) is
    refused here, naming the task, instead of failing inside the paired test or passing into its mean."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"task {task!r}: {metric} is {value!r}, not a number")
    return float(value)


def compare_folders(baseline: Path, other: Path, metric: str = "nDCG@10") -> list[RunComparison]:
    """Every run of ``other`` against the run of the same name in ``baseline``, on the tasks both scored."""
    base_runs, other_runs = per_query_runs(baseline), per_query_runs(other)
    shared = [name for name in other_runs if name in base_runs]
    if not shared:
        raise ConfigError(f"no run name is in both {baseline} ({', '.join(base_runs)}) and {other} ({', '.join(other_runs)})")
    comparisons = []
    for name in shared:
        first = next(iter(other_runs[name].values()), {})
        if metric not in first:
            raise ConfigError(f"run {name!r} has no per-query {metric}; known: {', '.join(first)}")
        base, run = base_runs[name], other_runs[name]
        lacking = next((task for task in sorted(set(base) & set(run)) if metric not in base[task] or metric not in run[task]), None)
        if lacking is not None:  # a KeyError inside the paired test before
            raise ConfigError(f"run {name!r} has no {metric} for task {lacking!r} in one of the folders")
        if not set(base) & set(run):  # a test on nothing would read as "no difference, p = 1"
            raise ConfigError(
                f"run {name!r} scored no task in common in {baseline} ({len(base)} tasks) and {other} ({len(run)} tasks); "
                f"were they run on different splits or domains?"
            )
        comparisons.append(RunComparison(name, paired_test(base, run, metric), len(set(base) - set(run)), len(set(run) - set(base))))
    return comparisons
