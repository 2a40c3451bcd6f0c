"""A fixed dev/test split of MT-RAG by conversation, so that tuning never sees the reported half.

Every turn of a conversation lands in the same half: turns of one conversation share their
topic and history, so a split by task would leak the test half into tuning. Within each
domain, conversations are ordered by a salted SHA-256 of their id and the first half
(rounded up) is ``dev``. The rule depends on nothing but the ids, so the split is the same on
every machine, in the official layout and in the shared one, and does not move when a
domain's files are read in another order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from ..errors import ConfigError

SPLITS = ("dev", "test", "all")
#: changing the salt would reshuffle the halves and invalidate every tuned setting
SALT = "convrag-split-v1"


def conversation_of(task_id: str) -> str:
    """The conversation id of an MT-RAG task id (``<conversation_id><::><turn>``)."""
    return task_id.partition("<::>")[0]


def _rank_key(conversation_id: str) -> str:
    return hashlib.sha256(f"{SALT}:{conversation_id}".encode()).hexdigest()


def assign_splits(conversations_by_domain: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """``{conversation_id: "dev" | "test"}``: per domain, the first half in salted-hash order is dev."""
    out: dict[str, str] = {}
    for ids in conversations_by_domain.values():
        ranked = sorted(set(ids), key=_rank_key)
        cut = (len(ranked) + 1) // 2
        out.update({cid: "dev" if i < cut else "test" for i, cid in enumerate(ranked)})
    return out


def check_split(split: str) -> str:
    """``split`` if it names a split, else a one-line error."""
    if split not in SPLITS:
        raise ConfigError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    return split


def in_split(conversation_id: str, split: str, assignment: Mapping[str, str]) -> bool:
    """Whether a conversation belongs to ``split`` (``all`` holds every conversation)."""
    return split == "all" or assignment.get(conversation_id) == split
