"""The dev/test split: by conversation, stable, balanced per domain, and honoured by every reader."""

from __future__ import annotations

import pytest

from convrag.data.layout import MTRAGData
from convrag.data.splits import assign_splits, conversation_of
from convrag.errors import ConfigError


def test_halves_per_domain_and_every_turn_of_a_conversation_together() -> None:
    ids = {"a": [f"a{i}" for i in range(7)], "b": [f"b{i}" for i in range(4)]}
    split = assign_splits(ids)
    assert sorted(split) == sorted(ids["a"] + ids["b"])
    assert sum(split[c] == "dev" for c in ids["a"]) == 4  # the odd one goes to dev
    assert sum(split[c] == "dev" for c in ids["b"]) == 2


def test_split_does_not_depend_on_order_or_repeats() -> None:
    forward = assign_splits({"d": ["x", "y", "z", "w"]})
    backward = assign_splits({"d": ["w", "z", "z", "y", "x", "x"]})
    assert forward == backward


def test_conversation_of_task_id() -> None:
    assert conversation_of("abc<::>3") == "abc"


def test_reader_returns_disjoint_halves_that_cover_all(sample: MTRAGData) -> None:
    dev, test = sample.with_split("dev"), sample.with_split("test")
    for domain in sample.domains:
        every = {t.task_id for t in sample.tasks(domain)}
        d = {t.task_id for t in dev.tasks(domain)}
        t = {t.task_id for t in test.tasks(domain)}
        assert d and t and not d & t and d | t == every
        # no conversation is cut in two
        assert not {conversation_of(x) for x in d} & {conversation_of(x) for x in t}


def test_unknown_split_is_a_clear_error(sample: MTRAGData) -> None:
    with pytest.raises(ConfigError, match="unknown split 'train'"):
        MTRAGData.discover(sample.root, "train")
