"""The few-shot examples must not know the benchmark's subjects.

An example about a topic that an MT-RAG conversation is about hands the small model the
answer's subject and flatters every figure. Each example declares its named topics; this
test fails when a declared topic occurs in the benchmark's conversations (the shared MT-RAG
data when it is present, and always the bundled sample), or when an example names something
(a capitalized word inside a sentence) that it did not declare.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from convrag.data.layout import sample_root
from convrag.generate.answer import EXAMPLE_SETS
from convrag.strategies.prompts import REWRITE_EXAMPLES, SUMMARY_EXAMPLES, FewShot

EXAMPLES: list[FewShot] = [*REWRITE_EXAMPLES, *(example for example, _ in SUMMARY_EXAMPLES),
                           *(FewShot(e.passages, e.question, e.answer, e.topics) for examples in EXAMPLE_SETS.values() for e in examples)]
SUMMARIES = [summary for _, summary in SUMMARY_EXAMPLES]
SHARED = Path(os.environ.get("CONVRAG_MTRAG_DATA", Path(__file__).parents[3] / "shared" / "mtrag"))
NOT_NAMES = {"User", "Assistant", "I"}


def benchmark_text(root: Path) -> str:
    conversations = json.loads((root / "conversations.json").read_text(encoding="utf-8"))
    return " ".join(m["text"] for c in conversations for m in c["messages"]).lower()


def occurs(topic: str, text: str) -> bool:
    """Whole-word occurrence, allowing a plural or possessive ending."""
    return re.search(rf"\b{re.escape(topic.lower())}(e?s|'s)?\b", text) is not None


def named_words(text: str) -> set[str]:
    """Capitalized words that do not start a sentence or a line: what an example names."""
    found = set()
    for sentence in re.split(r"(?<=[.?!:)\]…])\s+|\n", text):
        tokens = re.findall(r"[\w']+", sentence)
        found |= {w for w in tokens[1:] if w[0].isupper() and w not in NOT_NAMES}
    return found


def _sources() -> list[Path]:
    return [sample_root()] + ([SHARED] if (SHARED / "conversations.json").exists() else [])


@pytest.mark.parametrize("root", _sources(), ids=lambda p: p.name)
def test_no_example_topic_occurs_in_the_benchmark(root: Path) -> None:
    text = benchmark_text(root)
    shared = [(e.question, t) for e in EXAMPLES for t in e.topics if occurs(t, text)]
    assert not shared, f"few-shot topics found in {root}: {shared}"


def test_the_shared_benchmark_data_is_checked_when_present() -> None:
    if not (SHARED / "conversations.json").exists():
        pytest.skip(f"no MT-RAG data at {SHARED} (set CONVRAG_MTRAG_DATA); only the bundled sample was checked")
    assert len(json.loads((SHARED / "conversations.json").read_text())) >= 100


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.question[:30])
def test_every_named_thing_is_a_declared_topic(example: FewShot) -> None:
    declared = " ".join(example.topics).lower()
    text = "\n".join([example.context, example.question, example.answer])
    undeclared = {w for w in named_words(text) if w.lower() not in declared}
    assert not undeclared, f"declare these as topics (and check them): {sorted(undeclared)}"


def test_summaries_name_only_declared_topics() -> None:
    for (example, summary) in SUMMARY_EXAMPLES:
        declared = " ".join(example.topics).lower()
        assert {w for w in named_words(summary) if w.lower() not in declared} == set()


def test_the_check_catches_an_overlap() -> None:
    """The guard itself: a topic that is in the benchmark is found."""
    assert occurs("Roman Empire", "when did the roman empire fall?")
    assert occurs("octopus", "two octopuses")
    assert not occurs("chess", "purchess")
    assert named_words("User: Tell me about the Arizona Cardinals.") == {"Arizona", "Cardinals"}
