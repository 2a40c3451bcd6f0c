"""The service over Milvus (``backend: milvus``): uploads, replacements, removals, answers and
deletes through the same API as the embedded collections, against a real Milvus Lite."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from typer.testing import CliRunner

from convrag.cli.main import app
from convrag.errors import BackendUnavailable
from convrag.service import ServiceSettings
from convrag.service.backends.milvus import MilvusCollections
from convrag.service.indexing import Indexer
from convrag.service.store import Store
from tests.helpers import PASSPORT, ScriptedLLM, upload

from .conftest import ThreadServer, milvus_indexed_elsewhere, wait_job

FISHING = b"# Fishing\n\nA yearly fishing license costs 25 dollars for residents.\n"


def search(client: httpx.Client, query: str) -> list[dict]:
    return client.post("/api/search", json={"collections": ["gov"], "query": query, "k": 3}).json()["hits"]


def take_on(client: httpx.Client, name: str) -> dict:
    """Create ``name`` in a service that lists no collection yet, and check it was taken on."""
    assert client.get("/api/collections").json() == []  # not the service's until it is asked for
    created = client.post("/api/collections", json={"name": name})
    assert created.status_code == 201, created.text
    assert created.json()["taken_on"]
    return created.json()


def test_a_service_keeps_its_collections_in_milvus(tmp_path: Path) -> None:
    """The service kept its collections in embedded folders only: a deployment with a Milvus
    cluster could search it from `convrag ask --backend milvus`, not chat over it in the service."""
    settings = ServiceSettings.load(data_dir=tmp_path / "svc", backend="milvus")
    llm = ScriptedLLM(answer=["Renewal by mail costs 130 dollars [1]."])
    with ThreadServer(settings, llm) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        assert client.post("/api/collections", json={"name": "gov"}).status_code == 201
        assert upload(client, "gov", [("passports.md", PASSPORT.encode()), ("fishing.md", FISHING)])["status"] == "succeeded"
        info = client.get("/api/collections/gov").json()
        assert info["passages"] == 2 and info["documents"] == 2 and info["version"] is None and "problem" not in info
        assert (tmp_path / "svc" / "milvus.db").exists() and not (tmp_path / "svc" / "collections" / "gov").exists()
        hit = search(client, "passport renewal by mail")[0]
        assert hit["document_id"] == "passports" and "130 dollars" in hit["text"]
        passage = client.get(f"/api/collections/gov/passages/{hit['passage_id']}").json()
        assert passage["text"] == hit["text"] and passage["title"] == hit["title"]
        reply = client.post("/v1/chat/completions", json={"model": "collection:gov", "messages": [
            {"role": "user", "content": "How much does passport renewal by mail cost?"}]}).json()
        assert reply["choices"][0]["message"]["content"] == "Renewal by mail costs 130 dollars [1]."
        assert reply["convrag"]["citations"][0]["document_id"] == "passports"
        # a collection another program made in the same Milvus is not the service's: not offered as a model
        from convrag.embeddings import load_embedder
        from convrag.types import Passage

        embedder = load_embedder()
        outside = server.app.state.convrag.collections.milvus.create("outside", embedder.name, embedder.dimension)
        outside.ingest([Passage("x-0-5", "harbour fees")], embedder)
        assert [m["id"] for m in client.get("/v1/models").json()["data"]] == ["collection:gov"]
        assert [c["name"] for c in client.get("/api/collections").json()] == ["gov"]
        # a document replaced: its old passages go, the other document's stay
        assert upload(client, "gov", [("passports.md", b"# Passports\n\nRenewal now costs 165 dollars.\n")])["status"] == "succeeded"
        texts = [h["text"] for h in search(client, "passport renewal cost")]
        assert any("165 dollars" in t for t in texts) and not any("130 dollars" in t for t in texts)
        assert client.get("/api/collections/gov").json()["passages"] == 2
        # a document removed, then the collection deleted
        wait_job(client, client.delete("/api/collections/gov/documents/fishing").json()["id"])
        assert [h["document_id"] for h in search(client, "fishing license")] == ["passports"]
        assert client.delete("/api/collections/gov").status_code == 204
        assert not server.app.state.convrag.collections.taken("gov")
        assert client.post("/api/collections", json={"name": "gov"}).status_code == 201  # the name is free again


def test_a_collection_convrag_index_made_in_the_same_milvus_is_taken_on_by_name(tmp_path: Path) -> None:
    """`convrag index --backend milvus` and then `convrag serve --backend milvus` over the same Milvus:
    the service did not list the indexed collection, and creating it by name was a 409, so a corpus
    indexed from the command line could not be chatted over in the service."""
    from convrag.embeddings import load_embedder

    embedder = load_embedder()
    uri = milvus_indexed_elsewhere(tmp_path / "shared-milvus.db")
    settings = ServiceSettings.load(data_dir=tmp_path / "svc", backend="milvus", milvus_uri=uri)
    llm = ScriptedLLM(answer=["Mooring costs 40 dollars a night [1]."])
    with ThreadServer(settings, llm) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        info = take_on(client, "harbour")
        assert info["passages"] == 1 and info["documents"] == 1 and info["embedding_model"] == embedder.name
        assert [(d["doc_id"], d["passages"], d["uploaded"]) for d in client.get("/api/collections/harbour/documents").json()] == [
            ("moorings", 1, False)]
        assert [c["name"] for c in client.get("/api/collections").json()] == ["harbour"]
        hits = client.post("/api/search", json={"collections": ["harbour"], "query": "mooring price", "k": 3}).json()["hits"]
        assert hits[0]["passage_id"] == "moorings-0-0"
        conv = client.post("/api/conversations", json={"collections": ["harbour"]}).json()
        turn = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "How much is mooring in the harbour?"}).json()
        assert turn["citations"][0]["passage_id"] == "moorings-0-0"
        # documents uploaded to it are added beside what was indexed
        assert upload(client, "harbour", [("fishing.md", FISHING)])["status"] == "succeeded"
        assert client.get("/api/collections/harbour").json()["passages"] == 2
        # from now on the service keeps it: `convrag index` would make it hold its corpus alone, dropping the
        # uploaded document the service still lists, and `convrag delete` would leave the service a dangling record
        corpus = tmp_path / "harbour.jsonl"
        corpus.write_text('{"_id": "moorings-0-0", "title": "Moorings", "text": "Mooring costs 45 dollars a night."}\n')
        for command in (["index", str(corpus), "-c", "harbour"], ["delete", "-c", "harbour", "-y"]):
            refused = CliRunner().invoke(app, [*command, "--backend", "milvus", "--milvus-uri", uri])
            assert "kept by a convrag service" in str(refused.exception), refused.output
        assert client.get("/api/collections/harbour").json()["passages"] == 2
        assert sorted(d["doc_id"] for d in client.get("/api/collections/harbour/documents").json()) == ["fishing", "moorings"]
        # there is no other copy to bring in: `convrag index` writes the one Milvus searches
        again = client.post("/api/collections/harbour/take-on")
        assert again.status_code == 409 and "searched where it is" in again.json()["error"]["message"]
        assert client.get("/api/collections/harbour").json()["indexed"] is False
        # and another service sharing this Milvus does not take it on as well
        beside = MilvusCollections(uri)
        try:
            assert beside.taken("harbour") and beside.made_elsewhere("harbour") is None
        finally:
            beside.close()
        # one of another schema is not convrag's to take
        other = client.post("/api/collections", json={"name": "other"})
        assert other.status_code == 409 and other.json()["error"]["code"] == "collection_exists"
        assert client.post("/api/collections", json={"name": "fresh"}).json()["taken_on"] is False


def test_an_embedded_folder_without_a_record_is_not_taken_on(tmp_path: Path) -> None:
    """Only Milvus collections are taken on by name: an embedded collection's folder without a record
    is one a delete cut off left behind, whose passages must not come back under a new collection."""
    settings = ServiceSettings.load(data_dir=tmp_path / "svc")
    with ThreadServer(settings, ScriptedLLM()) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        (tmp_path / "svc" / "collections" / "gov").mkdir(parents=True)
        refused = client.post("/api/collections", json={"name": "gov"})
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "collection_exists"
        assert client.get("/api/collections").json() == []


HANDBOOK = {
    "leave.md": "# Leave\n\nEvery employee has 25 days of paid leave a year.\n",
    "parking.md": "# Parking\n\nA parking permit costs 40 dollars a month.\n",
}


def test_a_take_on_that_fails_can_be_tried_again(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A take-on whose listing of the passages failed (Milvus restarting) left the collection marked
    as a service's without any service's record: refused by `convrag index`, never taken on again."""
    from convrag.backends.milvus import MilvusCollection

    uri = milvus_indexed_elsewhere(tmp_path / "shared-milvus.db")
    settings = ServiceSettings.load(data_dir=tmp_path / "svc", backend="milvus", milvus_uri=uri)
    with ThreadServer(settings, ScriptedLLM()) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        listing = MilvusCollection.stored_passages

        def unavailable(self: MilvusCollection) -> list:
            raise BackendUnavailable("Milvus is restarting")

        monkeypatch.setattr(MilvusCollection, "stored_passages", unavailable)
        failed = client.post("/api/collections", json={"name": "harbour"})
        assert failed.status_code == 503 and client.get("/api/collections").json() == []
        assert not server.app.state.convrag.collections.milvus.served("harbour")
        monkeypatch.setattr(MilvusCollection, "stored_passages", listing)
        assert take_on(client, "harbour")["documents"] == 1


def indexed_handbook(tmp_path: Path) -> tuple[Path, Path]:
    """``convrag index ./handbook -c handbook --store indexes`` over the two HANDBOOK pages: the folder and the store."""
    folder, store = tmp_path / "handbook", tmp_path / "indexes"
    folder.mkdir()
    for name, text in HANDBOOK.items():
        (folder / name).write_text(text)
    assert CliRunner().invoke(app, ["index", str(folder), "-c", "handbook", "--store", str(store)]).exit_code == 0
    return folder, store


def test_a_collection_convrag_index_built_is_taken_on_by_name(tmp_path: Path) -> None:
    """`convrag index ./handbook -c handbook` and then `convrag serve`, the README's own sequence on the
    default backend: the service did not list the collection, and creating it by name made a new,
    empty one, so a corpus indexed from the command line had to be uploaded again to chat over it."""
    from convrag.index.collection import Collection

    folder, store = indexed_handbook(tmp_path)
    runner = CliRunner()
    assert runner.invoke(app, ["index", str(folder), "-c", "terms", "--store", str(store), "--no-dense"]).exit_code == 0
    indexed = Collection.open(store / "handbook")
    settings = ServiceSettings.load(data_dir=tmp_path / "svc", indexed_store=store)
    llm = ScriptedLLM(answer=["A permit costs 40 dollars a month [1]."])
    with ThreadServer(settings, llm) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        info = take_on(client, "handbook")
        assert info["passages"] == 2 and info["documents"] == 2 and info["embedding_model"] == indexed.manifest.embedding_model
        assert [j["source"] for j in client.get("/api/collections/handbook").json()["jobs"]] == ["indexed"]
        taken = server.app.state.convrag.collections.store.open("handbook")
        assert taken.version_dir.name == indexed.version_dir.name
        assert all(f.samefile(indexed.version_dir / f.relative_to(taken.version_dir))  # linked: no vector embedded or copied again
                   for f in taken.version_dir.rglob("*") if f.is_file())
        documents = {d["doc_id"]: d for d in client.get("/api/collections/handbook/documents").json()}
        assert set(documents) == {"leave", "parking"} and documents["parking"]["passages"] == 1 and not documents["parking"]["uploaded"]
        missing = client.get("/api/collections/handbook/documents/parking/file")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "no_uploaded_file"
        hits = client.post("/api/search", json={"collections": ["handbook"], "query": "parking permit price", "k": 2}).json()["hits"]
        assert hits[0]["document_id"] == "parking"
        conv = client.post("/api/conversations", json={"collections": ["handbook"]}).json()
        turn = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "How much is a parking permit?"}).json()
        assert turn["citations"][0]["document_id"] == "parking"
        # `convrag index` into the service's own folder is refused: it would drop what the service lists
        into_service = runner.invoke(app, ["index", str(folder), "-c", "handbook", "--store", str(tmp_path / "svc" / "collections")])
        assert "holds a convrag service's collections" in str(into_service.exception)
        assert server.app.state.convrag.collections.store.open("handbook").version_dir.name == indexed.version_dir.name
        # uploads add beside it, a taken-on document is removed as an uploaded one is; what `convrag index` keeps is untouched
        assert upload(client, "handbook", [("fishing.md", FISHING)])["status"] == "succeeded"
        assert wait_job(client, client.delete("/api/collections/handbook/documents/leave").json()["id"])["status"] == "succeeded"
        assert [d["doc_id"] for d in client.get("/api/collections/handbook/documents").json()] == ["parking", "fishing"]
        assert client.get("/api/collections/handbook").json()["passages"] == 2
        # damaged later, a taken-on document has no uploaded file to be read again from: the job says so
        passages = server.app.state.convrag.collections.store.open("handbook").version_dir / "passages.jsonl"
        passages.unlink()
        passages.write_text("{not json\n")
        failed = upload(client, "handbook", [("leave.md", HANDBOOK["leave.md"].encode())])
        assert failed["status"] == "failed" and "'parking' was indexed by `convrag index`, not uploaded" in failed["error"]
        # bringing in what `convrag index` built repairs it: the taken-on documents from there, the uploaded one from its file
        assert wait_job(client, client.post("/api/collections/handbook/take-on").json()["id"])["status"] == "succeeded"
        assert sorted(d["doc_id"] for d in client.get("/api/collections/handbook/documents").json()) == ["fishing", "leave", "parking"]
        assert client.get("/api/collections/handbook").json()["passages"] == 3 and "problem" not in client.get("/api/collections/handbook").json()
        assert client.delete("/api/collections/handbook").status_code == 204
        kept = Collection.open(store / "handbook")
        assert kept.version_dir == indexed.version_dir and kept.passages == indexed.passages and kept.intact()
        # one without the dense index the service searches is refused with the reason, not made anew and empty
        refused = client.post("/api/collections", json={"name": "terms"})
        assert refused.status_code == 400 and "--no-dense" in refused.json()["error"]["message"]
        # nor one embedded with a model this machine cannot load: every question over it would fail
        assert runner.invoke(app, ["index", str(folder), "-c", "elsewhere", "--store", str(store)]).exit_code == 0
        manifest = next((store / "elsewhere").glob("v*/manifest.json"))
        manifest.write_text(manifest.read_text().replace(indexed.manifest.embedding_model, "no-such-model"))
        refused = client.post("/api/collections", json={"name": "elsewhere"})
        assert refused.status_code == 400 and "cannot load embedding model 'no-such-model'" in refused.json()["error"]["message"]
        assert not (tmp_path / "svc" / "collections" / "elsewhere").exists()
        # nor is one whose first build has not finished
        (store / "manual").mkdir()
        refused = client.post("/api/collections", json={"name": "manual"})
        assert refused.status_code == 400 and "no index yet" in refused.json()["error"]["message"]
        assert [c["name"] for c in client.get("/api/collections").json()] == []
        assert client.post("/api/collections", json={"name": "fresh"}).json()["taken_on"] is False


def test_a_taken_on_collection_brings_in_what_convrag_index_built_since(tmp_path: Path) -> None:
    """Indexing the folder again after the take-on did not reach the service: the only way to its new
    version was to delete the collection and take it on anew, losing every document uploaded to it."""
    folder, store = indexed_handbook(tmp_path)
    runner = CliRunner()
    settings = ServiceSettings.load(data_dir=tmp_path / "svc", indexed_store=store)
    with ThreadServer(settings, ScriptedLLM()) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        assert take_on(client, "handbook")["indexed"] is True
        assert upload(client, "handbook", [("fishing.md", FISHING)])["status"] == "succeeded"
        # the handbook changes: parking edited, leave gone, a new page; `convrag index` builds it again
        (folder / "parking.md").write_text("# Parking\n\nA parking permit now costs 55 dollars a month.\n")
        (folder / "leave.md").unlink()
        (folder / "canteen.md").write_text("# Canteen\n\nThe canteen serves lunch from noon to two.\n")
        assert runner.invoke(app, ["index", str(folder), "-c", "handbook", "--store", str(store)]).exit_code == 0
        started = client.post("/api/collections/handbook/take-on")
        assert started.status_code == 202, started.text
        job = wait_job(client, started.json()["id"])
        assert job["status"] == "succeeded", job
        documents = {d["doc_id"]: d["uploaded"] for d in client.get("/api/collections/handbook/documents").json()}
        assert documents == {"parking": False, "canteen": False, "fishing": True}  # the uploaded one stays
        texts = [h["text"] for h in client.post("/api/search", json={"collections": ["handbook"], "query": "parking permit price",
                                                                    "k": 3}).json()["hits"]]
        assert any("55 dollars" in t for t in texts) and not any("40 dollars" in t for t in texts)
        assert client.get("/api/collections/handbook").json()["passages"] == 3
        # a collection with nothing of its name built by `convrag index`: nothing to bring in
        assert client.post("/api/collections", json={"name": "fresh"}).json()["indexed"] is False
        missing = client.post("/api/collections/fresh/take-on")
        assert missing.status_code == 409 and missing.json()["error"]["code"] == "not_indexed"


def test_collections_a_service_made_before_they_were_marked_are_marked_at_its_start(tmp_path: Path) -> None:
    """A collection the service wrote before collections were marked as its own was left to
    `convrag index`, which would drop its uploaded documents, until the service's next upload to it."""
    from convrag.backends.milvus import MilvusStore
    from convrag.embeddings import load_embedder

    embedder = load_embedder()
    uri = str(tmp_path / "svc" / "milvus.db")
    (tmp_path / "svc").mkdir()
    older = MilvusStore(uri)
    try:
        older.create("gov", embedder.name, embedder.dimension)  # as an older service left it: unmarked
        assert not older.served("gov")
    finally:
        older.close()
    Store(tmp_path / "svc" / "convrag.sqlite").add_collection("gov", "", embedder.name)
    settings = ServiceSettings.load(data_dir=tmp_path / "svc", backend="milvus")
    with ThreadServer(settings, ScriptedLLM()) as server:
        assert server.app.state.convrag.collections.milvus.served("gov")


def test_a_milvus_job_cut_off_by_a_stop_runs_again(tmp_path: Path) -> None:
    """Milvus has no versions to tell whether a job's passages went in: writing them again is
    harmless, so a job the stop cut off is run again rather than failed."""
    store = Store(tmp_path / "db.sqlite")
    store.add_collection("gov", "", "all-MiniLM-L6-v2")
    job = store.add_job("gov", [{"filename": "fishing.md", "doc_id": "fishing", "stored": "00000-fishing.md", "bytes": len(FISHING)}])
    store.update_job(job["id"], status="running")
    (tmp_path / "uploads" / job["id"]).mkdir(parents=True)
    (tmp_path / "uploads" / job["id"] / "00000-fishing.md").write_bytes(FISHING)
    collections = MilvusCollections(str(tmp_path / "milvus.db"))
    try:
        indexer = Indexer(store, collections, tmp_path / "uploads")
        indexer.start()
        indexer.stop()
        indexer._thread.join(120)
        assert store.job(job["id"])["status"] == "succeeded"
        assert store.documents("gov")[0]["passages"] == 1 and collections.built() == ["gov"]
    finally:
        collections.close()


def test_a_milvus_that_fails_answers_503_and_names_milvus(tmp_path: Path) -> None:
    """A Milvus server that went down (here: the client's connection closed under the running
    service) made searches answer 400 "invalid_request", as if the request were at fault, and
    listing the collections a bare 500 "internal error"."""
    settings = ServiceSettings.load(data_dir=tmp_path / "svc", backend="milvus")
    with ThreadServer(settings, ScriptedLLM(answer=["Renewal costs 130 dollars [1]."])) as server, \
            httpx.Client(base_url=server.url, timeout=120) as client:
        assert client.post("/api/collections", json={"name": "gov"}).status_code == 201
        assert upload(client, "gov", [("passports.md", PASSPORT.encode())])["status"] == "succeeded"
        server.app.state.convrag.collections.milvus.client.close()
        for response in (
            client.post("/api/search", json={"collections": ["gov"], "query": "passport renewal", "k": 3}),
            client.get("/api/collections"),
            client.post("/v1/chat/completions", json={"model": "collection:gov", "messages": [
                {"role": "user", "content": "How much does passport renewal cost?"}]}),
        ):
            assert response.status_code == 503, response.text
            error = response.json()["error"]
            assert error["code"] == "backend_unavailable" and error["message"].startswith("Milvus: ")
            assert str(tmp_path) not in response.text and response.headers["retry-after"]


class _Outage:
    """The service's Milvus collections behind a backend that fails its first ``failures`` jobs,
    as a server restarting would."""

    def __init__(self, collections: MilvusCollections, failures: int) -> None:
        self.collections, self.failures = collections, failures

    def __getattr__(self, name: str) -> object:
        return getattr(self.collections, name)

    def apply(self, *args: object, **kwargs: object) -> object:
        if self.failures:
            self.failures -= 1
            raise BackendUnavailable("Milvus at http://milvus:19530: upsert failed: server unavailable")
        return self.collections.apply(*args, **kwargs)


def _queued_job(tmp_path: Path) -> tuple[Store, str]:
    store = Store(tmp_path / "db.sqlite")
    store.add_collection("gov", "", "all-MiniLM-L6-v2")
    job = store.add_job("gov", [{"filename": "fishing.md", "doc_id": "fishing", "stored": "00000-fishing.md", "bytes": len(FISHING)}])
    (tmp_path / "uploads" / job["id"]).mkdir(parents=True)
    (tmp_path / "uploads" / job["id"] / "00000-fishing.md").write_bytes(FISHING)
    return store, job["id"]


def _run_one(indexer: Indexer, store: Store, job_id: str) -> None:
    """Run the queued job (the start finds it) to its end, its waits included, then stop the worker."""
    indexer.start()
    deadline = time.monotonic() + 120
    while store.job(job_id)["status"] not in ("succeeded", "failed") and time.monotonic() < deadline:
        time.sleep(0.02)
    indexer.stop()
    indexer._thread.join(120)


def test_a_job_the_backend_fails_waits_and_tries_again(tmp_path: Path) -> None:
    """A Milvus outage failed the job at once and deleted its files: the user had to upload again."""
    store, job_id = _queued_job(tmp_path)
    collections = MilvusCollections(str(tmp_path / "milvus.db"))
    try:
        indexer = Indexer(store, _Outage(collections, failures=2), tmp_path / "uploads")  # type: ignore[arg-type]
        indexer.backend_retry_delays = (0.01, 0.01)
        _run_one(indexer, store, job_id)
        assert store.job(job_id)["status"] == "succeeded"
        assert store.documents("gov")[0]["passages"] == 1 and collections.built() == ["gov"]
    finally:
        collections.close()


def test_a_job_fails_once_the_backend_stays_down(tmp_path: Path) -> None:
    store, job_id = _queued_job(tmp_path)
    collections = MilvusCollections(str(tmp_path / "milvus.db"))
    try:
        collections.milvus.client.close()
        indexer = Indexer(store, collections, tmp_path / "uploads")
        indexer.backend_retry_delays = (0.01,)
        _run_one(indexer, store, job_id)
        job = store.job(job_id)
        assert job["status"] == "failed"
        assert job["error"].startswith("Milvus: ") and "tried 2 times" in job["error"] and str(tmp_path) not in job["error"]
    finally:
        collections.close()


def test_a_taken_on_collection_hands_out_no_server_file_paths(tmp_path: Path) -> None:
    """A document `convrag index` read from disk keeps its file:// URI in the index. The web page never
    showed it, but the search API, the passage route, a turn's citations and trace, the OpenAI reply
    and the exports all handed clients the server's paths (file:///home/.../handbook/parking.md)."""
    folder, store = indexed_handbook(tmp_path)
    settings = ServiceSettings.load(data_dir=tmp_path / "svc", indexed_store=store)
    llm = ScriptedLLM(answer=["A permit costs 40 dollars a month [1]."] * 2)
    with ThreadServer(settings, llm) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        take_on(client, "handbook")
        assert upload(client, "handbook", [("fishing.md", FISHING)])["status"] == "succeeded"
        hits = client.post("/api/search", json={"collections": ["handbook"], "query": "parking permit fishing", "k": 3}).json()["hits"]
        urls = {h["document_id"]: h["url"] for h in hits}
        assert urls["parking"] == "" and urls["fishing"] == "/api/collections/handbook/documents/fishing/file"
        passage = client.get(f"/api/collections/handbook/passages/{hits[0]['passage_id']}").json()
        assert passage["url"] in ("", "/api/collections/handbook/documents/fishing/file")
        conv = client.post("/api/conversations", json={"collections": ["handbook"]}).json()
        turn = client.post(f"/api/conversations/{conv['id']}/messages", json={"question": "How much is a parking permit?"})
        reply = client.post("/v1/chat/completions", json={"model": "collection:handbook", "messages": [
            {"role": "user", "content": "How much is a parking permit?"}]})
        exported = [client.get(f"/api/conversations/{conv['id']}/export", params={"format": f}).text for f in ("markdown", "json")]
        assert turn.json()["citations"][0]["document_id"] == "parking"
        for text in (turn.text, reply.text, passage, *exported):
            assert "file:" not in str(text) and str(folder) not in str(text)
    # what `convrag index` keeps still says where each document came from, for the command line
    from convrag.index.collection import Collection

    assert all(p.url.startswith("file://") for p in Collection.open(store / "handbook").passages)


def test_only_links_a_client_can_follow_are_served() -> None:
    from convrag.service.links import served_url

    assert served_url("https://example.org/a?b=1") == "https://example.org/a?b=1"
    assert served_url("HTTP://example.org/") == "HTTP://example.org/"
    assert served_url("/api/collections/c/documents/d/file") == "/api/collections/c/documents/d/file"
    for hidden in ("file:///srv/docs/a.md", "/srv/docs/a.md", "C:\\docs\\a.md", "javascript:alert(1)", "http://[::1", ""):
        assert served_url(hidden) == ""


def test_turns_stored_with_server_file_paths_are_shown_without_them(tmp_path: Path) -> None:
    """Turns answered before the service kept file:// links out of its hits hold them in their citations
    and trace; a database of that version, opened, has those links emptied, the rest as stored."""
    from convrag.service.export import conversation_markdown

    store = Store(tmp_path / "db.sqlite")
    conv = store.add_conversation("Parking", ["handbook"], "progressive")
    local, web = "file:///srv/handbook/parking.md", "https://example.org/parking"
    citation = {"number": 1, "collection": "handbook", "passage_id": "parking-0-50", "document_id": "parking",
                "title": "Parking", "url": local}
    trace = {"search": {"hits": [{"passage_id": "parking-0-50", "url": local}, {"passage_id": "web-0-9", "url": web}]},
             "note": "url kept as text: " + local}
    store.add_turn(conv["id"], "How much is a permit?", "40 dollars [1].", False, [citation], trace)
    store._db.execute("PRAGMA user_version = 0")  # as a database of the version before this one
    store.close()
    store = Store(tmp_path / "db.sqlite")
    turn = store.conversation(conv["id"], with_turns=True)["turns"][0]
    assert turn["citations"] == [{**citation, "url": ""}]
    assert [h["url"] for h in turn["trace"]["search"]["hits"]] == ["", web] and turn["trace"]["note"].endswith(local)
    assert "file:" not in conversation_markdown(store.conversation(conv["id"], with_turns=True))
