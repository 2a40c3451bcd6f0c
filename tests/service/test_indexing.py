from pathlib import Path

from convrag.index.collection import Collection
from convrag.service.backends.embedded import EmbeddedCollections, job_source
from convrag.service.indexing import INTERRUPTED, Indexer
from convrag.service.store import Store
from convrag.types import Passage


def test_recovery_completes_a_job_whose_index_was_switched_and_fails_the_others(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite")
    store.add_collection("gov", "", "all-MiniLM-L6-v2")
    files = [{"filename": "a.txt", "doc_id": "a", "stored": "00000-a.txt", "bytes": 10}]
    applied = store.add_job("gov", files)
    lost = store.add_job("gov", [{"filename": "b.txt", "doc_id": "b", "stored": "00000-b.txt", "bytes": 5}])
    store.update_job(applied["id"], status="running")
    (tmp_path / "uploads" / lost["id"]).mkdir(parents=True)
    # the process died after the new version went live, before the database said so
    Collection.build(tmp_path / "collections" / "gov", [Passage("a-0-10", "harbour fees"), Passage("a-11-20", "boat permits")],
                     source=job_source(applied["id"]))
    Indexer(store, EmbeddedCollections(tmp_path / "collections"), tmp_path / "uploads").recover()
    assert store.job(applied["id"])["status"] == "succeeded"
    assert store.documents("gov")[0]["doc_id"] == "a" and store.documents("gov")[0]["passages"] == 2
    assert store.job(lost["id"])["status"] == "failed" and store.job(lost["id"])["error"] == INTERRUPTED
    assert not (tmp_path / "uploads" / lost["id"]).exists()


def test_a_job_bringing_in_what_convrag_index_built_runs_again_after_a_stop(tmp_path: Path) -> None:
    """It has no uploaded files to lose, and bringing the same version in again gives the same
    result: one the stop cut off, even after its switch, is run again, not failed (nor recorded
    from its job's files, of which it has none: its documents would be left unlisted)."""
    store = Store(tmp_path / "db.sqlite")
    store.add_collection("gov", "", "all-MiniLM-L6-v2")
    job = store.add_job("gov", [], source="indexed")
    store.update_job(job["id"], status="running")
    Collection.build(tmp_path / "collections" / "gov", [Passage("a-0-10", "harbour fees")], source=job_source(job["id"]))
    indexer = Indexer(store, EmbeddedCollections(tmp_path / "collections"), tmp_path / "uploads")
    indexer.recover()
    assert store.job(job["id"])["status"] == "queued" and indexer.busy("gov")


def test_a_web_job_cut_off_by_a_stop_fetches_its_pages_again(tmp_path: Path) -> None:
    """Its pages are on the web, not lost with an upload's files: one the stop cut off before its index
    went live is run again (its half-written folder fetched afresh), not failed."""
    store = Store(tmp_path / "db.sqlite")
    store.add_collection("gov", "", "all-MiniLM-L6-v2")
    for fetched in (False, True):
        job = store.add_job("gov", [], source="web", web={"url": "https://example.com/", "crawl": True, "max_pages": 5})
        store.update_job(job["id"], status="running")
        if fetched:
            (tmp_path / "uploads" / job["id"]).mkdir(parents=True)
        indexer = Indexer(store, EmbeddedCollections(tmp_path / "collections"), tmp_path / "uploads")
        indexer.recover()
        assert store.job(job["id"])["status"] == "queued" and indexer.busy("gov")


def test_a_web_job_whose_headers_a_restart_lost_fails_rather_than_fetch_without_them(tmp_path: Path) -> None:
    """The headers' values live in the server's memory alone; fetched without its token, an intranet's wiki
    gives its log-in page, which would be indexed as its pages."""
    import pytest

    from convrag.errors import ConvragError

    store = Store(tmp_path / "db.sqlite")
    store.add_collection("wiki", "", "all-MiniLM-L6-v2")
    job = store.add_job("wiki", [], source="web", web={"url": "https://wiki.example/", "crawl": False, "max_pages": 1,
                                                       "headers": ["Authorization"]})
    indexer = Indexer(store, EmbeddedCollections(tmp_path / "collections"), tmp_path / "uploads")
    with pytest.raises(ConvragError, match=r"the headers sent with this job \(Authorization\) are not kept across a restart"):
        indexer.run(store.job(job["id"]))


def test_an_old_database_gains_the_new_columns_without_losing_rows(tmp_path: Path) -> None:
    import sqlite3

    old = sqlite3.connect(tmp_path / "db.sqlite")
    old.executescript("""
        CREATE TABLE collections (name TEXT PRIMARY KEY, description TEXT NOT NULL DEFAULT '', embedding_model TEXT NOT NULL,
                                  created REAL NOT NULL);
        CREATE TABLE documents (collection TEXT NOT NULL, doc_id TEXT NOT NULL, filename TEXT NOT NULL, title TEXT NOT NULL,
                                bytes INTEGER NOT NULL, passages INTEGER NOT NULL, job_id TEXT NOT NULL, added REAL NOT NULL,
                                PRIMARY KEY (collection, doc_id));
        CREATE TABLE jobs (id TEXT PRIMARY KEY, collection TEXT NOT NULL, status TEXT NOT NULL, stage TEXT NOT NULL DEFAULT '',
                           done INTEGER NOT NULL DEFAULT 0, total INTEGER NOT NULL DEFAULT 0, files TEXT NOT NULL, error TEXT,
                           created REAL NOT NULL, started REAL, finished REAL);
        INSERT INTO collections VALUES ('gov', '', 'all-MiniLM-L6-v2', 1.0);
        INSERT INTO documents VALUES ('gov', 'report_final', 'report final.md', 'Report', 10, 1, 'j1', 2.0);
        INSERT INTO jobs VALUES ('j1', 'gov', 'succeeded', 'done', 1, 1, '[]', NULL, 1.0, 1.0, 2.0);
    """)
    old.close()
    store = Store(tmp_path / "db.sqlite")
    assert store.documents("gov")[0]["original"] == "report final.md"  # the stored name stands in for the user's
    assert store.job("j1")["remove"] == [] and store.job("j1")["source"] is None and store.job("j1")["web"] is None
    fetch = store.add_job("gov", [], source="web", web={"url": "https://example.com/", "crawl": False, "max_pages": 1})
    assert store.job(fetch["id"])["web"] == {"url": "https://example.com/", "crawl": False, "max_pages": 1}


def test_embedding_progress_moves_while_a_build_runs(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    seen: list[int] = []

    class Recorder:
        from contextlib import contextmanager

        @contextmanager
        def stage(self, description: str, total: int | None = None):  # type: ignore[no-untyped-def]
            done = 0

            def advance(n: int = 1) -> None:
                nonlocal done
                done += n
                if description.startswith("c: embedding"):
                    seen.append(done)

            yield advance

    passages = [Passage(f"d-{i}-{i + 1}", f"passage number {i} about harbour fees and boat permits") for i in range(600)]
    Collection.build(tmp_path / "c", passages, embedder=embedder, reporter=Recorder())
    assert seen[-1] == 600 and len(seen) >= 3 and seen[0] < 600  # several steps, not one jump at the end


def test_repairing_reads_each_jobs_file_list_once(tmp_path: Path) -> None:
    """Reading a damaged collection's documents again looked up each document's file in its job's
    list, read and parsed again for every document: documents times files."""
    import json

    store = Store(tmp_path / "db.sqlite")
    with store.transaction() as db:
        db.execute("INSERT INTO collections (name, description, embedding_model, created) VALUES ('c', '', 'm', 0)")
        for j in range(3):
            files = [{"filename": f"d{j}_{i}.md", "original": f"d{j}_{i}.md", "doc_id": f"d{j}_{i}", "stored": f"{i}.md",
                      "bytes": 1} for i in range(40)]
            db.execute("INSERT INTO jobs (id, collection, status, files, created) VALUES (?, 'c', 'succeeded', ?, ?)",
                       (f"j{j}", json.dumps(files), j))
            for f in files:
                db.execute("INSERT INTO documents (collection, doc_id, filename, title, bytes, passages, job_id, added) "
                           "VALUES ('c', ?, ?, 't', 1, 1, ?, ?)", (f["doc_id"], f["filename"], f"j{j}", j))
                (tmp_path / "uploads" / f"j{j}").mkdir(parents=True, exist_ok=True)
                (tmp_path / "uploads" / f"j{j}" / f["stored"]).write_text("x")
    indexer = Indexer.__new__(Indexer)
    indexer.store, indexer.uploads_root = store, tmp_path / "uploads"
    read: list[str] = []
    indexer._chunked = lambda name, path, f, embedder: [Passage(f"{f['doc_id']}-0-1", "x")]  # type: ignore[method-assign]
    looked_up = store.job

    def job(job_id: str):  # type: ignore[no-untyped-def]
        read.append(job_id)
        return looked_up(job_id)

    store.job = job  # type: ignore[method-assign]
    passages = indexer._stored_passages("c", {"d0_0"}, None)  # type: ignore[arg-type]
    assert len(passages) == 119 and sorted(read) == ["j0", "j1", "j2"]
