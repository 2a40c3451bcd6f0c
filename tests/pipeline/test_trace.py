"""The turn trace: one to_dict(), one documented JSON schema, kept in sync."""

import json
from pathlib import Path

from pydantic import TypeAdapter

from convrag.pipeline.trace import TurnTrace, TurnTraceDict, turn_trace_schema

SCHEMA_FILE = Path(__file__).parents[2] / "docs" / "turn-trace.schema.json"


def test_the_documented_schema_is_the_current_one() -> None:
    assert json.loads(SCHEMA_FILE.read_text()) == json.loads(json.dumps(turn_trace_schema(), sort_keys=True)), (
        "regenerate it: convrag trace-schema > docs/turn-trace.schema.json")


def test_an_empty_turn_and_a_declined_one_fit_the_schema() -> None:
    adapter = TypeAdapter(TurnTraceDict)
    adapter.validate_python(TurnTrace().to_dict())
    declined = TurnTrace(fallback="no chosen collection has documents yet", empty_collections=["faq"], timings_s={"total": 0.01})
    assert adapter.validate_python(declined.to_dict())["empty_collections"] == ["faq"]


def test_a_strategy_trace_stored_before_self_contained_was_recorded_still_fits() -> None:
    from convrag.strategies.base import Trace

    adapter = TypeAdapter(TurnTraceDict)
    strategy = Trace("t1", "progressive", "Is it free?", "Is it free?", "1", self_contained=True).to_dict()
    assert adapter.validate_python({"strategy": strategy})["strategy"]["self_contained"] is True
    del strategy["self_contained"]  # a turn stored by an earlier version
    assert "self_contained" not in adapter.validate_python({"strategy": strategy})["strategy"]
