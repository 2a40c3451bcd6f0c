import gzip
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from convrag.data.beir import read_corpus
from convrag.data.layout import MTRAGData, sample_root
from convrag.errors import ConfigError


def test_sample_layout(sample: MTRAGData) -> None:
    assert sample.domains == ["clapnq", "cloud", "fiqa", "govt"]
    assert len(sample.conversations) == 8
    assert (sample_root() / "ATTRIBUTION.md").exists()


def test_official_repository_layout(tmp_path: Path) -> None:
    """corpora/passage_level/*.jsonl.zip, mtrag-human/..., and conversations without ids."""
    src = sample_root()
    (tmp_path / "corpora" / "passage_level").mkdir(parents=True)

    for domain, name in (("fiqa", "fiqa.jsonl.zip"), ("cloud", "cloud.json.zip")):  # the official names
        with zipfile.ZipFile(tmp_path / "corpora" / "passage_level" / name, "w") as archive:
            archive.writestr(f"{domain}.jsonl", gzip.decompress((src / "corpora" / f"{domain}.jsonl.gz").read_bytes()))
        shutil.copytree(src / "retrieval_tasks" / domain, tmp_path / "mtrag-human" / "retrieval_tasks" / domain)
    conversations = json.loads((src / "conversations.json").read_text())
    for conversation in conversations:
        conversation.pop("conversation_id")
    (tmp_path / "mtrag-human" / "conversations").mkdir(parents=True)
    (tmp_path / "mtrag-human" / "conversations" / "conversations.json").write_text(json.dumps(conversations))

    data = MTRAGData.discover(tmp_path)
    assert data.domains == ["cloud", "fiqa"]
    assert len(list(read_corpus(data.corpus_path("cloud")))) > 1000
    tasks = data.tasks("fiqa")
    assert [t.task_id for t in tasks] == list(data.queries("fiqa", "lastturn"))
    assert all(t.history for t in tasks if t.turn > 1)
    assert any(m.speaker == "agent" for t in tasks for m in t.history), "history should come from conversations.json"


def test_tasks_without_conversations_file(tmp_path: Path) -> None:
    shutil.copytree(sample_root() / "retrieval_tasks", tmp_path / "retrieval_tasks")
    data = MTRAGData.discover(tmp_path)
    assert data.domains == []  # no corpora
    tasks = data.tasks("govt")
    assert tasks and all(m.speaker == "user" for t in tasks for m in t.history)
    assert max(t.turn for t in tasks) > 1


def test_missing_folders(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        MTRAGData.discover(tmp_path / "nope")
    with pytest.raises(ConfigError, match="no retrieval_tasks folder"):
        MTRAGData.discover(tmp_path)
