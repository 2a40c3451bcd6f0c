import json
from pathlib import Path

import pytest

from convrag.data.conversations import assign_conversation_ids, load_conversations
from convrag.data.layout import MTRAGData
from convrag.errors import DataFormatError


def _conversation(**overrides: object) -> dict:
    base = {
        "conversation_id": "c1",
        "domain": "mt-rag-fiqa-beir-elser-512-100-20240501",
        "messages": [
            {"speaker": "user", "text": "What is an index fund?", "enrichments": {"Multi-Turn": ["N/A"], "Answerability": ["ANSWERABLE"]}},
            {"speaker": "agent", "text": "A fund that tracks an index.", "contexts": [{"document_id": "d1", "text": "t", "title": "T"}]},
            {"speaker": "user", "text": "Are they cheap?", "enrichments": {"Multi-Turn": ["Follow-up"], "Question Type": ["Factoid"]}},
        ],
    }
    base.update(overrides)
    return base


def test_tasks_from_conversation(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([_conversation()]))
    (conversation,) = load_conversations(path)
    assert conversation.domain == "fiqa"
    assert conversation.agent_contexts[0][0].doc_id == "d1"
    first, second = conversation.tasks()
    assert (first.task_id, first.turn, first.history) == ("c1<::>1", 1, ())
    assert second.task_id == "c1<::>2" and second.question == "Are they cheap?"
    assert [m.speaker for m in second.history] == ["user", "agent"]
    assert second.enrichments.multi_turn == ("Follow-up",)
    assert second.user_questions == ["What is an index fund?", "Are they cheap?"]


def test_malformed_json_reports_line(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text('[\n  {"messages": [\n  }\n]')
    with pytest.raises(DataFormatError, match=r"conversations\.json:3: invalid JSON"):
        load_conversations(path)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"messages": []}, "missing or empty 'messages'"),
        ({"domain": "nowhere"}, "unknown MT-RAG collection"),
        ({"messages": [{"speaker": "bot", "text": "x"}]}, "speaker 'bot'"),
        ({"messages": [{"speaker": "agent", "text": "x"}]}, "expected a user message"),
        ({"messages": [{"speaker": "user"}]}, "'text' missing"),
    ],
)
def test_structural_errors(tmp_path: Path, overrides: dict, message: str) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([_conversation(**overrides)]))
    with pytest.raises(DataFormatError, match=message):
        load_conversations(path)


def test_a_file_not_saved_as_utf8_is_named_with_the_byte(tmp_path: Path) -> None:
    """A Latin-1 "café" raised a bare UnicodeDecodeError traceback from the command line."""
    path = tmp_path / "conversations.json"
    path.write_bytes(json.dumps([_conversation()]).replace("an index fund", "an index caf\u00e9").encode("latin-1"))
    with pytest.raises(DataFormatError, match=r"conversations\.json: not UTF-8 text \(byte 0xe9 on line 1\); save it as UTF-8"):
        load_conversations(path)


def test_a_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    """Windows editors start a UTF-8 file with a byte-order mark, which json reads as invalid JSON."""
    path = tmp_path / "conversations.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps([_conversation()]).encode("utf-8"))
    (conversation,) = load_conversations(path)
    assert conversation.conversation_id == "c1"


@pytest.mark.parametrize("retriever", ["fiqa", {"collection": "fiqa"}, {"collection": None}, ["fiqa"]],
                         ids=["string", "collection-string", "collection-null", "list"])
def test_a_retriever_field_of_another_shape_is_a_located_error(tmp_path: Path, retriever: object) -> None:
    """Without a domain, the domain is read from retriever.collection.name; a retriever of another
    shape raised AttributeError ('str' object has no attribute 'get')."""
    raw = _conversation(retriever=retriever)
    del raw["domain"]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([raw]))
    with pytest.raises(DataFormatError, match="conversation #0: no 'domain' and no retriever.collection.name"):
        load_conversations(path)
    raw["retriever"] = {"collection": {"name": "mt-rag-fiqa-beir-elser-512-100-20240501"}}
    path.write_text(json.dumps([raw]))
    assert load_conversations(path)[0].domain == "fiqa"


def test_ids_recovered_from_questions_file(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([_conversation(conversation_id=None)]))
    conversations = load_conversations(path)
    assert conversations[0].conversation_id == ""
    fixed = assign_conversation_ids(conversations, {"abc<::>2": "What is an index fund?\nAre they cheap?"})
    assert fixed[0].conversation_id == "abc"


def test_sample_tasks_match_benchmark_files(sample: MTRAGData) -> None:
    """History from conversations.json must line up with the benchmark's own query files."""
    total = 0
    for domain in sample.domains:
        lastturn, questions = sample.queries(domain, "lastturn"), sample.queries(domain, "questions")
        tasks = sample.tasks(domain)
        assert [t.task_id for t in tasks] == list(lastturn)
        for task in tasks:
            assert " ".join(task.question.split()) == " ".join(lastturn[task.task_id].split())
            assert len(task.user_questions) == len(questions[task.task_id].split("\n"))
        total += len(tasks)
    assert total == sum(len(sample.qrels(d)) for d in sample.domains)
