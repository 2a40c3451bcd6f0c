"""BEIR-format corpora, query files and qrels, as MT-RAG distributes them."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..characters import whole_characters
from ..errors import DataFormatError
from ..types import Passage
from .jsonl import open_text, read_jsonl, require

USER_PREFIX = "|user|:"
QRELS_HEADER = ["query-id", "corpus-id", "score"]


#: the names a passage's id and text go by in the JSONL corpora of the field, the first found used:
#: BEIR's ``_id``, Pyserini's ``id`` and ``contents``, ir_datasets' ``doc_id``, TREC's ``docid``
ID_FIELDS = ("_id", "id", "doc_id", "docid")
TEXT_FIELDS = ("text", "contents")


def _field(obj: dict[str, Any], names: tuple[str, ...], kind: type | tuple[type, ...], path: Path, line: int) -> Any:
    """The first of ``names`` that ``obj`` holds (checked as :func:`require` checks it); a line
    with none is an error that names them all."""
    for name in names:
        if name in obj:
            return require(obj, name, kind, path, line)
    raise DataFormatError(path, "missing field " + " or ".join(repr(n) for n in names), line)


def read_corpus(path: Path, empty: list[str] | None = None) -> Iterator[Passage]:
    """Yield the passages of a BEIR corpus (``.jsonl``, ``.jsonl.gz`` or ``.jsonl.zip``).

    Each line is ``{"_id", "text", "title"?, "url"?}``; the id may also be ``id``, ``doc_id`` or
    ``docid`` and the text ``contents`` (:data:`ID_FIELDS`, :data:`TEXT_FIELDS`), so that a Pyserini
    or ir_datasets corpus is read as it is: one was a "missing field '_id'" error. Ids must be unique: a
    duplicate would silently shadow a passage in the index, so it is an error.
    A passage with neither text nor title is left out and its id appended to ``empty``: indexed,
    it matched no word, yet dense search ranked it like any other, so a hybrid list (and the
    model's passages) could hold a blank.
    """
    seen: set[str] = set()
    for line, obj in read_jsonl(path):
        doc_id = str(_field(obj, ID_FIELDS, (str, int), path, line))
        text = _field(obj, TEXT_FIELDS, str, path, line)
        if doc_id in seen:
            raise DataFormatError(path, f"duplicate passage id {doc_id!r}", line)
        seen.add(doc_id)
        title = str(obj.get("title") or "")
        if not text.strip() and not title.strip():
            if empty is not None:
                empty.append(doc_id)
            continue
        yield Passage(doc_id=whole_characters(doc_id), text=whole_characters(text), title=whole_characters(title),
                      url=whole_characters(str(obj.get("url") or "")))


def strip_user_prefix(text: str) -> str:
    """Remove the ``|user|: `` speaker prefixes MT-RAG puts on every line of a query."""
    lines = [line.strip() for line in text.split("\n")]
    cleaned = [line[len(USER_PREFIX):].strip() if line.startswith(USER_PREFIX) else line for line in lines]
    return "\n".join(line for line in cleaned if line)


def read_queries(path: Path) -> dict[str, str]:
    """Read a BEIR query file into ``{query_id: text}`` with the ``|user|: `` prefixes removed."""
    queries: dict[str, str] = {}
    for line, obj in read_jsonl(path):
        query_id = str(require(obj, "_id", (str, int), path, line))
        queries[query_id] = strip_user_prefix(require(obj, "text", str, path, line))
    return queries


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Read a BEIR qrels TSV (header ``query-id  corpus-id  score``) into ``{query_id: {doc_id: grade}}``."""
    try:
        return _read_qrels(path)
    except UnicodeDecodeError as exc:  # read in chunks, so the error's offset is not the file's: no line is named
        raise DataFormatError(path, f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x}); save it as UTF-8") from None
    except csv.Error as exc:  # the csv module's own refusal (a field over its 128 KB limit) was a traceback
        raise DataFormatError(path, f"not a qrels row ({exc})") from None


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open_text(path) as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_MINIMAL)
        header = next(reader, None)
        if header is None:
            raise DataFormatError(path, "empty qrels file (expected a header line)", 1)
        if [h.strip() for h in header] != QRELS_HEADER:
            raise DataFormatError(path, f"expected header {' '.join(QRELS_HEADER)!r} (tab-separated), got {header!r}", 1)
        for line, row in enumerate(reader, start=2):
            if not row or not "".join(row).strip():
                continue
            if len(row) != 3:
                raise DataFormatError(path, f"expected 3 tab-separated columns, got {len(row)}", line)
            query_id, doc_id, grade = row
            try:
                qrels.setdefault(query_id, {})[doc_id] = int(grade)
            except ValueError:
                raise DataFormatError(path, f"relevance grade {grade!r} is not an integer", line) from None
    return qrels
