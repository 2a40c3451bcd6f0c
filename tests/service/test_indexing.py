from pathlib import Path

from convrag.index.collection import Collection
from convrag.service.indexing import INTERRUPTED, Indexer, job_source
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
    Indexer(store, tmp_path / "collections", tmp_path / "uploads").recover()
    assert store.job(applied["id"])["status"] == "succeeded"
    assert store.documents("gov")[0]["doc_id"] == "a" and store.documents("gov")[0]["passages"] == 2
    assert store.job(lost["id"])["status"] == "failed" and store.job(lost["id"])["error"] == INTERRUPTED
    assert not (tmp_path / "uploads" / lost["id"]).exists()
