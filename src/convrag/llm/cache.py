"""A persistent completion cache, so that re-running an evaluation costs no model calls.

Keyed by backend, model, messages and generation parameters (a SHA-256 of their canonical
JSON). SQLite in WAL mode: several processes may read while one writes, and a crash loses at
most the call in flight. Only successful completions are stored; errors are retried next time.

The cache only saves time, so it never costs an answer: a file that is not a SQLite database (or
is corrupt) is moved aside, kept for the user, and a new cache started; a read or a write that
fails later (a full disk, a lock held too long) is logged and the call goes on uncached.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import ConfigError
from .base import LLM, ChatMessage, Completion, GenerationParams, holds, prefill, stream

log = logging.getLogger("convrag.llm")

#: SQLite's answers for a file that is not a database, or one whose pages are damaged
_UNREADABLE = (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    created TEXT NOT NULL DEFAULT (datetime('now')),
    first_token_s REAL,
    steering TEXT,
    finish_reason TEXT
)
"""


def cache_key(backend: str, model: str, messages: list[ChatMessage], params: GenerationParams) -> str:
    request = json.dumps(
        {"backend": backend, "model": model, "messages": messages, "params": params.as_dict()}, sort_keys=True, ensure_ascii=False
    )
    return hashlib.sha256(request.encode("utf-8")).hexdigest()


class CachedLLM:
    """Wraps a backend; answers repeated requests from ``path`` without calling it."""

    def __init__(self, llm: LLM, path: Path) -> None:
        self.inner = llm
        self.backend = llm.backend
        self.model = llm.model
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._db = _connect(self.path)
            except sqlite3.DatabaseError as exc:
                if getattr(exc, "sqlite_errorcode", None) not in _UNREADABLE:
                    raise
                aside = _move_aside(self.path)
                log.warning("the completion cache %s is unreadable (%s); it was moved to %s and a new cache started",
                            self.path, exc, aside.name)
                self._db = _connect(self.path)
        except (OSError, sqlite3.Error) as exc:  # a folder that cannot be written, a lock held past the timeout
            raise ConfigError(f"cannot open the completion cache {self.path}: {exc} (--no-llm-cache runs without it)") from None
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def prefill(self, messages: list[ChatMessage]) -> int | None:
        """Read ahead on the backend (:func:`..base.prefill`): nothing is stored, as nothing is answered."""
        return prefill(self.inner, messages)

    def holds(self, messages: list[ChatMessage]) -> bool:
        """Whether the backend has read this prompt start (:func:`..base.holds`)."""
        return holds(self.inner, messages)

    def _lookup(self, key: str) -> Completion | None:
        try:
            with self._lock:
                row = self._db.execute(
                    "SELECT text, prompt_tokens, completion_tokens, latency_s, first_token_s, steering, finish_reason FROM completions"
                    " WHERE key = ?", (key,)
                ).fetchone()
        except sqlite3.Error as exc:
            log.warning("the completion cache %s could not be read (%s); the model is asked instead", self.path, exc)
            return None
        if row is None:
            return None
        self.hits += 1
        return Completion(row[0], row[1], row[2], row[3], self.model, cached=True, first_token_s=row[4],
                          steering=json.loads(row[5]) if row[5] else None, finish_reason=row[6])

    def complete(self, messages: list[ChatMessage], params: GenerationParams = GenerationParams()) -> Completion:
        key = cache_key(self.backend, self.model, messages, params)
        hit = self._lookup(key)
        if hit is not None:
            return hit
        completion = self.inner.complete(messages, params)
        self._store(key, messages, params, completion)
        return completion

    @property
    def stoppable(self) -> bool:
        """Whether the backend's stream looks at a ``stop`` (:func:`..base.stream`)."""
        return bool(getattr(self.inner, "stoppable", False))

    def stream(self, messages: list[ChatMessage], params: GenerationParams = GenerationParams(),
               stop: Callable[[], bool] | None = None) -> Iterator[str | Completion]:
        """A cached answer in one piece; otherwise the backend's stream, stored once it completes
        (a stream closed early, or stopped before its completion, stores nothing)."""
        key = cache_key(self.backend, self.model, messages, params)
        hit = self._lookup(key)
        if hit is not None:
            if hit.text:
                yield hit.text
            yield hit
            return
        for item in stream(self.inner, messages, params, stop):
            if isinstance(item, Completion):
                self._store(key, messages, params, item)
            yield item

    def _store(self, key: str, messages: list[ChatMessage], params: GenerationParams, completion: Completion) -> None:
        self.misses += 1
        request = json.dumps({"messages": messages, "params": params.as_dict()}, ensure_ascii=False)
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO completions (key, backend, model, request, text, prompt_tokens, completion_tokens,"
                    " latency_s, first_token_s, steering, finish_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (key, self.backend, self.model, request, completion.text, completion.prompt_tokens,
                     completion.completion_tokens, completion.latency_s, completion.first_token_s,
                     json.dumps(completion.steering) if completion.steering is not None else None, completion.finish_reason),
                )
                self._db.commit()
        except sqlite3.Error as exc:  # the completion is the caller's all the same; only the saving is lost
            log.warning("the completion cache %s could not store a completion (%s); it is used uncached", self.path, exc)
            try:
                self._db.rollback()
            except sqlite3.Error:
                pass

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _connect(path: Path) -> sqlite3.Connection:
    """The cache's database at ``path``, created or brought up to today's columns."""
    db = sqlite3.connect(path, check_same_thread=False, timeout=30)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(_SCHEMA)
        columns = {row[1] for row in db.execute("PRAGMA table_info(completions)")}
        for column, kind in (("first_token_s", "REAL"), ("steering", "TEXT"), ("finish_reason", "TEXT")):
            if column not in columns:  # a cache made before the column was kept
                db.execute(f"ALTER TABLE completions ADD COLUMN {column} {kind}")
        db.commit()
    except BaseException:
        db.close()
        raise
    return db


def _move_aside(path: Path) -> Path:
    """Rename an unreadable cache (with its WAL and shared-memory files) to ``NAME.unreadable-TIME``:
    nothing the user had is deleted, and a new cache can take the name."""
    aside = path.with_name(f"{path.name}.unreadable-{time.strftime('%Y%m%dT%H%M%S')}")
    for suffix in ("", "-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            part.rename(aside.with_name(aside.name + suffix))
    return aside
