"""The strategy latency benchmark's sampling, timing loop and target verdicts (no figures asserted)."""

from __future__ import annotations

from convrag.bench.strategy_latency import latency_targets, sample_conversations, summarize, time_strategy
from convrag.data.layout import MTRAGData
from tests.helpers import ScriptedLLM


def test_samples_the_first_conversations_of_each_domain_in_turn_order(sample: MTRAGData) -> None:
    conversations = sample_conversations(sample, per_domain=1)
    assert [c[0].domain for c in conversations] == sample.domains
    for conversation, domain in zip(conversations, sample.domains):
        ids = sorted({t.conversation_id for t in sample.tasks(domain)})
        assert {t.conversation_id for t in conversation} == {ids[0]}
        assert [t.turn for t in conversation] == sorted(t.turn for t in conversation)
        assert len(conversation) == sum(t.conversation_id == ids[0] for t in sample.tasks(domain))


def test_times_every_turn_after_an_untimed_warm_up(sample: MTRAGData) -> None:
    conversations = sample_conversations(sample, per_domain=1)[:1]
    turns = conversations[0]
    # full_rewrite calls the model on every follow-up turn; the warm-up rewrites the last turn once more
    follow_ups = sum(t.turn > 1 for t in turns)
    llm = ScriptedLLM(rewrite=[f"What is standalone question {i}?" for i in range(follow_ups + 1)])
    timings = time_strategy("full_rewrite", llm, conversations)
    assert [t.task_id for t in timings] == [t.task_id for t in turns]
    assert all(t.seconds >= 0 for t in timings)
    assert [t.llm_calls for t in timings] == [int(t.turn > 1) for t in turns]
    figures = summarize(timings)
    assert figures["turns"] == len(turns) and figures["llm_calls_per_turn"] == follow_ups / len(turns)


def test_latency_targets_compare_progressive_with_full_rewrite_per_setting() -> None:
    def at(mean: float, p50: float) -> dict[str, float]:
        return {"mean_s": mean, "p50_s": p50}

    rows = latency_targets({
        "prefix reuse": {"progressive": at(1.0, 0.2), "full_rewrite": at(2.5, 2.0)},
        "no prefix reuse": {"progressive": at(4.0, 1.5), "full_rewrite": at(12.0, 11.0)},
        "other backend": {"progressive": at(1.0, 0.5)},  # no baseline measured: only the p50 verdict
    })
    assert [(setting, target, met) for setting, target, _, met in rows] == [
        ("prefix reuse", "progressive mean <= 0.5x full_rewrite's", True),
        ("prefix reuse", "progressive p50 < 1 s", True),
        ("no prefix reuse", "progressive mean <= 0.3x full_rewrite's", False),
        ("no prefix reuse", "progressive p50 < 1 s", False),
        ("other backend", "progressive p50 < 1 s", True),
    ]
