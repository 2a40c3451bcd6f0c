"""A document made of other documents' passages: a docs folder's page that gathers every other page
(Node.js's ``all.html``), a file copied under another name. Indexed beside them, each of their passages stood twice in a search's ten and took
twice the time to embed (Node.js's docs: 2,134 passages of 6,174). A document most of whose
passages are word for word another kept document's is left out, and the user told which.

The documents with the most passages are looked at first, so a page that gathers others is left
out and the pages it gathers are kept; of two copies of one file, the one of the shorter name
("fees" before "fees (copy)" and "old/fees"), then the first in path order, is kept. Pure functions over chunked documents; the index command calls them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ..text import some_of
from ..types import Passage

#: the least share of a document's passages that must be word for word in other documents kept
#: for it to be left out. Node.js's ``all.html`` held 93 % of its passages so (its others begin or
#: end where one page meets the next); no two of its other pages shared one passage.
COPIED_SHARE = 0.8


class Compilation(NamedTuple):
    """A document left out: its id, how many passages it had, and how many were other documents'."""

    doc_id: str
    passages: int
    copied: int


def _key(text: str) -> str:
    """A passage's text with its white space one space: what two copies of it hold alike."""
    return " ".join(text.split())


def drop_compilations(chunked: Sequence[tuple[str, Sequence[Passage]]],
                      share: float = COPIED_SHARE) -> tuple[list[Passage], list[Compilation]]:
    """The passages of ``chunked`` (each document's id with its passages, in order) without those of
    each document that at least ``share`` of whose passages other documents kept hold word for word;
    and the documents left out, in the order they were looked at (the most passages first)."""
    owners: dict[str, list[int]] = {}
    for i, (_, passages) in enumerate(chunked):
        for passage in passages:
            owners.setdefault(_key(passage.text), []).append(i)
    kept = [True] * len(chunked)
    left_out: list[Compilation] = []
    for i in sorted(range(len(chunked)), key=lambda i: (-len(chunked[i][1]), -len(chunked[i][0]), -i)):
        doc_id, passages = chunked[i]
        copied = sum(1 for p in passages if any(j != i and kept[j] for j in owners[_key(p.text)]))
        if passages and copied >= share * len(passages):
            kept[i] = False
            left_out.append(Compilation(doc_id, len(passages), copied))
    return [p for i, (_, passages) in enumerate(chunked) if kept[i] for p in passages], left_out


def compilations_summary(left_out: Sequence[Compilation], shown: int = 3) -> str:
    """The documents left out, in one line of an index's report."""
    named = some_of([f"{c.doc_id} ({c.copied} of its {c.passages} passages)" for c in left_out], shown)
    return f"{len(left_out)} document(s) made of other documents' passages, word for word, which are indexed: {named}"
