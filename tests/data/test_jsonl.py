"""JSON read from users' files: nesting past Python's parser is a located format error, in every reader."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from convrag.data.beir import read_corpus
from convrag.data.conversations import load_conversations
from convrag.data.messages import read_history
from convrag.errors import ConfigError, DataFormatError
from convrag.eval.compare import per_query_runs
from convrag.eval.incremental import read_finished
from convrag.llm.base import parse_json_object

DEEP = "[" * 100_000 + "]" * 100_000  # past Python's recursion limit: json.loads raised RecursionError


@pytest.mark.parametrize("name, content, read", [
    ("history.json", DEEP, read_history),
    ("corpus.jsonl", '{"_id": "a", "text": "x"}\n{"_id": "b", "text": ' + DEEP + "}\n", lambda p: list(read_corpus(p))),
    ("conversations.json", DEEP, load_conversations),
    ("finished.jsonl", '{"task_id": "t1"}\n' + DEEP + "\n" + '{"task_id": "t2"}\n', read_finished),
], ids=["history", "corpus", "conversations", "incremental"])
def test_json_nested_too_deeply_is_a_format_error(tmp_path: Path, name: str, content: str, read: Callable[[Path], Any]) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(DataFormatError, match="nested too deeply|not a finished turn"):
        read(path)
    assert path.read_text() == content  # and the file is left as it is


def test_json_nested_too_deeply_elsewhere(tmp_path: Path) -> None:
    """An eval run's metrics file, and a model's answer, nested past the parser."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "metrics.json").write_text(DEEP)
    with pytest.raises(ConfigError, match="is not a convrag run's metrics file .*nested too deeply"):
        per_query_runs(tmp_path)
    assert parse_json_object('{"verdict": ' + DEEP + "}") is None  # a model that answers garbage: no object
