"""The service database: documents and whether each was uploaded, read without per-document scans."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from convrag.service.store import Store


def _fill(store: Store, rng: random.Random, jobs: int, files: int) -> None:
    """A collection whose documents come from upload jobs (most named in their job's files), from a
    take-on job (no files), and a second collection whose jobs name the same document ids."""
    with store.transaction() as db:
        for name in ("c", "other"):
            db.execute("INSERT INTO collections (name, description, embedding_model, created) VALUES (?, '', 'm', 0)", (name,))
        for j in range(jobs):
            names = [f"d{rng.randrange(files * 2)}" for _ in range(files)]
            listed = [{"filename": f"{n}.md", "original": f"{n}.md", "doc_id": n, "stored": "x", "bytes": 1} for n in names]
            take_on = j == 0
            db.execute("INSERT INTO jobs (id, collection, status, files, created) VALUES (?, 'c', 'succeeded', ?, ?)",
                       (f"j{j}", "[]" if take_on else json.dumps(listed), j))
            db.execute("INSERT INTO jobs (id, collection, status, files, created) VALUES (?, 'other', 'succeeded', ?, ?)",
                       (f"o{j}", json.dumps(listed), j))
            for n in set(names) | ({f"unlisted{j}"} if rng.random() < 0.5 else set()):
                db.execute("INSERT OR REPLACE INTO documents (collection, doc_id, filename, title, bytes, passages, job_id, added, "
                           "original) VALUES ('c', ?, ?, 't', 1, 1, ?, ?, NULL)", (n, f"{n}.md", f"j{j}", j))


def _old_documents(store: Store, collection: str) -> list[dict[str, Any]]:
    """The documents as the old query read them: a json_each scan of the document's job per document."""
    rows = store._all("SELECT doc_id, filename, COALESCE(original, filename) AS original, title, bytes, passages, job_id, "
                      "added, EXISTS (SELECT 1 FROM jobs, json_each(jobs.files) AS f WHERE jobs.id = documents.job_id "
                      "AND json_extract(f.value, '$.doc_id') = documents.doc_id) AS uploaded "
                      "FROM documents WHERE collection = ? ORDER BY added, doc_id", collection)
    return [{**row, "uploaded": bool(row["uploaded"])} for row in rows]


def test_documents_read_as_before(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite")
    _fill(store, random.Random(5), jobs=12, files=30)
    expected = _old_documents(store, "c")
    assert store.documents("c") == expected
    assert {d["uploaded"] for d in expected} == {True, False}  # both kinds are there to tell apart
    for row in expected:
        assert store.document("c", row["doc_id"]) == row
    assert store.document("c", "nowhere") is None and store.document("other", expected[0]["doc_id"]) is None
    assert store.document_count("c") == len(expected) and store.document_count("other") == 0


def test_documents_are_read_in_work_linear_in_the_files(tmp_path: Path) -> None:
    """Looking up each document in its job's file list made the listing quadratic: 66 s for 20,000
    documents uploaded 10,000 at a time, paid by the collection listing, by every download and by
    every document a job replaced. Work is counted in SQLite's virtual machine steps (its progress
    handler), not in seconds."""
    store = Store(tmp_path / "db.sqlite")
    _fill(store, random.Random(1), jobs=3, files=1_500)
    steps = 0

    def step() -> int:
        nonlocal steps
        steps += 1
        return 0

    store._db.set_progress_handler(step, 1_000)
    listed = store.documents("c")
    store.document("c", listed[-1]["doc_id"])
    store.document_count("c")
    store._db.set_progress_handler(None, 1_000)
    assert steps < 200, steps  # the old listing alone took 6,719 of these thousand-instruction steps here; 63 now


def test_jobs_come_newest_first_a_page_at_a_time(tmp_path: Path) -> None:
    """Every upload is a job, and GET /api/jobs returned all of them at once."""
    store = Store(tmp_path / "db.sqlite")
    with store.transaction() as db:
        for j in range(7):
            db.execute("INSERT INTO jobs (id, collection, status, files, created) VALUES (?, ?, 'succeeded', '[]', ?)",
                       (f"j{j}", "a" if j % 2 else "b", float(j)))
    assert [j["id"] for j in store.jobs()] == [f"j{j}" for j in range(6, -1, -1)]
    first = store.jobs(limit=3)
    assert [j["id"] for j in first] == ["j6", "j5", "j4"]
    assert [j["id"] for j in store.jobs(limit=3, before=first[-1]["created"])] == ["j3", "j2", "j1"]
    assert [j["id"] for j in store.jobs("a", limit=2, before=5.0)] == ["j3", "j1"]
