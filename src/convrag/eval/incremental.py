"""The incremental pipeline (incremental-mmr-cluster-rewrite seed): conversations processed turn
by turn, where the history of turn N is the user's earlier questions plus the answers convrag
generated itself, not the benchmark's.

Two outputs per domain, one line per turn, appended and fsynced as each turn finishes:

* ``datasets/<domain>.jsonl``: ``{"_id", "text": "|user|: <query>", "agent_response"}``;
* ``intermediate/<domain>.jsonl``: the strategy trace plus ``contexts`` (title, text, score,
  url, document_id) and ``agent_response``.

A rerun reads what is there, skips finished turns and rebuilds the generated history from
them, so an interruption costs at most the turn in flight (a torn last line is discarded).
Retrieval is then scored like ``convrag eval``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..data.layout import MTRAGData
from ..generate.answer import AnswerGenerator
from ..merge.base import MergedResult, SourcedHit
from ..progress import SILENT, Reporter
from ..retrieve.base import Retriever
from ..strategies.base import Strategy
from ..types import Hit, Message, Task
from .runner import RunResult, score_run


def read_finished(path: Path, key: str = "task_id") -> dict[str, dict[str, Any]]:
    """Finished turns by task id (field ``key``); a torn last line (a crash mid-write) is cut off the file."""
    if not path.exists():
        return {}
    done: dict[str, dict[str, Any]] = {}
    good_bytes = 0
    with open(path, "rb") as fh:
        for raw in fh:
            try:
                record = json.loads(raw)
            except json.JSONDecodeError:
                break
            if not raw.endswith(b"\n"):
                break
            done[record[key]] = record
            good_bytes += len(raw)
    if good_bytes != path.stat().st_size:
        with open(path, "r+b") as fh:
            fh.truncate(good_bytes)
    return done


def _append(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as fh:
        fh.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())


def _merged(hits: Sequence[Hit], domain: str, passages: int) -> list[MergedResult]:
    return [
        MergedResult(SourcedHit(domain, h.doc_id, h.doc_id, h.text, h.title, h.url, h.score, h.rank), h.score, h.score, f"#{h.rank} in {domain}")
        for h in hits[:passages]
    ]


def run_incremental(
    data: MTRAGData,
    domains: Sequence[str],
    retrievers: dict[str, Retriever],
    strategy: Strategy,
    generator: AnswerGenerator,
    out: Path,
    k: int = 10,
    answer_passages: int = 5,
    max_conversations: int | None = None,
    reporter: Reporter = SILENT,
) -> RunResult:
    """Run (or resume) the incremental pipeline; returns the scored retrieval run."""
    tasks: dict[str, Task] = {}
    hits: dict[str, list[Hit]] = {}
    queries: dict[str, str] = {}
    for domain in domains:
        benchmark_ids = {t.task_id for t in data.tasks(domain)}
        conversations = [c for c in data.conversations if c.domain == domain][:max_conversations]
        inter_path, data_path = out / "intermediate" / f"{domain}.jsonl", out / "datasets" / f"{domain}.jsonl"
        done = read_finished(inter_path)
        finished = read_finished(data_path, "_id")
        turns = [t for c in conversations for t in c.tasks()]
        with reporter.stage(f"{domain}: incremental {strategy.name}", total=len(turns)) as advance:
            for conversation in conversations:
                generated: list[Message] = []
                for original in conversation.tasks():
                    task = Task(original.task_id, original.conversation_id, original.turn, domain, original.question,
                                tuple(generated), original.enrichments)
                    record = done.get(task.task_id)
                    if record is not None and task.task_id not in finished:  # crashed between the two appends
                        _append(data_path, {"_id": task.task_id, "text": f"|user|: {record['final_query']}",
                                            "agent_response": record["agent_response"]})
                    if record is None:
                        rewrite = strategy.rewrite(task)
                        found = retrievers[domain].search([rewrite.query], k)[0]
                        answer = generator.answer(task.question, list(generated), _merged(found, domain, answer_passages))
                        record = {
                            **rewrite.trace.to_dict(),
                            "contexts": [{"document_id": h.doc_id, "title": h.title, "text": h.text, "score": h.score, "url": h.url}
                                         for h in found],
                            "agent_response": answer.text,
                            "citations": [c._asdict() for c in answer.citations],
                            "declined": answer.declined,
                            "answer_trace": answer.trace,
                        }
                        _append(inter_path, record)
                        _append(data_path, {"_id": task.task_id, "text": f"|user|: {rewrite.query}", "agent_response": answer.text})
                    generated += [Message("user", task.question), Message("agent", record["agent_response"])]
                    if task.task_id in benchmark_ids:
                        tasks[task.task_id] = original
                        queries[task.task_id] = record["final_query"]
                        hits[task.task_id] = [Hit(c["document_id"], c["score"], c["text"], c["title"], c.get("url", ""), i)
                                              for i, c in enumerate(record["contexts"], start=1)]
                    advance(1)
    result = RunResult(f"incremental+{strategy.name}", "incremental", strategy.name, tasks, queries, hits)
    return score_run(result, {d: data.qrels(d) for d in domains})
