"""`convrag bench strategy-latency`: what each strategy costs per turn, measured on an idle machine.

`convrag bench strategies` reports latency from the time each model call took when it was first
made, by cache-warming runs that shared the two cores with other jobs; that is fine for quality
but not for comparing speed. This benchmark calls the model live (no completion cache), one
strategy after another over the same conversations, turns in conversation order (as a chat
would), and times the whole decision of each turn: embedding, context selection and model calls.

Two settings of the local backend are measured: with prompt-prefix reuse (the default, as
deployed) and without it (every call reads its whole prompt, as a backend without prefix
caching would). Nothing here is asserted in the test suite.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..console import RichReporter, console
from ..data.layout import MTRAGData
from ..eval.report import markdown_table
from ..index.atomic import write_json, write_text
from ..llm import make_llm
from ..llm.local import llama_build
from ..progress import SILENT, Reporter
from ..strategies import make_strategy
from ..types import Task
from .timing import machine_description

DEFAULT_STRATEGIES = ("full_rewrite", "targeted", "mmr_cluster", "summary", "progressive")


class TurnTiming(NamedTuple):
    """One strategy decision, timed."""

    task_id: str
    turn: int
    seconds: float
    llm_calls: int
    prompt_tokens: int
    stage: str


def sample_conversations(data: MTRAGData, per_domain: int) -> list[list[Task]]:
    """The first ``per_domain`` conversations of each domain (by id, so the sample is the same on
    every run), each as its tasks in turn order."""
    sample: list[list[Task]] = []
    for domain in data.domains:
        by_conversation: dict[str, list[Task]] = defaultdict(list)
        for task in data.tasks(domain):
            by_conversation[task.conversation_id].append(task)
        for conversation_id in sorted(by_conversation)[:per_domain]:
            sample.append(sorted(by_conversation[conversation_id], key=lambda t: t.turn))
    return sample


def time_strategy(name: str, llm: Any, conversations: Sequence[Sequence[Task]], reporter: Reporter = SILENT) -> list[TurnTiming]:
    """Wall time of every turn's decision, after one untimed warm-up turn (model and embedder load)."""
    strategy = make_strategy(name, llm)
    strategy.rewrite(conversations[0][-1])
    timings = []
    tasks = [t for conversation in conversations for t in conversation]
    with reporter.stage(name, total=len(tasks)) as advance:
        for task in tasks:
            start = time.perf_counter()
            trace = strategy.rewrite(task).trace
            seconds = time.perf_counter() - start
            timings.append(TurnTiming(task.task_id, task.turn, seconds, len(trace.calls), trace.prompt_tokens, trace.stage))
            advance(1)
    return timings


def summarize(timings: Sequence[TurnTiming]) -> dict[str, float]:
    seconds = np.asarray([t.seconds for t in timings])
    return {
        "turns": len(timings),
        "mean_s": float(seconds.mean()),
        "p50_s": float(np.percentile(seconds, 50)),
        "p95_s": float(np.percentile(seconds, 95)),
        "llm_calls_per_turn": float(np.mean([t.llm_calls for t in timings])),
        "prompt_tokens_per_turn": float(np.mean([t.prompt_tokens for t in timings])),
    }


#: the progressive strategy's mean latency per turn, as a share of full_rewrite's, per backend setting
MAX_SHARE = {"prefix reuse": 0.5, "no prefix reuse": 0.3}
MAX_P50_S = 1.0


def latency_targets(results: dict[str, dict[str, dict[str, float]]]) -> list[tuple[str, str, str, bool]]:
    """(setting, target, measured, met): progressive's mean against full_rewrite's (at most half with
    prefix reuse, 0.3 without), and its median under a second."""
    rows = []
    for setting, by_strategy in results.items():
        if "progressive" not in by_strategy:
            continue
        mine = by_strategy["progressive"]
        base = by_strategy.get("full_rewrite")
        share = MAX_SHARE.get(setting, 0.5)
        if base is not None:
            ratio = mine["mean_s"] / base["mean_s"]
            rows.append((setting, f"progressive mean <= {share}x full_rewrite's", f"{mine['mean_s']:.2f} s vs {base['mean_s']:.2f} s "
                         f"({ratio:.2f}x)", ratio <= share))
        rows.append((setting, f"progressive p50 < {MAX_P50_S:.0f} s", f"{mine['p50_s']:.2f} s", mine["p50_s"] < MAX_P50_S))
    return rows


def run_strategy_latency_benchmark(
    data_root: Path,
    out: Path,
    strategies: Sequence[str] = DEFAULT_STRATEGIES,
    per_domain: int = 2,
    without_reuse: Sequence[str] = ("full_rewrite", "progressive"),
    llm_spec: str = "local",
    split: str = "test",
) -> dict[str, Any]:
    data = MTRAGData.discover(data_root, split)
    conversations = sample_conversations(data, per_domain)
    local = llm_spec.partition(":")[0] == "local"
    settings: list[tuple[str, bool, Sequence[str]]] = [("prefix reuse", True, strategies)]
    if local and without_reuse:
        settings.append(("no prefix reuse", False, without_reuse))
    results: dict[str, dict[str, dict[str, float]]] = {}
    turns: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for setting, reuse, names in settings:
        options = {"reuse_prefix": reuse} if local else {}
        llm = make_llm(llm_spec, cache=False, **options)
        results[setting], turns[setting] = {}, {}
        for name in names:
            timings = time_strategy(name, llm, conversations, RichReporter())
            results[setting][name] = summarize(timings)
            turns[setting][name] = [t._asdict() for t in timings]
            console.out(f"{setting} / {name}: {results[setting][name]}")
    rows = latency_targets(results)
    report = {
        "date": dt.date.today().isoformat(),
        "machine": machine_description(),
        "llm": llm_spec + (f" ({llama_build()})" if local else ""),
        "conversations": [c[0].conversation_id for c in conversations],
        "results": results,
        "targets": [{"setting": s, "target": t, "measured": m, "met": ok} for s, t, m, ok in rows],
        "turns": turns,
    }
    write_json(out / "report.json", report)
    n_turns = sum(len(c) for c in conversations)
    table = markdown_table(
        ["setting", "strategy", "turns", "mean s", "p50 s", "p95 s", "LLM calls/turn", "prompt tokens/turn"],
        [[s, n, r["turns"], r["mean_s"], r["p50_s"], r["p95_s"], r["llm_calls_per_turn"], r["prompt_tokens_per_turn"]]
         for s, by in results.items() for n, r in by.items()],
    )
    markdown = "\n".join(
        [
            f"Machine: {report['machine']}; LLM {report['llm']}, no completion cache; date {report['date']}; "
            f"{len(conversations)} conversations ({per_domain} per domain), {n_turns} turns in order.\n",
            table,
            "\n### Targets\n",
            markdown_table(["setting", "target", "measured", "verdict"], [[s, t, m, "met" if ok else "**missed**"] for s, t, m, ok in rows]),
        ]
    )
    write_text(out / "report.md", markdown + "\n")
    console.out(markdown, highlight=False)
    console.out(f"\nwrote {out / 'report.md'} and {out / 'report.json'}")
    return report
