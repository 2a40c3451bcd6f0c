"""Conversations, turns, collection records, documents and indexing jobs in one SQLite file
(WAL mode) next to the collections. Every write is one transaction: a crash loses at most the
write in flight, never what was already stored."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .links import served_links


class ConversationChanged(RuntimeError):
    """A turn was written from a conversation that has changed since (another answer stored, or the
    conversation deleted): storing it would put an answer after a history it never saw, or replace
    the wrong turn, so it is refused and nothing is stored."""


SCHEMA = """
CREATE TABLE IF NOT EXISTS collections (
    name TEXT PRIMARY KEY,
    description TEXT NOT NULL DEFAULT '',
    embedding_model TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (
    collection TEXT NOT NULL REFERENCES collections(name) ON DELETE CASCADE,
    doc_id TEXT NOT NULL,
    filename TEXT NOT NULL,
    title TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    passages INTEGER NOT NULL,
    job_id TEXT NOT NULL,
    added REAL NOT NULL,
    original TEXT,                  -- the user's own file name (NULL in databases made before it was kept)
    PRIMARY KEY (collection, doc_id)
);
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    collection TEXT NOT NULL,
    status TEXT NOT NULL,           -- queued, running, succeeded, failed
    stage TEXT NOT NULL DEFAULT '',
    done INTEGER NOT NULL DEFAULT 0,
    total INTEGER NOT NULL DEFAULT 0,
    files TEXT NOT NULL,            -- JSON list of {filename, original, doc_id, stored, bytes}
    error TEXT,
    created REAL NOT NULL,
    started REAL,
    finished REAL,
    remove TEXT,                    -- JSON list of document ids the job deletes (NULL: none)
    source TEXT,                    -- NULL: the uploaded files; "indexed": what `convrag index` built of the collection;
                                    -- "web": pages fetched from an address
    web TEXT                        -- JSON {url, crawl, max_pages, replace, headers: their names} of a "web" job
);
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    collections TEXT NOT NULL,      -- JSON list
    strategy TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS turns (
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    declined INTEGER NOT NULL,
    citations TEXT NOT NULL,        -- JSON
    trace TEXT NOT NULL,            -- JSON
    created REAL NOT NULL,
    PRIMARY KEY (conversation_id, idx)
);
"""


def new_id() -> str:
    return uuid.uuid4().hex[:16]


class Store:
    """Thread-safe access to the service database (one connection, one lock)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(SCHEMA)
            self._migrate()
        except sqlite3.Error as exc:
            self._db.close()
            # unlike the completion cache, this file holds the users' conversations: it is never
            # moved or rebuilt here, only named, so that it can be restored or examined
            raise ConfigError(f"the service database {self.path} cannot be opened ({exc}); it was left as it is: "
                              "restore it from a backup, or move it away to start with an empty one") from None

    def _migrate(self) -> None:
        """Bring a database made by an earlier version up to this schema (columns are only added),
        and its turns to what the service now hands out (version 1: only links a client can follow)."""
        for table, column in (("documents", "original"), ("jobs", "remove"), ("jobs", "source"), ("jobs", "web")):
            columns = {r["name"] for r in self._db.execute(f"PRAGMA table_info({table})")}
            if column not in columns:
                self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} TEXT")
        if self._db.execute("PRAGMA user_version").fetchone()[0] < 1:
            self._serve_stored_links()

    def _serve_stored_links(self) -> None:
        """Turns answered before the service kept ``file://`` links out of its hits hold them in their
        citations and trace: empty those links once (:func:`.links.served_links`), in one transaction
        with the version that marks it done, rather than on every read of every turn."""
        with self.transaction() as db:
            for row in db.execute("SELECT conversation_id, idx, citations, trace FROM turns").fetchall():
                citations, trace = json.loads(row["citations"]), json.loads(row["trace"])
                served = served_links(citations), served_links(trace)
                if served != (citations, trace):
                    db.execute("UPDATE turns SET citations = ?, trace = ? WHERE conversation_id = ? AND idx = ?",
                               (json.dumps(served[0]), json.dumps(served[1], default=str), row["conversation_id"], row["idx"]))
            db.execute("PRAGMA user_version = 1")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _all(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(r) for r in self._db.execute(sql, args).fetchall()]

    def _one(self, sql: str, *args: Any) -> dict[str, Any] | None:
        rows = self._all(sql, *args)
        return rows[0] if rows else None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # collections and documents
    def add_collection(self, name: str, description: str, embedding_model: str) -> dict[str, Any]:
        with self.transaction() as db:
            db.execute("INSERT INTO collections (name, description, embedding_model, created) VALUES (?, ?, ?, ?)",
                       (name, description, embedding_model, time.time()))
        return self.collection(name) or {}

    def collection(self, name: str) -> dict[str, Any] | None:
        return self._one("SELECT * FROM collections WHERE name = ?", name)

    def collections(self) -> list[dict[str, Any]]:
        return self._all("SELECT * FROM collections ORDER BY name")

    def delete_collection(self, name: str) -> None:
        """The collection's record, its documents (cascade) and its jobs."""
        with self.transaction() as db:
            db.execute("DELETE FROM collections WHERE name = ?", (name,))
            db.execute("DELETE FROM jobs WHERE collection = ?", (name,))

    _DOCUMENT = "doc_id, filename, COALESCE(original, filename) AS original, title, bytes, passages, job_id, added"

    def documents(self, collection: str) -> list[dict[str, Any]]:
        """The collection's documents; ``uploaded`` is false for those of a collection taken on as
        ``convrag index`` made it, which have no file to download. Whether a document was uploaded is
        read from its collection's jobs' file lists once: looked up per document in SQL (json_each in
        a subquery), it took 66 s for 20,000 documents uploaded 10,000 at a time, and the collection
        listing, a download and each document a job replaced each paid it."""
        rows = self._all(f"SELECT {self._DOCUMENT} FROM documents WHERE collection = ? ORDER BY added, doc_id", collection)
        uploaded = {(job["id"], f.get("doc_id")) for job in self._all("SELECT id, files FROM jobs WHERE collection = ?", collection)
                    for f in json.loads(job["files"])}
        for row in rows:
            row["uploaded"] = (row["job_id"], row["doc_id"]) in uploaded
        return rows

    def document(self, collection: str, doc_id: str) -> dict[str, Any] | None:
        row = self._one(f"SELECT {self._DOCUMENT} FROM documents WHERE collection = ? AND doc_id = ?", collection, doc_id)
        if row is not None:
            job = self._one("SELECT files FROM jobs WHERE id = ?", row["job_id"])
            row["uploaded"] = job is not None and any(f.get("doc_id") == doc_id for f in json.loads(job["files"]))
        return row

    def document_count(self, collection: str) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM documents WHERE collection = ?", (collection,)).fetchone()[0])

    def set_collection_description(self, name: str, description: str) -> None:
        with self.transaction() as db:
            db.execute("UPDATE collections SET description = ? WHERE name = ?", (description, name))

    # jobs
    def add_job(self, collection: str, files: list[dict[str, Any]], remove: list[str] | None = None,
                source: str | None = None, web: dict[str, Any] | None = None) -> dict[str, Any]:
        """Queue an indexing job: ``files`` to add or replace, ``remove`` document ids to delete; or, with
        ``source`` "indexed", the documents of what ``convrag index`` built of the collection to bring in;
        or, with ``source`` "web", the pages ``web`` names (``url``, ``crawl``, ``max_pages``, ``replace``,
        and the names of the headers the indexer holds for it, never their values) to fetch, which become
        its files once fetched."""
        job_id = new_id()
        with self.transaction() as db:
            db.execute("INSERT INTO jobs (id, collection, status, files, created, remove, source, web) "
                       "VALUES (?, ?, 'queued', ?, ?, ?, ?, ?)",
                       (job_id, collection, json.dumps(files), time.time(), json.dumps(remove) if remove else None, source,
                        json.dumps(web) if web else None))
        return self.job(job_id) or {}

    @staticmethod
    def _job_row(row: dict[str, Any]) -> dict[str, Any]:
        row["files"] = json.loads(row["files"])
        row["remove"] = json.loads(row["remove"]) if row.get("remove") else []
        row["web"] = json.loads(row["web"]) if row.get("web") else None
        return row

    def job(self, job_id: str) -> dict[str, Any] | None:
        row = self._one("SELECT * FROM jobs WHERE id = ?", job_id)
        return self._job_row(row) if row is not None else None

    def jobs(self, collection: str | None = None, limit: int | None = None, before: float | None = None) -> list[dict[str, Any]]:
        """Jobs newest first (of ``collection``, if given): the ``limit`` newest created before ``before``."""
        where = [(clause, value) for clause, value in (("collection = ?", collection), ("created < ?", before)) if value is not None]
        sql = "SELECT * FROM jobs" + (" WHERE " + " AND ".join(c for c, _ in where) if where else "") + " ORDER BY created DESC"
        args: list[Any] = [v for _, v in where]
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        return [self._job_row(row) for row in self._all(sql, *args)]

    def update_job(self, job_id: str, **fields: Any) -> None:
        names = ", ".join(f"{k} = ?" for k in fields)
        with self.transaction() as db:
            db.execute(f"UPDATE jobs SET {names} WHERE id = ?", (*fields.values(), job_id))

    def finish_job(self, job_id: str, collection: str, documents: list[dict[str, Any]], removed: list[str] = ()) -> None:  # type: ignore[assignment]
        """Mark the job succeeded, record its documents and forget the removed ones, in one transaction.
        Its progress reads as whole: every file and removal done (the last stage it reported, the
        BM25 index, has no count, and left "0 of 0")."""
        now = time.time()
        with self.transaction() as db:
            db.executemany("DELETE FROM documents WHERE collection = ? AND doc_id = ?", [(collection, d) for d in removed])
            for d in documents:
                db.execute(
                    "INSERT OR REPLACE INTO documents (collection, doc_id, filename, title, bytes, passages, job_id, added,"
                    " original) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (collection, d["doc_id"], d["filename"], d["title"], d["bytes"], d["passages"], job_id, now,
                     d.get("original") or d["filename"]),
                )
            row = db.execute("SELECT files, remove FROM jobs WHERE id = ?", (job_id,)).fetchone()
            items = len(json.loads(row[0] or "[]")) + len([d for d in json.loads(row[1] or "[]") if d]) if row else 0
            db.execute("UPDATE jobs SET status = 'succeeded', stage = 'done', done = ?, total = ?, finished = ?, error = NULL "
                       "WHERE id = ?", (items, items, now, job_id))

    def unfinished_jobs(self) -> list[dict[str, Any]]:
        return [self._job_row(r) for r in self._all("SELECT * FROM jobs WHERE status IN ('queued', 'running') ORDER BY created")]

    # conversations
    def add_conversation(self, title: str, collections: list[str], strategy: str) -> dict[str, Any]:
        conv_id, now = new_id(), time.time()
        with self.transaction() as db:
            db.execute("INSERT INTO conversations (id, title, collections, strategy, created, updated) VALUES (?, ?, ?, ?, ?, ?)",
                       (conv_id, title, json.dumps(collections), strategy, now, now))
        return self.conversation(conv_id) or {}

    def conversation(self, conv_id: str, with_turns: bool = False) -> dict[str, Any] | None:
        row = self._one("SELECT * FROM conversations WHERE id = ?", conv_id)
        if row is None:
            return None
        row["collections"] = json.loads(row["collections"])
        if with_turns:
            row["turns"] = self.turns(conv_id)
        return row

    def conversations(self) -> list[dict[str, Any]]:
        rows = self._all("SELECT c.*, (SELECT COUNT(*) FROM turns t WHERE t.conversation_id = c.id) AS turn_count "
                         "FROM conversations c ORDER BY updated DESC")
        for row in rows:
            row["collections"] = json.loads(row["collections"])
        return rows

    def turns(self, conv_id: str) -> list[dict[str, Any]]:
        rows = self._all("SELECT * FROM turns WHERE conversation_id = ? ORDER BY idx", conv_id)
        for row in rows:
            row["citations"] = json.loads(row["citations"])
            row["trace"] = json.loads(row["trace"])
            row["declined"] = bool(row["declined"])
        return rows

    def add_turn(self, conv_id: str, question: str, answer: str, declined: bool, citations: list[dict[str, Any]],
                 trace: dict[str, Any], title: str | None = None, replace_last: bool = False,
                 expected_turns: int | None = None) -> dict[str, Any]:
        """Append a turn, or with ``replace_last`` put it in place of the last one (a regenerated
        answer): one transaction, so the old answer stays until the new one is stored.
        ``expected_turns`` is how many turns the conversation had when the answer was begun; if it
        has another number now, or the conversation is gone, :class:`ConversationChanged` is raised
        and nothing is written."""
        now = time.time()
        with self.transaction() as db:
            if db.execute("SELECT 1 FROM conversations WHERE id = ?", (conv_id,)).fetchone() is None:
                raise ConversationChanged(f"the conversation {conv_id!r} was deleted while its answer was written")
            last = db.execute("SELECT MAX(idx) FROM turns WHERE conversation_id = ?", (conv_id,)).fetchone()[0]
            count = 0 if last is None else last + 1
            if expected_turns is not None and count != expected_turns:
                raise ConversationChanged(f"the conversation changed while this answer was written ({expected_turns} turns "
                                          f"then, {count} now); nothing was stored: ask again")
            if replace_last and last is not None:
                db.execute("DELETE FROM turns WHERE conversation_id = ? AND idx = ?", (conv_id, last))
                idx = last
            else:
                idx = count
            db.execute(
                "INSERT INTO turns (conversation_id, idx, question, answer, declined, citations, trace, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (conv_id, idx, question, answer, int(declined), json.dumps(citations), json.dumps(trace, default=str), now),
            )
            if title is not None:
                db.execute("UPDATE conversations SET updated = ?, title = ? WHERE id = ?", (now, title, conv_id))
            else:
                db.execute("UPDATE conversations SET updated = ? WHERE id = ?", (now, conv_id))
        return self.turns(conv_id)[idx]

    def update_conversation(self, conv_id: str, title: str | None = None, collections: list[str] | None = None,
                            strategy: str | None = None) -> bool:
        """Set the title, the collections and/or the strategy (what is None stays); False when there
        is no such conversation."""
        with self.transaction() as db:
            row = db.execute("SELECT title, collections, strategy FROM conversations WHERE id = ?", (conv_id,)).fetchone()
            if row is None:
                return False
            db.execute("UPDATE conversations SET title = ?, collections = ?, strategy = ?, updated = ? WHERE id = ?",
                       (title if title is not None else row[0], json.dumps(collections) if collections is not None else row[1],
                        strategy if strategy is not None else row[2], time.time(), conv_id))
            return True

    def delete_conversation(self, conv_id: str) -> bool:
        with self.transaction() as db:
            return db.execute("DELETE FROM conversations WHERE id = ?", (conv_id,)).rowcount > 0
