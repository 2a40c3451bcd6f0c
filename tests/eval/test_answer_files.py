"""Other systems' answers, scored on MT-RAG turns as ``eval-answers`` scores convrag's: the formats
read, declines found by their words, ROUGE-L against the references, and the command's report."""

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from convrag.cli.main import app
from convrag.data.beir import read_corpus
from convrag.data.layout import MTRAGData, sample_root
from convrag.errors import ConfigError, DataFormatError
from convrag.eval.answer_files import answers_report, read_answers, score_answers, summarize_answers
from convrag.eval.answers import LABELS, answer_turns, rouge
from convrag.generate.answer import DECLINE, is_decline


@pytest.fixture(scope="module")
def turns() -> list:
    return answer_turns(MTRAGData.discover(sample_root()), {label: None for label in LABELS})


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_each_format_is_read_and_a_failed_row_is_no_answer(tmp_path: Path) -> None:
    path = _write(tmp_path / "mixed.jsonl", [
        {"task_id": "a<::>1", "predictions": [{"text": "From predictions."}, {"text": "A second, not read."}]},
        {"task_id": "a<::>2", "answer": "From answer."},
        {"task_id": "a<::>3", "text": "From text."},
        {"task_id": "a<::>4", "failed": "the model timed out"},  # an eval-answers row the model failed
    ])
    read = read_answers(path)
    assert read.name == "mixed" and read.answers == {"a<::>1": "From predictions.", "a<::>2": "From answer.", "a<::>3": "From text."}


@pytest.mark.parametrize(("lines", "message"), [
    ([{"task_id": "t", "answer": "x"}, {"task_id": "t", "answer": "y"}], r":2: task 't' is answered twice \(first on line 1\)"),
    ([{"task_id": "t"}], r":1: no answer: expected 'predictions'"),
    ([{"task_id": "t", "predictions": []}], r":1: field 'predictions' should be a list"),
    ([{"task_id": "t", "predictions": [{"score": 1}]}], r":1: the first of 'predictions' has no 'text' string"),
    ([{"task_id": "t", "answer": None}], r":1: field 'answer' should be str, got NoneType"),
    ([{"answer": "x"}], r":1: missing field 'task_id'"),
    ([{"task_id": "t", "failed": "down"}], "the file holds no answer"),
], ids=["twice", "no-answer", "empty-predictions", "no-text", "null-answer", "no-task", "only-failed"])
def test_a_malformed_file_names_its_line(tmp_path: Path, lines: list[dict], message: str) -> None:
    with pytest.raises(DataFormatError, match=message):
        read_answers(_write(tmp_path / "answers.jsonl", lines))


def test_citations_are_checked_against_the_passages_a_line_says_it_answered_from(turns: list, tmp_path: Path) -> None:
    turn = next(t for t in turns if t.label == "ANSWERABLE" and t.relevant)
    data = MTRAGData.discover(sample_root())
    relevant = next(p for p in read_corpus(data.corpus_path(turn.task.domain)) if p.doc_id in turn.relevant)
    told = " ".join(relevant.text.split()[:12])  # a sentence the relevant passage holds word for word
    contexts = [{"document_id": relevant.doc_id, "text": relevant.text},
                {"document_id": "elsewhere-1", "text": "Tide tables list the times of high and low water for a harbour."}]
    answer = f"{told} [1]. {told} [2]. Ferries leave hourly [7]."
    unanswerable = next(t for t in turns if t.label == "UNANSWERABLE")
    lines = [{"task_id": turn.task.task_id, "predictions": [{"text": answer}], "contexts": contexts},
             {"task_id": unanswerable.task.task_id, "answer": f"{told} [1].", "contexts": contexts}]
    rows = {r["task_id"]: r for r in score_answers(read_answers(_write(tmp_path / "mtrag.jsonl", lines)), turns)}
    checks = rows[turn.task.task_id]["citation_checks"]
    assert [(c["number"], c["passage_id"], c["relevant"], c["supported"]) for c in checks] == [
        (1, relevant.doc_id, True, True),  # the judged passage, holding the sentence
        (2, "elsewhere-1", False, False),  # a passage that does not say it
        (7, None, False, False),  # a number past the passages shown points to nothing
    ]
    summary = summarize_answers(list(rows.values()))  # the UNANSWERABLE turn's citation is not counted, as in eval-answers
    assert (summary["checked_turns"], summary["citations"]) == (1, 3)
    assert summary["citations_supported"] == pytest.approx(1 / 3) and summary["citations_relevant"] == pytest.approx(1 / 3)
    # eval-answers' own rows: their recorded checks stand, the same measure for convrag and another system
    recorded = [{"task_id": turn.task.task_id, "answer": answer, "citation_checks": [
        {"number": 1, "passage_id": relevant.doc_id, "inferred": False, "relevant": True, "supported": True},
        {"number": 2, "passage_id": "x", "inferred": True, "relevant": False, "supported": True}]}]
    own = summarize_answers(score_answers(read_answers(_write(tmp_path / "own.jsonl", recorded)), turns))
    assert (own["citations_supported"], own["model_citations_supported"], own["citations_relevant"]) == (1.0, 1.0, 0.5)
    assert own["cited_share"] == 1.0
    inferred_only = [{**recorded[0], "citation_checks": recorded[0]["citation_checks"][1:]}]  # a marker convrag placed, not its model
    assert summarize_answers(score_answers(read_answers(_write(tmp_path / "inferred.jsonl", inferred_only)), turns))["cited_share"] == 0.0
    plain = summarize_answers(score_answers(read_answers(_write(tmp_path / "plain.jsonl", [{"task_id": turn.task.task_id, "answer": answer}])), turns))
    assert plain["checked_turns"] == 0 and plain["citations_supported"] is None and plain["cited_share"] == 1.0  # counted, not checked
    markdown, _ = answers_report({"mtrag": list(rows.values()), "plain": score_answers(read_answers(tmp_path / "plain.jsonl"), turns)}, "mtrag", "all")
    assert "| citations supported by their passage | 33.3% | n/a |" in markdown


@pytest.mark.parametrize(("extra", "message"), [
    ({"contexts": {"text": "x"}}, r":1: field 'contexts' should be a list of passages, got dict"),
    ({"contexts": [{"text": "x"}, {"document_id": "d"}]}, r":1: passage 2 of 'contexts' should be an object with a 'text' string"),
    ({"citation_checks": [{"supported": "yes"}]}, r":1: field 'citation_checks' should be a list of objects"),
], ids=["contexts-not-a-list", "passage-without-text", "checks-malformed"])
def test_malformed_passages_or_checks_name_their_line(tmp_path: Path, extra: dict, message: str) -> None:
    with pytest.raises(DataFormatError, match=message):
        read_answers(_write(tmp_path / "answers.jsonl", [{"task_id": "t", "answer": "x [1]", **extra}]))


def test_answers_are_scored_against_the_references_and_declines_read_from_their_words(turns: list, tmp_path: Path) -> None:
    answerable = [t for t in turns if t.label == "ANSWERABLE" and not is_decline(t.reference)]
    unanswerable = [t for t in turns if t.label == "UNANSWERABLE"]
    lines = [{"task_id": answerable[0].task.task_id, "answer": answerable[0].reference + " [1, 2]"},  # the reference, cited
             {"task_id": answerable[1].task.task_id, "answer": "Blue whales are large. " + DECLINE},  # a decline in part counts
             {"task_id": unanswerable[0].task.task_id, "answer": "The sources do not provide information about the ferry's timetable."},
             {"task_id": unanswerable[1].task.task_id, "answer": "Sorry, that is beyond what I was given."},
             {"task_id": "elsewhere<::>1", "answer": "Not a turn of the benchmark."}]
    answers = read_answers(_write(tmp_path / "mine.jsonl", lines))
    rows = {r["task_id"]: r for r in score_answers(answers, turns)}
    assert set(rows) == {line["task_id"] for line in lines[:4]}
    assert rows[answerable[0].task.task_id]["token_recall"] == 1.0 and rows[answerable[0].task.task_id]["rouge_l"] > 0.9
    expected = rouge().score(answerable[1].reference, lines[1]["answer"])["rougeL"].fmeasure
    assert rows[answerable[1].task.task_id]["rouge_l"] == pytest.approx(expected) and rows[answerable[1].task.task_id]["declined"]
    assert rows[unanswerable[0].task.task_id]["declined"] and not rows[unanswerable[1].task.task_id]["declined"]
    assert "rouge_l" not in rows[unanswerable[0].task.task_id]  # no reference overlap for a turn with nothing to say
    summary = summarize_answers(list(rows.values()))
    assert summary["unanswerable_declined"] == 0.5 and summary["answerable_false_declines"] == 0.5
    assert summary["cited_share"] == 1.0  # of the answerable turns answered, not declined: the one cited
    own = score_answers(answers, turns, re.compile(r"beyond what I was given", re.IGNORECASE))  # the system's own wording
    assert summarize_answers(own)["unanswerable_declined"] == 1.0
    with pytest.raises(ConfigError, match=r"none of its 1 answers is for a labelled turn .* 'elsewhere<::>1'"):
        score_answers(read_answers(_write(tmp_path / "other.jsonl", lines[4:])), turns)


def test_the_command_compares_systems_turn_by_turn(turns: list, tmp_path: Path) -> None:
    answerable = [t for t in turns if t.label != "UNANSWERABLE"]
    echo = _write(tmp_path / "echo.jsonl", [{"task_id": t.task.task_id, "predictions": [{"text": t.task.question}]} for t in answerable])
    reference = _write(tmp_path / "reference.jsonl", [{"task_id": t.task.task_id, "answer": t.reference} for t in answerable[:10]])
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["score-answers", str(echo), f"humans={reference}", "--data", str(sample_root()), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"humans: 10 of the {len(turns)} labelled turns answered" in result.output and "left out" in result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["systems"]["humans"]["rouge_l"] == 1.0 and summary["systems"]["echo"]["rouge_l"] < 0.5
    [rouge_test, _] = summary["paired"]
    assert rouge_test["system"] == "humans" and rouge_test["n"] == 10 and rouge_test["delta"] > 0.5
    assert len((out / "answers-humans.jsonl").read_text().splitlines()) == 10
    assert "Paired against `echo`" in (out / "summary.md").read_text()
    bad = CliRunner().invoke(app, ["score-answers", str(echo), "--decline", "(unclosed", "--data", str(sample_root()), "--out", str(out)])
    assert bad.exit_code != 0 and "is not a regular expression" in str(bad.exception)
