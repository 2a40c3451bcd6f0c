"""The run files ``convrag eval`` writes, read back as other tools read them."""

import json
from pathlib import Path

import numpy as np

from convrag.eval.run_files import read_run
from convrag.eval.writers import write_official_results, write_trec_run
from convrag.types import Hit


def test_a_trec_run_keeps_scores_closer_than_a_millionth_apart(tmp_path: Path) -> None:
    """trec_eval ranks by the score column and orders ties by passage id, descending: scores written
    with six decimals tied here and ``z`` went first, so trec_eval scored another list than convrag's."""
    hits = {"t<::>1": [Hit("a-0-1", 0.5000004, "", ""), Hit("z-0-1", np.float32(0.5000001), "", ""), Hit("m-0-1", -2.0, "", "")]}
    write_trec_run(tmp_path / "run.trec", hits, "hybrid+rewrite")
    assert [h.doc_id for h in read_run(tmp_path / "run.trec").hits["t<::>1"]] == ["a-0-1", "z-0-1", "m-0-1"]
    columns = (tmp_path / "run.trec").read_text().splitlines()[1].split("\t")
    assert columns[:4] == ["t<::>1", "Q0", "z-0-1", "2"] and float(columns[4]) == float(np.float32(0.5000001))


def test_the_official_results_name_each_tasks_collection(tmp_path: Path) -> None:
    write_official_results(tmp_path / "results.jsonl", {"t<::>1": [Hit("a-0-1", 1.5, "text", "title")]}, {"t<::>1": "mt-rag-govt"})
    [line] = (tmp_path / "results.jsonl").read_text().splitlines()
    assert json.loads(line) == {"task_id": "t<::>1", "Collection": "mt-rag-govt",
                                "contexts": [{"document_id": "a-0-1", "score": 1.5, "text": "text", "title": "title"}]}
    assert [h.doc_id for h in read_run(tmp_path / "results.jsonl").hits["t<::>1"]] == ["a-0-1"]
