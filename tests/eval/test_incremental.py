import json

import pytest

from convrag.eval.incremental import read_finished, run_incremental
from convrag.pipeline import PipelineSpec, build_pipeline
from tests.helpers import ScriptedLLM


def pipelines(indexes, llm):  # type: ignore[no-untyped-def]
    # "ungated": every turn reaches the model (the default decline gate may answer one without a call)
    spec = PipelineSpec(("fiqa",), strategy="last_turn", retriever="bm25", answer="ungated")
    return {"fiqa": build_pipeline(spec, llm=llm, opened={"fiqa": indexes.collection("fiqa")})}


def test_runs_turn_by_turn_with_its_own_answers_and_resumes(sample, tmp_path):
    from convrag.eval.runner import BenchmarkIndexes

    data = sample
    indexes = BenchmarkIndexes(sample, tmp_path / "idx", dense=False)
    turns = sum(len(c.tasks()) for c in data.conversations if c.domain == "fiqa")
    first = ScriptedLLM(answer=[f"generated answer {i} [1]" for i in range(3)])
    with pytest.raises(AssertionError, match="unexpected answer call"):  # the scripted model "crashes" at turn 4
        run_incremental(data, ["fiqa"], pipelines(indexes, first), tmp_path / "out")
    inter = tmp_path / "out" / "intermediate" / "fiqa.jsonl"
    assert len(read_finished(inter)) == 3
    with open(inter, "ab") as fh:  # a torn line, as a kill mid-write leaves it
        fh.write(b'{"task_id": "torn')

    second = ScriptedLLM(answer=[f"later answer {i} [1]" for i in range(turns - 3)])
    result = run_incremental(data, ["fiqa"], pipelines(indexes, second), tmp_path / "out")
    assert len(second.requests) == turns - 3  # finished turns were not redone
    records = [json.loads(line) for line in inter.read_text().splitlines()]
    assert len(records) == turns and len({r["task_id"] for r in records}) == turns
    # Turn 4's history holds the answers convrag generated, not the benchmark's.
    assert "generated answer 2 [1]" in second.requests[0][1][-1]["content"]
    dataset = [json.loads(line) for line in (tmp_path / "out" / "datasets" / "fiqa.jsonl").read_text().splitlines()]
    assert set(dataset[0]) == {"_id", "text", "agent_response"} and dataset[0]["text"].startswith("|user|: ")
    assert {"original_query", "final_query", "stage", "contexts", "agent_response"} <= set(records[0])
    assert set(records[0]["contexts"][0]) == {"document_id", "title", "text", "score", "url"}
    assert result.domains["fiqa"].count == len(data.tasks("fiqa")) and result.all is not None


def test_a_damaged_benchmark_index_is_built_again(sample, tmp_path):
    """An MT-RAG index damaged on disk stopped every `convrag eval` with an error until --rebuild;
    a missing or stale one was built again without being asked, and now so is a damaged one."""
    from convrag.eval.runner import BenchmarkIndexes

    first = BenchmarkIndexes(sample, tmp_path / "idx", dense=False).collection("fiqa")
    (first.version_dir / "bm25" / "data.csc.index.npy").write_bytes(b"\x00" * 64)
    again = BenchmarkIndexes(sample, tmp_path / "idx", dense=False).collection("fiqa")
    assert again.version_dir != first.version_dir and again.bm25.size == len(first)
