"""The bundled sample, indexed for real, evaluated end to end, and checked against an
independent computation: the official result JSONL re-read and scored with pytrec_eval
directly, per collection, then weighted by task count."""

import csv
import json
from pathlib import Path

import pytest
import pytrec_eval

from convrag.data.domains import COLLECTION_NAMES
from convrag.data.layout import MTRAGData
from convrag.eval.experiment import run_grid, write_outputs
from convrag.eval.run_files import read_run
from convrag.eval.runner import BenchmarkIndexes

pytestmark = pytest.mark.slow


def _independent_scores(results_file: Path, root: Path) -> dict[str, float]:
    by_collection: dict[str, dict[str, dict[str, float]]] = {}
    for line in results_file.read_text().splitlines():
        item = json.loads(line)
        by_collection.setdefault(item["Collection"], {})[item["task_id"]] = {
            c["document_id"]: c["score"] for c in item["contexts"]
        }
    domains = {name: domain for domain, name in COLLECTION_NAMES.items()}
    totals, count = {"ndcg_cut_10": 0.0, "recall_5": 0.0}, 0
    for name, run in by_collection.items():
        with open(root / "retrieval_tasks" / domains[name] / "qrels" / "dev.tsv") as handle:
            rows = list(csv.reader(handle, delimiter="\t"))[1:]
        qrels: dict[str, dict[str, int]] = {}
        for qid, pid, grade in rows:
            qrels.setdefault(qid, {})[pid] = int(grade)
        scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.5"}).evaluate(run)
        for metric in totals:
            totals[metric] += round(sum(s[metric] for s in scores.values()) / len(scores), 5) * len(run)
        count += len(run)
    return {metric: value / count for metric, value in totals.items()}


def test_sample_grid_matches_independent_scoring(sample: MTRAGData, sample_indexes: BenchmarkIndexes, tmp_path: Path) -> None:
    results = run_grid(sample_indexes, sample.domains, ["bm25", "dense", "hybrid"], ["lastturn", "rewrite"])
    assert [r.name for r in results] == [
        "bm25+lastturn", "dense+lastturn", "hybrid+lastturn", "bm25+rewrite", "dense+rewrite", "hybrid+rewrite"
    ]
    summary = write_outputs(results, tmp_path, baseline="bm25+lastturn")
    assert "Paired significance" in summary.read_text()
    for result in results:
        folder = tmp_path / result.name.replace("+", "_")
        assert len(result.hits) == 55 and all(1 <= len(h) <= 10 for h in result.hits.values())
        if result.retriever != "bm25":  # BM25 leaves out passages sharing no term with the query
            assert all(len(h) == 10 for h in result.hits.values())
        independent = _independent_scores(folder / "results.jsonl", sample.root)
        assert result.all.means["nDCG@10"] == pytest.approx(independent["ndcg_cut_10"], abs=1e-9)
        assert result.all.means["Recall@5"] == pytest.approx(independent["recall_5"], abs=1e-9)
        run = read_run(folder / "run.trec")
        assert set(run.hits) == set(result.hits)
        metrics = json.loads((folder / "metrics.json").read_text())
        assert metrics["metrics"]["ALL"]["nDCG@10"] == result.all.means["nDCG@10"]
        assert set(metrics["breakdowns"]) == {"turn", "multi_turn", "answerability"}
    by_name = {r.name: r for r in results}
    # Retrieval must be doing real work on the sample: far above chance, and dense beats BM25 here.
    assert by_name["hybrid+rewrite"].all.means["nDCG@10"] > 0.3
    assert by_name["dense+rewrite"].all.means["nDCG@10"] > by_name["bm25+lastturn"].all.means["nDCG@10"]


def test_reopening_does_not_re_embed(sample: MTRAGData, sample_indexes: BenchmarkIndexes, monkeypatch: pytest.MonkeyPatch) -> None:
    from convrag.embeddings import Embedder

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("passages were embedded again")

    again = BenchmarkIndexes(sample, sample_indexes.index_dir)
    monkeypatch.setattr(Embedder, "_encode_block", refuse)
    assert len(again.collection("govt")) == len(sample_indexes.collection("govt"))
