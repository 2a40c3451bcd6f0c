import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from convrag.cli.main import app
from convrag.data.layout import sample_root
from convrag.errors import ConfigError
from convrag.eval.compare import compare_folders, per_query_runs


def _run(folder: Path, name: str, scores: dict[str, float]) -> None:
    path = folder / name.replace("+", "_")
    path.mkdir(parents=True)
    per_query = {task: {"nDCG@10": value, "Recall@5": value / 2} for task, value in scores.items()}
    (path / "metrics.json").write_text(json.dumps({"name": name, "per_query": per_query}))


def test_same_named_runs_are_paired_on_shared_tasks(tmp_path: Path) -> None:
    _run(tmp_path / "a", "hybrid+rewrite", {"t1": 0.2, "t2": 0.4, "t3": 0.6, "only-in-a": 1.0})
    _run(tmp_path / "a", "bm25+rewrite", {"t1": 0.1, "t2": 0.1})
    _run(tmp_path / "b", "hybrid+rewrite", {"t1": 0.3, "t2": 0.6, "t3": 0.6})
    _run(tmp_path / "b", "dense+rewrite", {"t1": 0.9, "t2": 0.9})  # no partner: left out
    [comparison] = compare_folders(tmp_path / "a", tmp_path / "b")
    assert comparison.name == "hybrid+rewrite" and (comparison.only_baseline, comparison.only_other) == (1, 0)
    test = comparison.test
    assert test.n == 3 and test.mean_baseline == pytest.approx(0.4) and test.delta == pytest.approx(0.1)
    recall = compare_folders(tmp_path / "a", tmp_path / "b", metric="Recall@5")[0].test
    assert recall.delta == pytest.approx(0.05)


def test_bad_folders_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a folder"):
        per_query_runs(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="holds no run"):
        per_query_runs(tmp_path / "empty")
    broken = tmp_path / "broken" / "run"
    broken.mkdir(parents=True)
    (broken / "metrics.json").write_text("{not json")
    with pytest.raises(ConfigError, match="not a convrag run's metrics file"):
        per_query_runs(tmp_path / "broken")
    _run(tmp_path / "a", "bm25+rewrite", {"t1": 0.1})
    _run(tmp_path / "b", "dense+rewrite", {"t1": 0.1})
    with pytest.raises(ConfigError, match="no run name is in both"):
        compare_folders(tmp_path / "a", tmp_path / "b")
    _run(tmp_path / "c", "bm25+rewrite", {"t1": 0.1})
    with pytest.raises(ConfigError, match="no per-query MAP@10"):
        compare_folders(tmp_path / "a", tmp_path / "c", metric="MAP@10")
    # the same grid run on the two halves of the split: no task to pair (it read as 0.0000 vs 0.0000, p = 1)
    _run(tmp_path / "test-half", "bm25+rewrite", {"t7": 0.5, "t8": 0.3})
    with pytest.raises(ConfigError, match=r"'bm25\+rewrite' scored no task in common .*different splits or domains"):
        compare_folders(tmp_path / "a", tmp_path / "test-half")


@pytest.mark.parametrize("value", ["0.5", None, float("nan"), True, [0.5]], ids=["string", "null", "nan", "bool", "list"])
def test_a_figure_that_is_not_a_number_is_named(tmp_path: Path, value: object) -> None:
    """A hand-edited metrics file with "0.5" or null raised ValueError/TypeError from numpy inside
    the paired test (a traceback at the command line); a NaN went into the means."""
    _run(tmp_path / "a", "bm25+rewrite", {"t1": 0.1, "t2": 0.2})
    path = tmp_path / "a" / "bm25_rewrite" / "metrics.json"
    data = json.loads(path.read_text())
    data["per_query"]["t2"]["nDCG@10"] = value
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=r"metrics\.json is not a convrag run's metrics file \(task 't2': nDCG@10 is "):
        per_query_runs(tmp_path / "a")


def test_a_task_without_the_metric_is_named(tmp_path: Path) -> None:
    """Only the first task was checked for the metric; another task without it raised KeyError."""
    _run(tmp_path / "a", "bm25+rewrite", {"t1": 0.1, "t2": 0.2})
    _run(tmp_path / "b", "bm25+rewrite", {"t1": 0.3, "t2": 0.4})
    path = tmp_path / "b" / "bm25_rewrite" / "metrics.json"
    data = json.loads(path.read_text())
    del data["per_query"]["t2"]["nDCG@10"]
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="run 'bm25\\+rewrite' has no nDCG@10 for task 't2' in one of the folders"):
        compare_folders(tmp_path / "a", tmp_path / "b")


def test_the_table_says_how_many_tasks_were_left_out(tmp_path: Path) -> None:
    _run(tmp_path / "a", "bm25+rewrite", {"t1": 0.1, "t2": 0.2, "t3": 0.3})
    _run(tmp_path / "b", "bm25+rewrite", {"t1": 0.2, "t2": 0.2, "t9": 0.3})
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert "left out" in result.output and "1 / 1" in result.output
    same = CliRunner().invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "a")])
    assert same.exit_code == 0 and "left out" not in same.output


def test_compare_two_real_eval_folders(tmp_path: Path) -> None:
    """Two configurations of the same grid on the bundled sample (BM25 with and without RM3)."""
    runner = CliRunner()
    common = ["eval", "--data", str(sample_root()), "--domains", "govt,fiqa", "-r", "bm25", "-q", "lastturn,rewrite"]
    for name, prf in (("plain", "none"), ("rm3", "rm3")):
        result = runner.invoke(app, [*common, "--prf", prf, "--out", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["compare", str(tmp_path / "plain"), str(tmp_path / "rm3")])
    assert result.exit_code == 0, result.output
    assert "bm25+lastturn" in result.output and "bm25+rewrite" in result.output
    runs = {name: next(r for r in json.loads((tmp_path / name / "summary.json").read_text())["runs"] if r["name"] == "bm25+rewrite")
            for name in ("plain", "rm3")}
    [rewrite] = [c for c in compare_folders(tmp_path / "plain", tmp_path / "rm3") if c.name == "bm25+rewrite"]
    assert rewrite.test.n == sum(runs["rm3"]["counts"].values())
    assert rewrite.test.mean_baseline == pytest.approx(runs["plain"]["metrics"]["ALL"]["nDCG@10"], abs=1e-4)  # per-query figures are stored rounded
    assert rewrite.test.mean_run == pytest.approx(runs["rm3"]["metrics"]["ALL"]["nDCG@10"], abs=1e-4)  # per-query figures are stored rounded


def test_tasks_better_the_same_and_worse_and_the_largest_changes(tmp_path: Path) -> None:
    """A mean delta hides how many tasks moved each way; the table counts them, and ``--show`` lists the
    tasks that moved most with the query each folder searched for them."""
    _run(tmp_path / "a", "bm25+rewrite", {"t1": 0.2, "t2": 0.4, "t3": 0.6, "t4": 0.5, "t5": 0.1})
    _run(tmp_path / "b", "bm25+rewrite", {"t1": 0.9, "t2": 0.4, "t3": 0.1, "t4": 0.6, "t5": 0.1 + 1e-12})
    for folder, asked in (("a", "cost"), ("b", "what does the mooring cost")):
        path = tmp_path / folder / "bm25_rewrite" / "metrics.json"
        data = json.loads(path.read_text())
        data["queries"] = {"t1": asked, "t3": f"{asked}?"}
        path.write_text(json.dumps(data))
    [comparison] = compare_folders(tmp_path / "a", tmp_path / "b")
    assert comparison.counts() == (2, 2, 1)  # t1 and t4 better; t2 the same, and t5 within rounding; t3 worse
    assert [c.task for c in comparison.gains()] == ["t1", "t4"] and [c.task for c in comparison.losses()] == ["t3"]
    assert comparison.gains()[0].delta == pytest.approx(0.7)
    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--show", "1"])
    assert result.exit_code == 0, result.output
    assert "2 / 2 / 1" in result.output
    assert "gained most on" in result.output and "lost most on" in result.output
    gained = result.output[result.output.index("gained most on"):result.output.index("lost most on")]
    assert "t1" in gained and "+0.7000" in gained and "what does the mooring cost" in gained and "t4" not in gained
    assert "t3" in result.output[result.output.index("lost most on"):]


def test_runs_an_earlier_grid_left_in_the_folder_are_not_paired(tmp_path: Path) -> None:
    """An output folder used again for another grid keeps the run folders of the one before; compare
    paired them as if today's eval had made them. It pairs the runs the folder's summary.json lists."""
    for folder in ("a", "b"):
        _run(tmp_path / folder, "bm25+rewrite", {"t1": 0.1, "t2": 0.3})
        _run(tmp_path / folder, "dense+rewrite", {"t1": 0.5, "t2": 0.5})
    (tmp_path / "b" / "summary.json").write_text(json.dumps({"runs": [{"name": "bm25+rewrite"}], "significance": []}))
    assert set(per_query_runs(tmp_path / "b")) == {"bm25+rewrite"}  # dense+rewrite is an earlier grid's
    assert [c.name for c in compare_folders(tmp_path / "a", tmp_path / "b")] == ["bm25+rewrite"]
    assert set(per_query_runs(tmp_path / "a")) == {"bm25+rewrite", "dense+rewrite"}  # no summary.json: every run


def test_a_folder_written_twice_by_eval_pairs_its_last_grid(tmp_path: Path) -> None:
    runner = CliRunner()
    common = ["eval", "--data", str(sample_root()), "--domains", "govt", "-r", "bm25"]
    assert runner.invoke(app, [*common, "-q", "lastturn,rewrite", "--out", str(tmp_path / "a")]).exit_code == 0
    assert runner.invoke(app, [*common, "-q", "lastturn,rewrite", "--out", str(tmp_path / "b")]).exit_code == 0
    assert runner.invoke(app, [*common, "-q", "rewrite", "--prf", "rm3", "--out", str(tmp_path / "b")]).exit_code == 0
    assert (tmp_path / "b" / "bm25_lastturn").is_dir()  # left by the first grid
    assert [c.name for c in compare_folders(tmp_path / "a", tmp_path / "b")] == ["bm25+rewrite"]
