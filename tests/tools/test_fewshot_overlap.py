"""tools/fewshot_overlap.py: its topics follow the shipped prompts, and it finds conversations by user turns only."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

from convrag.strategies import prompts

ROOT = Path(__file__).resolve().parents[2]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fewshot_overlap", ROOT / "tools" / "fewshot_overlap.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_topic_names_a_shipped_example_and_every_example_has_a_topic() -> None:
    tool = _tool()
    examples = [" ".join(e[:2]).lower() for e in prompts._REWRITE_EXAMPLES + [e[:2] for e in prompts._SUMMARY_EXAMPLES]]
    for topic, pattern in tool.EXAMPLE_TOPICS.items():
        assert any(re.search(pattern, text) for text in examples), topic
    for text in examples:
        assert any(re.search(p, text) for p in tool.EXAMPLE_TOPICS.values()), text


def test_finds_conversations_by_their_user_turns(tmp_path: Path) -> None:
    def conversation(cid: str, user: str, agent: str) -> dict[str, object]:
        return {"conversation_id": cid, "messages": [{"speaker": "user", "text": user}, {"speaker": "agent", "text": agent}]}

    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([
        conversation("a", "Where do the Arizona Cardinals play?", "In Glendale."),
        conversation("b", "What is a bond?", "Ask about Kubernetes instead."),  # only the agent mentions a topic
        conversation("c", "Did the Ottomans take Egypt?", "Yes, in 1517."),
    ]))
    assert _tool().overlapping_conversations(path) == {"a": "Arizona Cardinals", "c": "Roman Empire / Ottomans"}
