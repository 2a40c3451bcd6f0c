"""The benchmark's query renderings, and BEIR query files, behind one interface."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from ..data.beir import read_queries
from ..data.layout import MTRAGData
from ..errors import ConfigError
from ..types import Task


class QuerySource(Protocol):
    """Produces one query per task, keyed by task id. A source may also offer
    ``query_sets(tasks) -> {task_id: (query, *more)}``: renderings whose results are fused (RRF)."""

    name: str

    def queries(self, tasks: Sequence[Task]) -> dict[str, str]: ...


def query_sets(source: QuerySource, tasks: Sequence[Task]) -> dict[str, tuple[str, ...]]:
    """Every rendering a source gives per task (one, unless it fuses several)."""
    if hasattr(source, "query_sets"):
        return source.query_sets(tasks)  # type: ignore[no-any-return]
    return {task_id: (query,) for task_id, query in source.queries(tasks).items()}


class LastTurn:
    """The user's question exactly as asked (the benchmark's ``lastturn``)."""

    name = "lastturn"

    def queries(self, tasks: Sequence[Task]) -> dict[str, str]:
        return {t.task_id: t.question for t in tasks}


class AllQuestions:
    """Every user question so far, one per line (the benchmark's ``questions``)."""

    name = "questions"

    def queries(self, tasks: Sequence[Task]) -> dict[str, str]:
        return {t.task_id: "\n".join(t.user_questions) for t in tasks}


class QueryFile:
    """Queries read from BEIR query files; every task must have one."""

    def __init__(self, name: str, loader: Callable[[str], dict[str, str]]) -> None:
        self.name = name
        self._loader = loader
        self._cache: dict[str, dict[str, str]] = {}

    def queries(self, tasks: Sequence[Task]) -> dict[str, str]:
        out: dict[str, str] = {}
        for task in tasks:
            if task.domain not in self._cache:
                self._cache[task.domain] = self._loader(task.domain)
            table = self._cache[task.domain]
            if task.task_id not in table:
                raise ConfigError(f"query source {self.name!r} has no query for task {task.task_id}")
            out[task.task_id] = table[task.task_id]
        return out


def benchmark_rewrites(data: MTRAGData) -> QueryFile:
    """The benchmark's reference standalone rewrites (``{domain}_rewrite.jsonl``)."""
    return QueryFile("rewrite", lambda domain: data.queries(domain, "rewrite"))


def query_file(path: Path) -> QueryFile:
    """A user-supplied BEIR query file covering the tasks (any domain)."""
    table = read_queries(path)
    return QueryFile(Path(path).stem, lambda domain: table)


QUERY_SOURCES: dict[str, Callable[[MTRAGData | None], QuerySource]] = {
    "lastturn": lambda data: LastTurn(),
    "questions": lambda data: AllQuestions(),
    "rewrite": lambda data: _need_data(data, benchmark_rewrites),
}


def _need_data(data: MTRAGData | None, factory: Callable[[MTRAGData], QuerySource]) -> QuerySource:
    if data is None:
        raise ConfigError("this query source reads the benchmark's files; give a data folder")
    return factory(data)


def make_query_source(spec: str, data: MTRAGData | None = None) -> QuerySource:
    """A registered source by name, or a BEIR query file given by path (``*.jsonl``)."""
    if spec in QUERY_SOURCES:
        return QUERY_SOURCES[spec](data)
    if spec.endswith(".jsonl") or Path(spec).exists():
        return query_file(Path(spec))
    raise ConfigError(f"unknown query source {spec!r}; expected one of {', '.join(QUERY_SOURCES)} or a .jsonl query file")
