"""Output files of an evaluation run, in the formats other tools read.

* the official MT-RAG result JSONL, readable by the benchmark's ``run_retrieval_eval.py``;
* a TREC run file (``qid Q0 docid rank score tag``) for trec_eval, ranx or pytrec_eval;
* metrics as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..index.atomic import atomic_open, write_json
from ..types import Hit, SourcedHit


def official_context(hit: Hit | SourcedHit, with_url: bool = False) -> dict[str, object]:
    """A retrieved passage as the benchmark's result files hold it: ``document_id`` is the
    *passage* id there (``<doc>-<start>-<end>``), whatever the hit type calls it."""
    passage_id = hit.passage_id if isinstance(hit, SourcedHit) else hit.doc_id
    record: dict[str, object] = {"document_id": passage_id, "score": hit.score, "text": hit.text, "title": hit.title}
    if with_url:
        record["url"] = hit.url
    return record


def write_official_results(
    path: Path, hits: Mapping[str, Sequence[Hit]], collections: Mapping[str, str]
) -> None:
    """One line per task: ``{"task_id", "Collection", "contexts": [{"document_id", "score", "text", "title"}]}``."""
    with atomic_open(path) as handle:
        for task_id, task_hits in hits.items():
            record = {
                "task_id": task_id,
                "Collection": collections[task_id],
                "contexts": [official_context(h) for h in task_hits],
            }
            handle.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))


def write_trec_run(path: Path, hits: Mapping[str, Sequence[Hit]], tag: str) -> None:
    """Each score as the shortest text that reads back as the same float: trec_eval ranks by the
    scores, not the rank column, and scores rounded to six decimals tied where they differed below
    that, which trec_eval then ordered by passage id (the file scored apart from convrag's figures)."""
    with atomic_open(path) as handle:
        for task_id, task_hits in hits.items():
            for rank, hit in enumerate(task_hits, start=1):
                handle.write(f"{task_id}\tQ0\t{hit.doc_id}\t{rank}\t{float(hit.score)!r}\t{tag}\n".encode())


def write_metrics(path: Path, metrics: Mapping[str, Any]) -> None:
    write_json(path, metrics)


def write_beir_queries(path: Path, queries: Mapping[str, str]) -> None:
    """BEIR query JSONL in MT-RAG's form: ``{"_id": task_id, "text": "|user|: <query>"}``."""
    with atomic_open(path) as handle:
        for task_id, text in queries.items():
            handle.write((json.dumps({"_id": task_id, "text": f"|user|: {text}"}, ensure_ascii=False) + "\n").encode("utf-8"))


def write_traces(path: Path, traces: Mapping[str, Any]) -> None:
    """The intermediate JSONL: one strategy trace per task (``Trace.to_dict``)."""
    with atomic_open(path) as handle:
        for trace in traces.values():
            handle.write((json.dumps(trace.to_dict(), ensure_ascii=False) + "\n").encode("utf-8"))
