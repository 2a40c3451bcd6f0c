"""Runs made by other systems, read so that they are scored exactly as convrag's own runs are.

A researcher comparing a system of their own (a SPLADE or ELSER run, a published baseline's result
file) with convrag's needs its ranked lists scored by the same official scoring, on the same split
by conversation, with the same breakdowns and paired tests; re-implementing the scorer beside it is
how two papers end up a point apart on one run. Three formats are read, told apart by their first line:

* a TREC run, ``qid Q0 docid rank score tag`` (what trec_eval, ranx, Pyserini and ``convrag eval``'s
  ``run.trec`` hold);
* the benchmark's result JSONL, ``{"task_id", "contexts": [{"document_id", "score"}, ...]}`` (what its
  ``run_retrieval_eval.py`` reads and ``convrag eval``'s ``results.jsonl`` holds);
* a JSON object ``{task: {passage: score}}`` (what ranx saves as JSON, and pytrec_eval and BEIR take).

As trec_eval does, the scores rank a task's passages (equal scores by passage id, descending) and
the rank column is not read. A passage listed twice for one task, a score that is no finite number
or a line of none of them is refused with its file and line: the official scorer keeps whichever
copy came last, and a run scored that way is not the run its author wrote.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from ..data.jsonl import open_text, parse_json, read_jsonl, require
from ..errors import ConfigError, DataFormatError
from ..types import Hit, Task
from .metrics import Qrels
from .runner import RunResult, score_run

#: the formats :func:`read_run` reads: a TREC run, the benchmark's result JSONL, and a JSON object of runs
RUN_FORMATS = ("trec", "mtrag", "json")
#: the files of a ``convrag eval`` run folder, named after the run its ``metrics.json`` names
EVAL_RUN_FILES = ("run.trec", "results.jsonl")
_SUFFIXES = (".gz", ".zip", ".trec", ".run", ".txt", ".tsv", ".jsonl", ".json")


class ExternalRun(NamedTuple):
    """A run read from a file: its name, where it came from, its format, and each task's passages
    ranked as trec_eval ranks them."""

    name: str
    path: Path
    format: str
    hits: dict[str, list[Hit]]


class Coverage(NamedTuple):
    """How a run's tasks meet the benchmark's: ``scored`` tasks of the chosen split and domains that it
    has results for, the ``missing`` ones it has none for, how many of its tasks belong to the
    ``other_split`` (or another domain), and the ``unknown`` ids that are no benchmark task at all."""

    scored: int
    missing: tuple[str, ...]
    other_split: int
    unknown: tuple[str, ...]


def run_format(path: Path) -> str:
    """``"mtrag"`` if the file's first non-blank line is a JSON object of a task's results (with
    ``task_id`` or ``contexts``), ``"json"`` if it starts JSON otherwise (a whole file's object),
    else ``"trec"``."""
    with open_text(path) as handle:
        try:
            for line in handle:
                if line.strip():
                    if not line.lstrip().startswith(("{", "[")):
                        return "trec"
                    try:
                        first = parse_json(line)
                    except ValueError:  # an object written over many lines
                        return "json"
                    mtrag = isinstance(first, dict) and ("task_id" in first or "contexts" in first)
                    return "mtrag" if mtrag else "json"
        except (EOFError, OSError, UnicodeDecodeError) as exc:  # a damaged .gz, a binary file
            raise DataFormatError(path, f"cannot read this file as text ({exc})") from None
    raise DataFormatError(path, "the run is empty")


def default_name(path: Path) -> str:
    """A run's name when none is given: the run a ``convrag eval`` folder's ``metrics.json`` names for
    its ``run.trec`` or ``results.jsonl`` (so ``hybrid+rewrite``, not ``run``), else the file's name
    without its format's and compression's suffixes."""
    path = Path(path)
    metrics = path.parent / "metrics.json"
    if path.name in EVAL_RUN_FILES and metrics.is_file():
        try:
            name = parse_json(metrics.read_text(encoding="utf-8")).get("name")
        except (OSError, ValueError, AttributeError):
            name = None
        if isinstance(name, str) and name:
            return name
    name = path.name
    while (suffix := next((s for s in _SUFFIXES if name.lower().endswith(s) and len(name) > len(s)), None)) is not None:
        name = name[: -len(suffix)]
    return name


def check_name(name: str) -> str:
    """A run's or a system's name, as a file or folder of the output can be named after it (``+`` becomes ``_`` there)."""
    if not name.strip() or name.startswith(".") or any(c in name for c in "/\\\0"):
        raise ConfigError(f"the name {name!r} cannot name a folder: give it as NAME=PATH, without '/', '\\' or a leading '.'")
    return name


def read_run(path: Path, name: str | None = None) -> ExternalRun:
    """The run in ``path`` (plain, ``.gz`` or ``.zip``), in any of :data:`RUN_FORMATS`."""
    path = Path(path)
    kind = run_format(path)
    scores: dict[str, dict[str, float]] = {}
    first_line: dict[tuple[str, str], int | None] = {}
    rows = {"mtrag": _mtrag_rows, "json": _json_rows, "trec": _trec_rows}[kind](path)
    for line, task_id, passage_id, score in rows:
        if passage_id is None:  # a task the system ran and found nothing for: scored, as nothing found
            scores.setdefault(task_id, {})
            continue
        if not math.isfinite(score):
            raise DataFormatError(path, f"task {task_id!r}, passage {passage_id!r}: score {score} is not a finite number", line)
        if (task_id, passage_id) in first_line:
            raise DataFormatError(path, f"passage {passage_id!r} is listed twice for task {task_id!r} (first on line "
                                  f"{first_line[task_id, passage_id]}): which of its scores counts is not known", line)
        first_line[task_id, passage_id] = line
        scores.setdefault(task_id, {})[passage_id] = score
    if not scores:
        raise DataFormatError(path, "the run holds no task")
    return ExternalRun(check_name(name if name is not None else default_name(path)), path, kind,
                       {task_id: ranked(found) for task_id, found in scores.items()})


def ranked(scores: Mapping[str, float]) -> list[Hit]:
    """Passages in trec_eval's order: by score, descending; equal scores by passage id, descending."""
    order = sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)
    return [Hit(passage_id, score, "", "", rank=rank) for rank, (passage_id, score) in enumerate(order, start=1)]


def _trec_rows(path: Path) -> Iterator[tuple[int | None, str, str | None, float]]:
    with open_text(path) as handle:
        try:
            for number, text in enumerate(handle, start=1):
                fields = text.split()
                if not fields:
                    continue
                if len(fields) != 6:
                    raise DataFormatError(path, f"expected 6 columns (qid Q0 docid rank score tag), got {len(fields)}", number)
                try:
                    score = float(fields[4])
                except ValueError:
                    raise DataFormatError(path, f"the score {fields[4]!r} (fifth column) is not a number", number) from None
                yield number, fields[0], fields[2], score
        except UnicodeDecodeError as exc:
            raise DataFormatError(path, f"cannot read this file as UTF-8 text ({exc})") from None


def _mtrag_rows(path: Path) -> Iterator[tuple[int | None, str, str | None, float]]:
    seen: dict[str, int] = {}
    for number, record in read_jsonl(path):
        task_id = require(record, "task_id", str, path, number)
        if task_id in seen:
            raise DataFormatError(path, f"task {task_id!r} has a second line (the first is line {seen[task_id]})", number)
        seen[task_id] = number
        contexts = require(record, "contexts", list, path, number)
        if not contexts:
            yield number, task_id, None, 0.0
        for position, context in enumerate(contexts, start=1):
            if not isinstance(context, dict):
                raise DataFormatError(path, f"context {position} of task {task_id!r} is not a JSON object", number)
            passage_id = require(context, "document_id", str, path, number)
            score = require(context, "score", (int, float), path, number)
            if isinstance(score, bool):
                raise DataFormatError(path, f"context {position} of task {task_id!r}: the score is {score}, not a number", number)
            yield number, task_id, passage_id, float(score)


def _json_rows(path: Path) -> Iterator[tuple[int | None, str, str | None, float]]:
    """A whole file's ``{task: {passage: score}}``, as ranx's ``Run.save(...json)``, pytrec_eval's and
    BEIR's evaluation take a run."""
    with open_text(path) as handle:
        try:
            data = parse_json(handle.read())
        except ValueError as exc:
            raise DataFormatError(path, f"invalid JSON ({exc})") from None
        except (EOFError, OSError, UnicodeDecodeError) as exc:
            raise DataFormatError(path, f"cannot read this file as text ({exc})") from None
    if not isinstance(data, dict):
        raise DataFormatError(path, f"expected an object of tasks, got {type(data).__name__}")
    for task_id, found in data.items():
        if not isinstance(found, dict):
            raise DataFormatError(path, f"task {task_id!r}: expected an object of passages and scores, got {type(found).__name__}")
        if not found:
            yield None, task_id, None, 0.0
        for passage_id, score in found.items():
            if isinstance(score, bool) or not isinstance(score, int | float):
                raise DataFormatError(path, f"task {task_id!r}, passage {passage_id!r}: the score is {score!r}, not a number")
            yield None, task_id, passage_id, float(score)


def coverage(run: ExternalRun, tasks: Mapping[str, Task], every_task: Sequence[str] = ()) -> Coverage:
    """How ``run`` covers ``tasks`` (the split's and domains'); ``every_task``, the ids of the whole
    benchmark, tells a task of the other split from an id that is no task at all."""
    known = set(every_task) | set(tasks)
    outside = [task_id for task_id in run.hits if task_id not in tasks]
    return Coverage(
        scored=sum(task_id in run.hits for task_id in tasks),
        missing=tuple(task_id for task_id in tasks if task_id not in run.hits),
        other_split=sum(task_id in known for task_id in outside),
        unknown=tuple(task_id for task_id in outside if task_id not in known),
    )


def score_external(
    run: ExternalRun,
    tasks: Mapping[str, Task],
    qrels_by_domain: Mapping[str, Qrels],
    complete: bool = False,
) -> RunResult:
    """``run`` scored on ``tasks`` as :func:`~convrag.eval.runner.score_run` scores convrag's runs.

    A task the run has no results for is left out, as the official scorer leaves it out (its mean is
    over the tasks in the result file, each collection weighted by them); with ``complete``, it counts
    as retrieving nothing relevant (trec_eval's ``-c``), which is the fair figure for a run that skipped
    tasks. Tasks outside ``tasks`` are not scored.
    """
    hits = {task_id: run.hits[task_id] for task_id in tasks if task_id in run.hits}
    if not hits:
        example = next(iter(run.hits))
        expected = next(iter(tasks), "<conversation id><::><turn>")
        raise ConfigError(f"{run.path}: none of the run's {len(run.hits)} task ids is a task of the chosen split and domains "
                          f"(the run has {example!r}; the benchmark's ids read like {expected!r})")
    if complete:
        hits = {task_id: hits.get(task_id, []) for task_id in tasks}
    result = RunResult(run.name, "file", str(run.path), {task_id: tasks[task_id] for task_id in hits}, {}, hits)
    return score_run(result, qrels_by_domain)
