"""Small timing and memory helpers shared by the benchmarks."""

from __future__ import annotations

import os
import platform
import resource
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np


def latencies_ms(fn: Callable[[str], object], queries: Sequence[str], warmup: int = 5) -> np.ndarray:
    """Milliseconds per call of ``fn(query)``, one query at a time, after a few warm-up calls."""
    for query in queries[:warmup]:
        fn(query)
    out = []
    for query in queries:
        start = time.perf_counter()
        fn(query)
        out.append((time.perf_counter() - start) * 1000)
    return np.asarray(out)


def percentiles(values: np.ndarray) -> dict[str, float]:
    return {"p50": float(np.percentile(values, 50)), "p95": float(np.percentile(values, 95)), "n": int(len(values))}


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def machine_description() -> str:
    """CPU model, usable cores and Python version, for the benchmark report."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), model)
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {cores} cores usable, Python {platform.python_version()}"
