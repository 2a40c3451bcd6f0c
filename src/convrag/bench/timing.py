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


def _first_cpu(path: str) -> dict[str, str]:
    """The fields of the first processor in a ``/proc/cpuinfo``-style file ({} when unreadable)."""
    fields: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    if fields:
                        break
                    continue
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return fields


def machine_description(cpuinfo: str = "/proc/cpuinfo") -> str:
    """CPU model, usable cores and Python version, for the benchmark report.

    A virtual machine often names its CPU by vendor alone ("AMD EPYC"), and two hosts of that name
    can differ twofold in how fast llama.cpp reads a prompt (seen here: about 95 and 45 tokens/s on
    two cores), so the CPU's family and model numbers and its widest vector unit are given too:
    latencies from machines whose descriptions differ are not to be compared."""
    cpu = _first_cpu(cpuinfo)
    model = cpu.get("model name") or platform.processor() or platform.machine()
    detail = []
    if cpu.get("cpu family") and cpu.get("model"):
        detail.append(f"family {cpu['cpu family']} model {cpu['model']}")
    flags = set(cpu.get("flags", "").split())
    if flags:
        detail.append("AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    named = f"{model} ({', '.join(detail)})" if detail else model
    return f"{named}, {cores} cores usable, Python {platform.python_version()}"
