from convrag.eval.strategy_stats import stats_markdown, strategy_stats
from convrag.strategies.base import Fallback, LLMCall, Trace
from tests.helpers import make_task


def _trace(task_id, stage, calls=0, noop=False, latency=0.01, fallbacks=()):  # type: ignore[no-untyped-def]
    t = Trace(task_id, "progressive", "q", "q", stage, noop=noop, latency_s=latency)
    t.calls = [LLMCall("rewrite", stage, [], "a", 100, 10, 2.0, cached=True) for _ in range(calls)]
    t.fallbacks = [Fallback(stage, r) for r in fallbacks]
    return t


def test_stage_shares_costs_and_check_rates():
    tasks = {
        "a<::>1": make_task("q", [], task_id="a<::>1"),
        "a<::>2": make_task("q", [("u", "a")], task_id="a<::>2"),
        "a<::>3": make_task("q", [("u", "a")] * 2, task_id="a<::>3"),
        "a<::>4": make_task("q", [("u", "a")] * 3, task_id="a<::>4", domain="cloud"),
    }
    traces = {
        "a<::>1": _trace("a<::>1", "1"),
        "a<::>2": _trace("a<::>2", "1"),
        "a<::>3": _trace("a<::>3", "2a", calls=2, noop=True, fallbacks=["lost_content"]),
        "a<::>4": _trace("a<::>4", "3", calls=4),
    }
    stats = strategy_stats(traces, tasks)
    s = stats["ALL"]
    assert s["tasks"] == 4 and s["follow_up_tasks"] == 3
    assert s["stage_share_follow_up"] == {"1": round(1 / 3, 4), "2a": round(1 / 3, 4), "3": round(1 / 3, 4)}
    assert s["llm_calls_per_turn"] == 1.5 and s["prompt_tokens_per_turn"] == 150
    assert s["noop_rate_follow_up"] == round(1 / 3, 4)
    assert s["fallbacks"] == {"lost_content": 1} and s["check_fire_rate_per_rewrite"] == {"lost_content": round(1 / 6, 4)}
    # cached calls count with their recorded latency: 4 calls x 2 s + 0.01 s of wall time
    assert abs(s["latency_s_mean"] - (0.01 * 4 + 12) / 4) < 1e-3
    assert set(stats) == {"clapnq", "cloud", "ALL"}
    assert "| progressive | ALL | 4 |" in stats_markdown({"progressive": stats})
