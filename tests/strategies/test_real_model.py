"""The strategies with the real local model on real MT-RAG conversations from the bundled sample."""

import pytest

from convrag.strategies import make_strategy
from convrag.strategies.progressive import Progressive, ProgressiveSettings
from convrag.strategies.standalone import standalone_verdict
from tests.helpers import CARDINALS, make_task


@pytest.fixture(scope="module")
def follow_ups(sample):  # type: ignore[no-untyped-def]
    """Four follow-up turns with a pronoun from the sample, at most two per domain."""
    chosen = []
    for domain in sample.domains:
        tasks = [t for t in sample.tasks(domain) if t.turn > 1
                 and any(m.startswith("pronoun:") for m in standalone_verdict(t.question).markers)]
        chosen += tasks[: min(2, 4 - len(chosen))]
    assert len(chosen) == 4
    return chosen


@pytest.mark.slow
@pytest.mark.parametrize("name", ["progressive", "mmr_cluster"])
def test_strategies_run_the_real_model_on_real_conversations(name, local_llm, embedder, follow_ups):
    # by default progressive sends every follow-up with a pronoun (these all have one) to the model
    strategy = make_strategy(name, local_llm, embedder)
    for task in follow_ups:
        result = strategy.rewrite(task)
        trace = result.trace
        assert result.query.strip()
        assert trace.calls and all(c.error is None and c.prompt_tokens > 0 for c in trace.calls)
        assert trace.stage and trace.effective_latency_s > 0
        if not trace.fallbacks or trace.stage == "2":
            assert trace.final_query == result.query


@pytest.mark.slow
@pytest.mark.parametrize(
    ("exchanges", "settings"),
    [
        (CARDINALS[:1], ProgressiveSettings()),  # the default: the referent is in the last exchange
        (CARDINALS[:2], ProgressiveSettings(top_k=2)),  # two exchanges back: brought in as a similar turn
    ],
)
def test_the_real_model_resolves_an_explicit_reference(local_llm, embedder, exchanges, settings):
    task = make_task("What about outside the US, do they play there?", exchanges)
    result = Progressive(local_llm, embedder, settings).rewrite(task)
    assert result.trace.stage == "2" and len(result.trace.calls) == 1, result.trace.to_dict()
    assert "cardinals" in result.query.lower(), result.trace.to_dict()
