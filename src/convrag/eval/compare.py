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
SUMMARY_FILE = "summary.json"
#: a change in a task's figure smaller than this is none (a figure read back from JSON, summed in another order)
SAME = 1e-9


class TaskChange(NamedTuple):
    """One task's figure in the baseline and in the other run, and the query each searched ("" for a run
    scored from another system's file, which holds none)."""

    task: str
    baseline: float
    other: float
    baseline_query: str = ""
    other_query: str = ""

    @property
    def delta(self) -> float:
        return self.other - self.baseline


class RunComparison(NamedTuple):
    """One run present in both folders, its paired test (``run`` against ``baseline``) on the tasks
    both scored, how many tasks only one of them scored (left out of the test), and each shared
    task's change, the largest gain first: a mean delta of +0.01 may be forty tasks helped and
    thirty hurt, and which ones is what a reader of the two runs looks at next."""

    name: str
    test: PairedTest
    only_baseline: int = 0
    only_other: int = 0
    changes: tuple[TaskChange, ...] = ()

    def counts(self) -> tuple[int, int, int]:
        """Tasks the other run did better on, the same (within :data:`SAME`), and worse."""
        better, worse = len(self.gains()), len(self.losses())
        return better, len(self.changes) - better - worse, worse

    def gains(self) -> list[TaskChange]:
        """The tasks the other run did better on, the largest gain first."""
        return [c for c in self.changes if c.delta > SAME]

    def losses(self) -> list[TaskChange]:
        """The tasks it did worse on, the largest loss first."""
        return [c for c in reversed(self.changes) if c.delta < -SAME]


def current_runs(folder: Path) -> set[str] | None:
    """The runs the folder's last ``eval`` or ``score`` wrote, as its ``summary.json`` lists them; None
    where it has none. An output folder used again for another grid keeps the run folders of the one
    before, and pairing one of those stale runs reads as a result of today's."""
    try:
        return {str(run["name"]) for run in parse_json((Path(folder) / SUMMARY_FILE).read_text())["runs"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None


class StoredRun(NamedTuple):
    """A run as its ``metrics.json`` holds it: each task's figures, and the query each task searched."""

    per_query: dict[str, dict[str, float]]
    queries: dict[str, str]


def stored_runs(folder: Path) -> dict[str, StoredRun]:
    """Every run under an eval output folder that its last ``eval`` or ``score`` wrote
    (:func:`current_runs`), by name, each file read once."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{folder} is not a folder of `convrag eval` runs")
    current = current_runs(folder)
    runs: dict[str, StoredRun] = {}
    for path in sorted(folder.glob(f"*/{METRICS_FILE}")):
        try:
            data = parse_json(path.read_text())
            if current is not None and str(data["name"]) not in current:
                continue
            runs[str(data["name"])] = StoredRun(
                {str(q): {str(k): _figure(v, q, k) for k, v in m.items()} for q, m in data["per_query"].items()},
                {str(t): str(q) for t, q in (data.get("queries") or {}).items()})
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(f"{path} is not a convrag run's metrics file ({exc})") from None
    if not runs:
        raise ConfigError(f"{folder} holds no run ({METRICS_FILE} under a sub-folder); give a `convrag eval --out` folder")
    return runs


def per_query_runs(folder: Path) -> dict[str, dict[str, dict[str, float]]]:
    """``{run name: per-query metrics}`` of the runs :func:`stored_runs` finds."""
    return {name: run.per_query for name, run in stored_runs(folder).items()}


def _figure(value: object, task: str, metric: str) -> float:
    """A per-query figure as a number; a string, a null or a NaN (a hand-edited or foreign file) is
    refused here, naming the task, instead of failing inside the paired test or passing into its mean."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"task {task!r}: {metric} is {value!r}, not a number")
    return float(value)


def compare_folders(baseline: Path, other: Path, metric: str = "nDCG@10") -> list[RunComparison]:
    """Every run of ``other`` against the run of the same name in ``baseline``, on the tasks both scored."""
    base_runs, other_runs = stored_runs(baseline), stored_runs(other)
    shared = [name for name in other_runs if name in base_runs]
    if not shared:
        raise ConfigError(f"no run name is in both {baseline} ({', '.join(base_runs)}) and {other} ({', '.join(other_runs)})")
    comparisons = []
    for name in shared:
        first = next(iter(other_runs[name].per_query.values()), {})
        if metric not in first:
            raise ConfigError(f"run {name!r} has no per-query {metric}; known: {', '.join(first)}")
        (base, base_queries), (run, run_queries) = base_runs[name], other_runs[name]
        lacking = next((task for task in sorted(set(base) & set(run)) if metric not in base[task] or metric not in run[task]), None)
        if lacking is not None:  # a KeyError inside the paired test before
            raise ConfigError(f"run {name!r} has no {metric} for task {lacking!r} in one of the folders")
        if not set(base) & set(run):  # a test on nothing would read as "no difference, p = 1"
            raise ConfigError(
                f"run {name!r} scored no task in common in {baseline} ({len(base)} tasks) and {other} ({len(run)} tasks); "
                f"were they run on different splits or domains?"
            )
        changes = sorted((TaskChange(task, base[task][metric], run[task][metric], base_queries.get(task, ""), run_queries.get(task, ""))
                          for task in run if task in base), key=lambda c: (-c.delta, c.task))
        comparisons.append(RunComparison(name, paired_test(base, run, metric), len(set(base) - set(run)), len(set(run) - set(base)),
                                         tuple(changes)))
    return comparisons
