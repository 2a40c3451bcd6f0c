"""The strategies with the real local model on real MT-RAG conversations from the bundled sample."""

import pytest

from convrag.strategies import make_strategy
from convrag.strategies.standalone import standalone_verdict
from tests.helpers import CARDINALS, make_task


@pytest.fixture(scope="module")
def follow_ups(sample):  # type: ignore[no-untyped-def]
    """The first two follow-up turns with a dependency marker in each of two sample domains."""
    chosen = []
    for domain in ("cloud", "clapnq"):
        tasks = [t for t in sample.tasks(domain) if t.turn > 1 and not standalone_verdict(t.question).standalone]
        chosen += tasks[:2]
    assert len(chosen) == 4
    return chosen


@pytest.mark.slow
@pytest.mark.parametrize("name", ["progressive", "mmr_cluster"])
def test_strategies_run_the_real_model_on_real_conversations(name, local_llm, embedder, follow_ups):
    # by default progressive sends every follow-up with a marker (these all have one) to the model
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
def test_the_real_model_resolves_an_explicit_reference(local_llm, embedder):
    task = make_task("What about outside the US, do they play there?", CARDINALS[:2])
    result = make_strategy("progressive", local_llm, embedder).rewrite(task)
    assert result.trace.stage == "2" and len(result.trace.calls) == 1, result.trace.to_dict()
    assert "cardinals" in result.query.lower(), result.trace.to_dict()
