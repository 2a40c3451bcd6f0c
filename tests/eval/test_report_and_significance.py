import pytest

from convrag.eval.report import breakdown, markdown_table, turn_bucket
from convrag.eval.significance import paired_test
from convrag.types import Enrichments, Task


def test_turn_buckets() -> None:
    assert [turn_bucket(t) for t in (1, 2, 3, 5, 6, 12)] == ["1", "2", "3-5", "3-5", "6+", "6+"]


def test_breakdown_means_and_order() -> None:
    tasks = {
        f"t{i}": Task(f"t{i}", "c", turn, "fiqa", "q", enrichments=Enrichments(multi_turn=(label,)))
        for i, (turn, label) in enumerate([(1, "N/A"), (2, "Follow-up"), (7, "Follow-up"), (3, "Clarification")])
    }
    scores = {f"t{i}": {"nDCG@10": v} for i, v in enumerate([1.0, 0.5, 0.0, 0.25])}
    by_turn = breakdown(scores, tasks, lambda t: turn_bucket(t.turn), ["nDCG@10"])
    assert list(by_turn) == ["1", "2", "3-5", "6+"]
    by_label = breakdown(scores, tasks, lambda t: t.enrichments.multi_turn[0], ["nDCG@10"])
    assert by_label["Follow-up"] == {"count": 2.0, "nDCG@10": 0.25}


def test_paired_tests() -> None:
    base = {f"q{i}": {"nDCG@10": 0.2 + 0.01 * (i % 5)} for i in range(60)}
    same = paired_test(base, base)
    assert same.p_ttest == 1.0 and same.p_randomization == 1.0 and not same.significant()
    better = {q: {"nDCG@10": v["nDCG@10"] + 0.3 + 0.01 * (int(q[1:]) % 3)} for q, v in base.items()}
    result = paired_test(base, better)
    assert result.delta == pytest.approx(0.31, abs=0.01)
    assert result.p_ttest < 0.001 and result.p_randomization < 0.001 and result.significant()


def test_markdown_table() -> None:
    assert markdown_table(["a", "b"], [["x", 0.123456]]) == "| a | b |\n| --- | --- |\n| x | 0.1235 |"
