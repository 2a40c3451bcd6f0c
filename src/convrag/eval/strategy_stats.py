"""What a strategy cost and how it decided, per domain: stage shares, no-op rate, model calls,
prompt tokens, latency and how often each acceptance check fired."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..strategies.base import Trace
from ..types import Task


def _summarize(traces: Sequence[Trace], turns: Sequence[int]) -> dict[str, Any]:
    n = len(traces)
    if not n:
        return {"tasks": 0}
    follow = [t for t, turn in zip(traces, turns) if turn > 1]
    latencies = np.array([t.effective_latency_s for t in traces])
    stages = Counter(t.stage for t in traces)
    stages_follow = Counter(t.stage for t in follow)
    reasons = Counter(f.reason for t in traces for f in t.fallbacks)
    rewrites = sum(1 for t in traces for c in t.calls if c.purpose in ("rewrite", "summarize"))
    return {
        "tasks": n,
        "follow_up_tasks": len(follow),
        "stage_share": {k: round(v / n, 4) for k, v in sorted(stages.items())},
        "stage_share_follow_up": {k: round(v / len(follow), 4) for k, v in sorted(stages_follow.items())} if follow else {},
        "noop_rate": round(sum(t.noop for t in traces) / n, 4),
        "noop_rate_follow_up": round(sum(t.noop for t in follow) / len(follow), 4) if follow else 0.0,
        "llm_calls_per_turn": round(sum(len(t.calls) for t in traces) / n, 3),
        "llm_calls_per_follow_up": round(sum(len(t.calls) for t in follow) / len(follow), 3) if follow else 0.0,
        "prompt_tokens_per_turn": round(sum(t.prompt_tokens for t in traces) / n, 1),
        "latency_s_mean": round(float(latencies.mean()), 3),
        "latency_s_p50": round(float(np.percentile(latencies, 50)), 3),
        "latency_s_p95": round(float(np.percentile(latencies, 95)), 3),
        "fallbacks": dict(reasons.most_common()),
        "check_fire_rate_per_rewrite": {k: round(v / rewrites, 4) for k, v in reasons.most_common()} if rewrites else {},
        "trimmed_turns": sum(1 for t in traces if t.trimmed_turns),
    }


def strategy_stats(traces: Mapping[str, Trace], tasks: Mapping[str, Task]) -> dict[str, dict[str, Any]]:
    """Statistics per domain and over all tasks (``ALL``)."""
    out: dict[str, dict[str, Any]] = {}
    ids = [tid for tid in traces if tid in tasks]
    for domain in sorted({tasks[tid].domain for tid in ids}):
        chosen = [tid for tid in ids if tasks[tid].domain == domain]
        out[domain] = _summarize([traces[t] for t in chosen], [tasks[t].turn for t in chosen])
    out["ALL"] = _summarize([traces[t] for t in ids], [tasks[t].turn for t in ids])
    return out


def stats_markdown(stats_by_strategy: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> str:
    """One row per strategy and domain."""
    lines = [
        "| strategy | domain | tasks | stage share (turns > 1) | no-op | LLM calls/turn | calls/follow-up | prompt tok/turn | latency p50 / p95 / mean (s) |",
        "|---|---|---:|---|---:|---:|---:|---:|---|",
    ]
    for name, per_domain in stats_by_strategy.items():
        for domain, s in per_domain.items():
            if not s.get("tasks"):
                continue
            shares = ", ".join(f"{k} {v:.0%}" for k, v in s["stage_share_follow_up"].items())
            lines.append(
                f"| {name} | {domain} | {s['tasks']} | {shares} | {s['noop_rate_follow_up']:.1%} | {s['llm_calls_per_turn']:.2f} "
                f"| {s['llm_calls_per_follow_up']:.2f} "
                f"| {s['prompt_tokens_per_turn']:.0f} | {s['latency_s_p50']:.2f} / {s['latency_s_p95']:.2f} / {s['latency_s_mean']:.2f} |"
            )
    return "\n".join(lines) + "\n"
