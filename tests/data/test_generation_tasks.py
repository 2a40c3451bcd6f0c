from pathlib import Path

import pytest

from convrag.data.generation_tasks import load_generation_tasks
from convrag.errors import DataFormatError
from tests.helpers import write_jsonl

LINE = {
    "conversation_id": "c9",
    "task_id": "c9<::>2",
    "turn": 2,
    "input": [
        {"speaker": "user", "text": "What is IBM Cloud Object Storage?"},
        {"speaker": "agent", "text": "A storage service."},
        {"speaker": "user", "text": "How much does it cost?"},
    ],
    "Collection": "mt-rag-ibmcloud-elser-512-100-20240502",
    "targets": [{"text": "It depends on the storage class."}],
    "contexts": [{"document_id": "ibmcld_1-0-10", "text": "pricing", "title": "Pricing"}],
    "answerability": ["ANSWERABLE"],
    "Multi-Turn": ["Follow-up"],
    "Question Type": ["Factoid"],
}


def test_line_becomes_conversation_up_to_turn(tmp_path: Path) -> None:
    (gen,) = load_generation_tasks(write_jsonl(tmp_path / "gen.jsonl", [LINE]))
    task = gen.task
    assert task.task_id == "c9<::>2" and task.turn == 2 and task.domain == "cloud"
    assert task.question == "How much does it cost?"
    assert [m.speaker for m in task.history] == ["user", "agent"]
    assert task.enrichments.answerability == ("ANSWERABLE",)
    assert gen.targets == ("It depends on the storage class.",)
    assert gen.contexts[0].doc_id == "ibmcld_1-0-10"


@pytest.mark.parametrize(
    "change, message",
    [
        ({"input": [{"speaker": "user", "text": "q"}, {"speaker": "agent", "text": "a"}]}, "must end with the user's question"),
        ({"Collection": "elsewhere"}, "unknown MT-RAG collection"),
        ({"turn": "two"}, "'turn' should be an integer"),
        ({"input": "not a list"}, "field 'input' should be list"),
    ],
)
def test_bad_lines_name_the_line(tmp_path: Path, change: dict, message: str) -> None:
    path = write_jsonl(tmp_path / "gen.jsonl", [LINE, {**LINE, **change}])
    with pytest.raises(DataFormatError, match=rf"gen\.jsonl:2: .*{message}"):
        load_generation_tasks(path)
