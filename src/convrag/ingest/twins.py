"""One document in several formats side by side: a docs folder that holds each page's Markdown
source beside the HTML built from it (Node.js's API docs: ``fs.md`` and ``fs.html``), a report
saved as ``.docx`` and ``.pdf``. Indexed twice, each passage stood twice in a search's ten (a
question about reading a file line by line got two distinct passages in its first five) and the
index took twice the time. Of files with the same name but for their suffix, one whose words are
held by another's is left out, and the user is told which file holds them.

The test is the words, not the names: ``report.pdf`` beside ``report.xlsx`` (the report and its
data) are two documents and both are kept. Pure functions over read documents; the folder's walk
(:func:`convrag.ingest.documents.iter_documents`) groups them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from ..text import some_of
from ..text import words as word_list
from .formats import Document

#: the least share of a document's words (counted with their repeats) another must hold for the
#: first to be a copy of it in another format. A page built from its Markdown source held all the
#: source's words (Node.js's API docs: 100 % of each of 8 pages' words), adding its version
#: history and permalinks; two different documents of one name share far less.
TWIN_SHARE = 0.9

def words(text: str) -> Counter[str]:
    """A text's words, lower-cased, with how often each occurs."""
    return Counter(word_list(text))


def held_share(smaller: Counter[str], larger: Counter[str]) -> float:
    """The share of ``smaller``'s words (with their repeats) that ``larger`` holds; 0.0 for no words."""
    total = smaller.total()
    return (smaller & larger).total() / total if total else 0.0


class Twin(NamedTuple):
    """A document left out, and the one kept that holds its words."""

    left_out: Document
    held_by: Document
    share: float


class Twins(NamedTuple):
    """What :func:`sort_twins` made of one name's documents: those kept, in their given order, and those left out."""

    kept: list[Document]
    left_out: list[Twin]


def sort_twins(documents: Sequence[Document], share: float = TWIN_SHARE) -> Twins:
    """Of documents with one name (but for their suffix), each whose words another kept holds (at least
    ``share`` of them) left out. The one with the most words is looked at first and so kept: where the
    built page holds more than its source (the version history Node.js writes into its HTML), nothing of
    either is lost. Where two hold the same words, the first given (path order) is kept."""
    counted = [words(document.text) for document in documents]
    order = sorted(range(len(documents)), key=lambda i: -counted[i].total())  # stable: path order among equals
    kept: list[int] = []
    left_out: list[Twin] = []
    for i in order:
        held, best = max(((held_share(counted[i], counted[k]), k) for k in kept), default=(0.0, -1))
        if kept and counted[i].total() and held >= share:
            left_out.append(Twin(documents[i], documents[best], held))
        else:
            kept.append(i)
    return Twins([documents[i] for i in sorted(kept)], left_out)


def twin_reason(twin: Twin) -> str:
    """Why a document was left out, as the index's report says it."""
    return f"the same document as {twin.held_by.doc_id} in another format ({twin.share:.0%} of its words are there), which is indexed"


def twins_summary(twins: Sequence[Twin], shown: int = 3) -> str:
    """The documents left out, in one line of an index's report: a folder of built docs leaves out a
    file a page (Node.js's: 64), and a line each buried what else the report said."""
    named = some_of([f"{twin.left_out.doc_id} (in {twin.held_by.doc_id})" for twin in twins], shown)
    return (f"{len(twins)} file(s), each the same document as another of its name in another format, which holds "
            f"its words and is indexed: {named}")
