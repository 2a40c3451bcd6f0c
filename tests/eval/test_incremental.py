import json

import pytest

from convrag.errors import DataFormatError
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


def test_a_damaged_line_before_the_last_is_named_and_nothing_is_cut(tmp_path):
    """Only the last line can be torn by a crash. Before, reading cut the file at the first bad line,
    so a damaged line in the middle threw away every finished turn after it (and a line without the
    task id raised KeyError)."""
    path = tmp_path / "fiqa.jsonl"
    good = [json.dumps({"task_id": f"c<::>{i}", "agent_response": "a"}) + "\n" for i in (1, 2)]
    for bad in (b"not json\n", b'{"agent_response": "no id"}\n', b'["a list"]\n', b'{"task_id": "\xff"}\n'):
        body = good[0].encode() + bad + good[1].encode()
        path.write_bytes(body)
        with pytest.raises(DataFormatError, match=r"fiqa\.jsonl:2: not a finished turn"):
            read_finished(path)
        assert path.read_bytes() == body  # nothing cut
    for torn in ('{"task_id": "c<::>3"', '{"task_id": "c<::>3"}', "[1]\n"):  # a last line a crash left, or garbage
        path.write_text(good[0] + good[1] + torn)
        assert list(read_finished(path)) == ["c<::>1", "c<::>2"]
        assert path.read_text() == good[0] + good[1]


def test_a_damaged_benchmark_index_is_built_again(sample, tmp_path):
    """An MT-RAG index damaged on disk stopped every `convrag eval` with an error until --rebuild;
    a missing or stale one was built again without being asked, and now so is a damaged one."""
    from convrag.eval.runner import BenchmarkIndexes

    first = BenchmarkIndexes(sample, tmp_path / "idx", dense=False).collection("fiqa")
    (first.version_dir / "bm25" / "data.csc.index.npy").write_bytes(b"\x00" * 64)
    again = BenchmarkIndexes(sample, tmp_path / "idx", dense=False).collection("fiqa")
    assert again.version_dir != first.version_dir and again.bm25.size == len(first)
