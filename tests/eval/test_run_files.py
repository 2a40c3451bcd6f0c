"""Other systems' run files, scored as convrag's own runs are: formats, trec_eval's order, errors that
name the line, coverage of the split, and parity with ``convrag eval``'s own figures."""

import gzip
import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from convrag.cli.main import app
from convrag.data.layout import MTRAGData, sample_root
from convrag.errors import ConfigError, DataFormatError
from convrag.eval.experiment import run_grid, write_outputs
from convrag.eval.run_files import coverage, default_name, read_run, score_external
from convrag.eval.runner import BenchmarkIndexes

# a clapnq task of the bundled sample judged with one relevant passage, and a second one
TASK = "0208bf26ec357a803445290fa88a2e9e<::>1"
RELEVANT = "850931827_11086-12414-0-1328"
OTHER_TASK = "0208bf26ec357a803445290fa88a2e9e<::>6"


@pytest.fixture(scope="module")
def data() -> MTRAGData:
    return MTRAGData.discover(sample_root())


def _tasks(data: MTRAGData) -> dict:
    return {t.task_id: t for d in data.domains for t in data.tasks(d)}


def _qrels(data: MTRAGData) -> dict:
    return {d: data.qrels(d) for d in data.domains}


def _trec(path: Path, rows: list[tuple[str, str, float]]) -> Path:
    path.write_text("".join(f"{task} Q0 {passage} {rank} {score} mine\n" for rank, (task, passage, score) in enumerate(rows, 1)))
    return path


def test_a_trec_run_is_scored_by_its_scores_not_its_rank_column(data: MTRAGData, tmp_path: Path) -> None:
    # the relevant passage is written first but scores lower: trec_eval ranks it second
    run = read_run(_trec(tmp_path / "mine.trec", [(TASK, RELEVANT, 1.0), (TASK, "zzz-0-1", 2.0)]))
    assert run.name == "mine" and run.format == "trec"
    assert [h.doc_id for h in run.hits[TASK]] == ["zzz-0-1", RELEVANT]
    result = score_external(run, _tasks(data), _qrels(data))
    assert result.per_query[TASK]["nDCG@10"] == pytest.approx(1 / math.log2(3))
    assert result.per_query[TASK]["Recall@1"] == 0.0 and result.per_query[TASK]["Recall@3"] == 1.0
    assert set(result.tasks) == {TASK} and result.domains["clapnq"].count == 1


def test_equal_scores_are_ordered_as_trec_eval_orders_them(data: MTRAGData, tmp_path: Path) -> None:
    """trec_eval breaks a tie by passage id, descending; pytrec_eval (its C code) does the same, so a
    list written in another order must still be read in that one."""
    below, above = "000-0-1", "zzz-0-1"  # the relevant id sorts between them
    run = read_run(_trec(tmp_path / "ties.trec", [(TASK, below, 1.0), (TASK, RELEVANT, 1.0), (TASK, above, 1.0)]))
    assert [h.doc_id for h in run.hits[TASK]] == [above, RELEVANT, below]
    assert score_external(run, _tasks(data), _qrels(data)).per_query[TASK]["nDCG@10"] == pytest.approx(1 / math.log2(3))


def test_the_benchmarks_result_jsonl_is_read_plain_or_gzipped(data: MTRAGData, tmp_path: Path) -> None:
    lines = [{"task_id": TASK, "Collection": "mt-rag-clapnq-elser-512-100-20240503",
              "contexts": [{"document_id": RELEVANT, "score": 3, "text": "..."}, {"document_id": "zzz-0-1", "score": 2.5}]},
             {"task_id": OTHER_TASK, "contexts": []}]
    path = tmp_path / "elser.jsonl.gz"
    path.write_bytes(gzip.compress("".join(json.dumps(line) + "\n" for line in lines).encode()))
    run = read_run(path)
    assert (run.name, run.format) == ("elser", "mtrag")
    result = score_external(run, _tasks(data), _qrels(data))
    # a task whose contexts are empty was run and found nothing: scored 0, not left out as a task the run lacks
    assert result.per_query[TASK]["nDCG@10"] == 1.0 and result.per_query[OTHER_TASK]["nDCG@10"] == 0.0
    assert result.all.count == 2


def test_tasks_without_results_are_left_out_unless_complete(data: MTRAGData, tmp_path: Path) -> None:
    run = read_run(_trec(tmp_path / "one.trec", [(TASK, RELEVANT, 1.0)]))
    tasks, qrels = _tasks(data), _qrels(data)
    official = score_external(run, tasks, qrels)
    assert official.all.means["nDCG@10"] == 1.0 and official.all.count == 1  # the official scorer's figure
    complete = score_external(run, tasks, qrels, complete=True)
    judged = sum(len(q) for q in qrels.values())
    assert complete.all.count == len(tasks) and len(complete.per_query) == judged
    assert complete.all.means["nDCG@10"] == pytest.approx(1 / judged, abs=1e-4)  # one task of all found, the rest nothing
    assert coverage(run, tasks).missing == tuple(t for t in tasks if t != TASK)


def test_coverage_tells_the_other_split_from_ids_that_are_no_task(data: MTRAGData, tmp_path: Path) -> None:
    every = [t.task_id for d in data.domains for t in data.tasks(d)]
    dev = data.with_split("dev")
    dev_tasks = {t.task_id: t for d in dev.domains for t in dev.tasks(d)}
    test_task = next(t for t in every if t not in dev_tasks)
    run = read_run(_trec(tmp_path / "r.trec", [(next(iter(dev_tasks)), "a-0-1", 1.0), (test_task, "a-0-1", 1.0),
                                              ("conversation::7", "a-0-1", 1.0)]))
    cover = coverage(run, dev_tasks, every)
    assert (cover.scored, cover.other_split, cover.unknown) == (1, 1, ("conversation::7",))
    assert len(cover.missing) == len(dev_tasks) - 1
    with pytest.raises(ConfigError, match=r"none of the run's 1 task ids .* \(the run has 'conversation::7'.*<::>"):
        score_external(read_run(_trec(tmp_path / "u.trec", [("conversation::7", "a-0-1", 1.0)])), dev_tasks, _qrels(data))


@pytest.mark.parametrize(("text", "message"), [
    ("", "the run is empty"),
    ("\n\n", "the run is empty"),
    (f"{TASK} Q0 a-0-1 1 0.5\n", r":1: expected 6 columns .* got 5"),
    (f"{TASK} Q0 a-0-1 1 high mine\n", r":1: the score 'high' \(fifth column\) is not a number"),
    (f"{TASK} Q0 a-0-1 1 nan mine\n", r":1: .*score nan is not a finite number"),
    (f"{TASK} Q0 a-0-1 1 0.5 mine\n{TASK} Q0 b-0-1 2 0.4 mine\n{TASK} Q0 a-0-1 3 0.3 mine\n",
     r":3: passage 'a-0-1' is listed twice .* \(first on line 1\)"),
    ('{"task_id": "t", "contexts": [{"document_id": "a", "score": "0.5"}]}\n', r":1: field 'score' should be int or float"),
    ('{"task_id": "t", "contexts": [{"document_id": "a", "score": true}]}\n', r":1: .*the score is True, not a number"),
    ('{"task_id": "t", "contexts": [{"score": 1}]}\n', r":1: missing field 'document_id'"),
    ('{"task_id": "t", "contexts": ["a"]}\n', r":1: context 1 of task 't' is not a JSON object"),
    ('{"contexts": []}\n', r":1: missing field 'task_id'"),
    ('{"task_id": "t", "contexts": []}\n{"task_id": "t", "contexts": []}\n', r":2: task 't' has a second line \(the first is line 1\)"),
    ('{"task_id": "t", "contexts": []}\n{"task_id": \n', r":2: invalid JSON"),
], ids=["empty", "blank", "five-columns", "word-score", "nan", "twice", "string-score", "bool-score", "no-id", "not-object",
        "no-task", "task-twice", "broken-json"])
def test_a_malformed_run_names_its_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "run.txt"
    path.write_text(text)
    with pytest.raises(DataFormatError, match=message):
        read_run(path)


def test_a_damaged_gzip_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "run.trec.gz"
    path.write_bytes(gzip.compress(b"t Q0 a 1 1.0 x\n" * 100)[:40])
    with pytest.raises(DataFormatError, match="run.trec.gz"):
        read_run(path)


def test_names(tmp_path: Path) -> None:
    assert default_name(tmp_path / "splade.run.gz") == "splade" and default_name(tmp_path / "elser.jsonl") == "elser"
    assert default_name(tmp_path / ".trec") == ".trec"
    folder = tmp_path / "hybrid_rewrite"
    folder.mkdir()
    (folder / "metrics.json").write_text(json.dumps({"name": "hybrid+rewrite"}))
    assert default_name(folder / "run.trec") == "hybrid+rewrite" and default_name(folder / "results.jsonl") == "hybrid+rewrite"
    assert default_name(folder / "other.trec") == "other"
    path = _trec(tmp_path / "r.trec", [(TASK, RELEVANT, 1.0)])
    for bad in ("", "a/b", "..", ".hidden"):
        with pytest.raises(ConfigError, match="cannot name a folder"):
            read_run(path, bad)


def test_the_command_scores_names_and_tests_runs(data: MTRAGData, tmp_path: Path) -> None:
    first = _trec(tmp_path / "first.trec", [(TASK, "zzz-0-1", 2.0), (TASK, RELEVANT, 1.0), (OTHER_TASK, "a-0-1", 1.0)])
    second = _trec(tmp_path / "second.trec", [(TASK, RELEVANT, 2.0), (OTHER_TASK, "a-0-1", 1.0)])
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["score", str(first), f"better={second}", "--data", str(sample_root()), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "first: 2 task(s) scored" in result.output and "left out, as the official scorer leaves them" in result.output
    metrics = json.loads((out / "better" / "metrics.json").read_text())
    assert metrics["per_query"][TASK]["nDCG@10"] == 1.0
    assert "Paired significance vs `first`" in (out / "summary.md").read_text()
    twice = CliRunner().invoke(app, ["score", str(first), str(first), "--data", str(sample_root()), "--out", str(out)])
    assert twice.exit_code != 0 and "two runs are named 'first'" in str(twice.exception)
    unknown = CliRunner().invoke(app, ["score", str(first), "--baseline", "nope", "--data", str(sample_root()), "--out", str(out)])
    assert unknown.exit_code != 0 and "--baseline 'nope' is not one of the runs: first" in str(unknown.exception)


@pytest.mark.slow
def test_convrags_own_run_files_score_as_convrag_eval_scored_them(data: MTRAGData, sample_indexes: BenchmarkIndexes,
                                                                  tmp_path: Path) -> None:
    """Parity: each run's ``run.trec`` and ``results.jsonl``, read back as another system's files,
    give ``convrag eval``'s per-task figures, per-domain means and ALL-3 exactly."""
    results = run_grid(sample_indexes, data.domains, ["bm25", "hybrid"], ["lastturn", "rewrite"])
    write_outputs(results, tmp_path)
    for result in results:
        for file in ("run.trec", "results.jsonl"):
            run = read_run(tmp_path / result.name.replace("+", "_") / file)
            assert run.name == result.name
            scored = score_external(run, _tasks(data), _qrels(data))
            assert scored.per_query.keys() == result.per_query.keys(), (result.name, file)
            for task, figures in result.per_query.items():
                assert scored.per_query[task] == pytest.approx(figures, abs=1e-12), (result.name, file, task)
            assert {d: s.means for d, s in scored.domains.items()} == {d: s.means for d, s in result.domains.items()}
            assert scored.all3.means == result.all3.means and scored.all.count == result.all.count


def test_runs_ranx_saves_score_as_ranx_scores_them(data: MTRAGData, tmp_path: Path) -> None:
    """Parity with ranx: a run it saves as JSON (``{task: {passage: score}}``) or as a TREC run reads back
    as the same lists, and their nDCG@10 per task is ranx's own."""
    from ranx import Qrels, Run, evaluate

    qrels = _qrels(data)
    tasks = [TASK, OTHER_TASK, "1065ea5ad1ae2b90e6fce67d851a7a66<::>1"]
    judged = {task: dict(q[task]) for q in qrels.values() for task in tasks if task in q}
    found = {task: {**{f"noise-{i}-{task[:4]}": 1.0 + i / 10 for i in range(6)}, **{p: 1.25 + n for n, p in enumerate(relevant)}}
             for n, (task, relevant) in enumerate(judged.items())}
    run = Run.from_dict(found, name="theirs")
    run.save(str(tmp_path / "theirs.json"))
    run.save(str(tmp_path / "theirs.trec"))
    expected = dict(zip(sorted(found), evaluate(Qrels.from_dict(judged), run, "ndcg@10", return_mean=False)))
    for file, kind in (("theirs.json", "json"), ("theirs.trec", "trec")):
        read = read_run(tmp_path / file)
        assert read.format == kind and {t: {h.doc_id for h in hits} for t, hits in read.hits.items()} == {t: set(f) for t, f in found.items()}
        scored = score_external(read, _tasks(data), qrels)
        assert {t: scored.per_query[t]["nDCG@10"] for t in found} == pytest.approx(expected)


@pytest.mark.parametrize(("text", "message"), [
    ('["a"]', "expected an object of tasks, got list"),
    ('{"t": ["a"]}', "task 't': expected an object of passages and scores, got list"),
    ('{"t": {"a": "1"}}', r"task 't', passage 'a': the score is '1', not a number"),
    ('{"t": {"a": 1}', "invalid JSON"),
], ids=["list", "task-list", "string-score", "broken"])
def test_a_malformed_json_run_is_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "run.json"
    path.write_text(text)
    with pytest.raises(DataFormatError, match=message):
        read_run(path)
