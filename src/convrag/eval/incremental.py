"""The incremental pipeline (incremental-mmr-cluster-rewrite seed): conversations processed turn
by turn, where the history of turn N is the user's earlier questions plus the answers convrag
generated itself, not the benchmark's.

Two outputs per domain, one line per turn, appended and fsynced as each turn finishes:

* ``datasets/<domain>.jsonl``: ``{"_id", "text": "|user|: <query>", "agent_response"}``;
* ``intermediate/<domain>.jsonl``: the strategy trace plus ``contexts`` (the retrieved passages:
  document_id as in the benchmark's result files, title, text, score, url), ``agent_response``,
  its citations, and the rest of the turn's trace (merge, answer, timings).

Each turn is one :meth:`Pipeline.answer`: the same path as ``convrag ask``.

A rerun reads what is there, skips finished turns and rebuilds the generated history from
them, so an interruption costs at most the turn in flight (a torn last line is discarded).
Retrieval is then scored like ``convrag eval``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..data.jsonl import parse_json
from ..data.layout import MTRAGData
from ..errors import DataFormatError
from ..pipeline import Pipeline
from ..progress import SILENT, Reporter
from ..types import Hit, Message, Task
from .runner import RunResult, score_run
from .writers import official_context


def read_finished(path: Path, key: str = "task_id") -> dict[str, dict[str, Any]]:
    """Finished turns by task id (field ``key``). A torn last line (a crash mid-write: it does not
    end in a newline, or is not a whole record) is cut off the file, so the next append starts clean.

    A damaged line *before* the last is not what a crash leaves: the file was edited or damaged.
    It is a :class:`DataFormatError` naming the line, and the file is left as it is; cutting there,
    as was done before, threw away every finished turn after it."""
    if not path.exists():
        return {}
    done: dict[str, dict[str, Any]] = {}
    good_bytes = 0
    with open(path, "rb") as fh:
        lines = fh.readlines()
    for number, raw in enumerate(lines, start=1):
        record = _record(raw, key)
        if record is None:
            if number < len(lines):
                raise DataFormatError(path, f"not a finished turn (a JSON object with {key!r} on one line); the file was "
                                            "edited or damaged, and was left as it is: mend or remove that line", number)
            break
        done[str(record[key])] = record
        good_bytes += len(raw)
    if good_bytes != path.stat().st_size:
        with open(path, "r+b") as fh:
            fh.truncate(good_bytes)
    return done


def _record(raw: bytes, key: str) -> dict[str, Any] | None:
    """The record a whole line holds, or None where it holds none (torn, not JSON, not a record)."""
    if not raw.endswith(b"\n"):
        return None
    try:
        record = parse_json(raw)
    except ValueError:  # not JSON, or not UTF-8
        return None
    return record if isinstance(record, dict) and key in record else None


def _append(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as fh:
        fh.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())


def run_incremental(
    data: MTRAGData,
    domains: Sequence[str],
    pipelines: Mapping[str, Pipeline],
    out: Path,
    max_conversations: int | None = None,
    reporter: Reporter = SILENT,
) -> RunResult:
    """Run (or resume) the incremental pipeline with one :class:`Pipeline` per domain (its own
    answers become the next turn's history); returns the scored retrieval run."""
    tasks: dict[str, Task] = {}
    hits: dict[str, list[Hit]] = {}
    queries: dict[str, str] = {}
    name = next(iter(pipelines.values())).strategy.name if pipelines else "none"
    for domain in domains:
        pipeline = pipelines[domain]
        benchmark_ids = {t.task_id for t in data.tasks(domain)}
        conversations = [c for c in data.conversations if c.domain == domain][:max_conversations]
        inter_path, data_path = out / "intermediate" / f"{domain}.jsonl", out / "datasets" / f"{domain}.jsonl"
        done = read_finished(inter_path)
        finished = read_finished(data_path, "_id")
        turns = [t for c in conversations for t in c.tasks()]
        with reporter.stage(f"{domain}: incremental {name}", total=len(turns)) as advance:
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
                        result = pipeline.answer([*generated, Message("user", task.question)], task.task_id)
                        trace = result.trace.to_dict()
                        retrieved = next(iter(result.retrieved.values()), [])
                        record = {
                            **trace.get("strategy", {}),
                            "contexts": [official_context(h, with_url=True) for h in retrieved],
                            "agent_response": result.text,
                            "citations": [c._asdict() for c in result.citations],
                            "declined": result.declined,
                            "turn_trace": {k: v for k, v in trace.items() if k != "strategy"},
                        }
                        _append(inter_path, record)
                        _append(data_path, {"_id": task.task_id, "text": f"|user|: {record['final_query']}",
                                            "agent_response": result.text})
                    generated += [Message("user", task.question), Message("agent", record["agent_response"])]
                    if task.task_id in benchmark_ids:
                        tasks[task.task_id] = original
                        queries[task.task_id] = record["final_query"]
                        hits[task.task_id] = [Hit(c["document_id"], c["score"], c["text"], c["title"], c.get("url", ""), i)
                                              for i, c in enumerate(record["contexts"], start=1)]
                    advance(1)
    result = RunResult(f"incremental+{name}", "incremental", name, tasks, queries, hits)
    return score_run(result, {d: data.qrels(d) for d in domains})
