from pathlib import Path

import pytest

from convrag.data.layout import MTRAGData
from convrag.errors import ConfigError
from convrag.queries import QUERY_SOURCES, make_query_source
from tests.helpers import write_jsonl


def test_benchmark_sources_reproduce_the_query_files(sample: MTRAGData) -> None:
    tasks = sample.tasks("clapnq")
    lastturn = make_query_source("lastturn").queries(tasks)
    questions = make_query_source("questions").queries(tasks)
    rewrite = make_query_source("rewrite", sample).queries(tasks)
    assert lastturn == sample.queries("clapnq", "lastturn")
    assert {k: " ".join(v.split()) for k, v in questions.items()} == {
        k: " ".join(v.split()) for k, v in sample.queries("clapnq", "questions").items()
    }
    assert rewrite == sample.queries("clapnq", "rewrite")
    assert set(QUERY_SOURCES) >= {"lastturn", "rewrite", "questions"}


def test_query_file_source(sample: MTRAGData, tmp_path: Path) -> None:
    tasks = sample.tasks("govt")[:2]
    path = write_jsonl(tmp_path / "mine.jsonl", [{"_id": t.task_id, "text": f"|user|: custom {t.turn}"} for t in tasks])
    source = make_query_source(str(path))
    assert source.name == "mine"
    assert source.queries(tasks) == {t.task_id: f"custom {t.turn}" for t in tasks}
    with pytest.raises(ConfigError, match="has no query for task"):
        source.queries(sample.tasks("govt"))


def test_unknown_source_and_missing_data() -> None:
    with pytest.raises(ConfigError, match="unknown query source 'magic'"):
        make_query_source("magic")
    with pytest.raises(ConfigError, match="give a data folder"):
        make_query_source("rewrite")
