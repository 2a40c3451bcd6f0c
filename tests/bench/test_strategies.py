"""The strategy benchmark's verdicts and paired comparisons, on hand-made runs (no figures asserted)."""

from __future__ import annotations

from types import SimpleNamespace

from convrag.bench.strategies import generalization, paired_against, stage_table, targets
from convrag.eval.runner import RunResult
from convrag.strategies.base import Trace
from convrag.types import Task


def _run(retriever: str, source: str, scores: dict[str, float], all3: float) -> RunResult:
    tasks = {tid: Task(tid, tid.split("-")[0], 2, tid.split("-")[0], "q?") for tid in scores}
    result = RunResult(f"{retriever}+{source}", retriever, source, tasks, {}, {})
    result.per_query = {tid: {"nDCG@10": s} for tid, s in scores.items()}
    result.all3 = SimpleNamespace(means={"nDCG@10": all3})  # type: ignore[assignment]
    return result


def test_paired_comparison_uses_the_all3_tasks_and_the_same_retriever() -> None:
    ids = [f"{d}-{i}" for d in ("clapnq", "cloud", "fiqa", "govt") for i in range(5)]
    base = _run("bm25", "full_rewrite", {t: 0.2 + 0.01 * int(t[-1]) for t in ids}, 0.22)
    better = _run("bm25", "summary", {t: (0.9 if t.startswith("govt") else 0.3 + 0.02 * int(t[-1])) for t in ids}, 0.34)
    other_retriever = _run("hybrid", "summary", {t: 0.5 for t in ids}, 0.5)
    reference = _run("bm25", "rewrite", {t: 0.4 for t in ids}, 0.4)  # a query file, not a strategy
    rows = paired_against([base, better, other_retriever, reference])
    assert len(rows) == 1
    run, baseline, n, run_mean, base_mean, delta, p = rows[0]
    assert (run, baseline, n) == ("bm25+summary", "bm25+full_rewrite", 15)  # govt left out
    assert abs(run_mean - 0.34) < 1e-9 and abs(base_mean - 0.22) < 1e-9 and abs(delta - 0.12) < 1e-9 and p < 0.001


def test_targets_report_met_and_missed() -> None:
    runs = [_run("hybrid", "progressive", {}, 0.43), _run("hybrid", "full_rewrite", {}, 0.44)]
    stats = {"progressive": {"ALL": {"llm_calls_per_follow_up": 0.4, "stage_share_follow_up": {"1": 0.2}}}}
    verdicts = {target: met for target, _, met in targets(runs, stats)}
    assert verdicts == {
        "hybrid: progressive >= full_rewrite (ALL-3 nDCG@10)": False,
        "progressive: LLM calls per follow-up turn <= 0.6": True,
        "Stage 1 resolves >= 14% of turns after the first": True,
    }


def test_generalization_keeps_the_share_of_each_dev_gain() -> None:
    dev = [_run("bm25", "lastturn", {}, 0.20), _run("bm25", "progressive", {}, 0.25), _run("bm25", "summary", {}, 0.19)]
    test = [_run("bm25", "lastturn", {}, 0.22), _run("bm25", "progressive", {}, 0.26), _run("bm25", "summary", {}, 0.30)]
    rows = {r[0]: r for r in generalization(dev, test)}
    assert rows["bm25+progressive"][3] == "80%" and rows["bm25+progressive"][4] == "met"
    assert rows["bm25+summary"][4] == "n/a (no dev gain)"


def test_stage_table_counts_follow_ups_and_human_agreement() -> None:
    ids = ["c-1", "c-2", "c-3"]
    runs = [_run("bm25", source, {t: v for t in ids}, v) for source, v in
            (("progressive", 0.5), ("full_rewrite", 0.4), ("lastturn", 0.3), ("rewrite", 0.6))]
    traces = {t: Trace(t, "progressive", "q?", stage=st) for t, st in zip(ids, ("1", "1", "2"))}
    rows = stage_table(runs, traces, {"c-1": "|user|: q?", "c-2": "|user|: another question?", "c-3": "q?"})
    assert rows[0][:3] == ["1", 2, "50%"] and rows[0][3:7] == [0.5, 0.4, 0.3, 0.6]
    assert rows[1][:3] == ["2", 1, "100%"]
