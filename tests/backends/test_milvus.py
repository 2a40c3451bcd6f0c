"""The Milvus backend against a real Milvus Lite instance (an embedded Milvus started by the test)."""

from pathlib import Path

import numpy as np
import pytest

from convrag.backends.milvus import MilvusRetriever, MilvusStore, milvus_name
from convrag.embeddings import Embedder
from convrag.errors import CollectionError, ConfigError
from convrag.index.collection import Collection
from convrag.retrieve import make_retriever
from convrag.types import Message, Passage


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    opened = MilvusStore(str(tmp_path / "milvus" / "convrag.db"))
    yield opened
    opened.close()


@pytest.fixture
def filled(store: MilvusStore, tiny_passages: list[Passage], embedder: Embedder):  # type: ignore[no-untyped-def]
    collection = store.create("tiny-docs", embedder.name, embedder.dimension)
    assert collection.ingest(tiny_passages, embedder) == len(tiny_passages)
    return collection


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_search_modes(filled, mode: str, embedder: Embedder) -> None:  # type: ignore[no-untyped-def]
    retriever = MilvusRetriever(filled, mode, embedder)
    results = retriever.search(["how much does a passport renewal cost", "Cardinals played in London"], 3)
    assert [hits[0].doc_id for hits in results] == ["p2", "p3"]
    for hits in results:
        assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert all(h.text and h.title for h in hits)


def test_dense_matches_embedded_backend(filled, tiny_collection: Collection, embedder: Embedder) -> None:  # type: ignore[no-untyped-def]
    queries = ["index funds", "court filing fees", "where do the Cardinals play", "storage classes"]
    ours = [[(h.doc_id, h.text, h.title) for h in hits] for hits in make_retriever("dense", tiny_collection, embedder).search(queries, 6)]
    milvus = [[(h.doc_id, h.text, h.title) for h in hits] for hits in MilvusRetriever(filled, "dense", embedder).search(queries, 6)]
    assert milvus == ours  # the same passages in the same order, each with the same text and title


def test_routing_cosines_match_the_embedded_dense_index(filled, tiny_collection: Collection, embedder: Embedder) -> None:  # type: ignore[no-untyped-def]
    """Routing compares collections by their best cosines; Milvus's nearest vectors give the same
    numbers as the embedded index's exact scores, so a collection routes the same on either backend."""
    vectors = embedder.encode(["passport renewal fee", "where do the cardinals play"])
    milvus = filled.top_cosines(vectors, 3)
    exact = np.sort(tiny_collection.dense.scores(vectors), axis=1)[:, ::-1][:, :3]
    assert len(milvus) == 2 and all(len(row) == 3 for row in milvus)
    np.testing.assert_allclose(np.sort(np.stack(milvus), axis=1)[:, ::-1], exact, atol=1e-5)


def test_reopen_and_idempotent_reingest(store: MilvusStore, filled, tiny_passages: list[Passage], embedder: Embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    filled.ingest(tiny_passages, embedder)
    assert len(filled) == len(tiny_passages), "re-ingesting the same ids replaces, never duplicates"
    changed = [tiny_passages[1]._replace(text="Passport renewal now costs 150 dollars.")]
    filled.ingest(changed, embedder)
    store.close()

    again = MilvusStore(str(tmp_path / "milvus" / "convrag.db"))
    reopened = again.open("tiny-docs")
    assert len(reopened) == len(tiny_passages) and again.names() == ["tiny-docs"]
    top = MilvusRetriever(reopened, "bm25").search(["passport renewal"], 1)[0][0]
    assert top.doc_id == "p2" and "150 dollars" in top.text
    again.delete("tiny-docs")
    assert again.names() == []
    again.close()


def test_bad_input(store: MilvusStore, filled, tiny_passages: list[Passage], embedder: Embedder) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CollectionError, match="3x384 vectors for 6 passages"):
        filled.ingest(tiny_passages, vectors=np.zeros((3, 384), dtype=np.float32))
    with pytest.raises(CollectionError, match="6x8 vectors for 6 passages of a 384-d collection"):
        filled.ingest(tiny_passages, vectors=np.zeros((6, 8), dtype=np.float32))
    with pytest.raises(CollectionError, match="duplicate passage id 'p1'"):
        filled.ingest([tiny_passages[0], tiny_passages[0]], embedder)
    with pytest.raises(CollectionError, match="was embedded with all-MiniLM-L6-v2, not BAAI/bge-base-en-v1.5"):
        store.open("tiny-docs", expect_model="BAAI/bge-base-en-v1.5")
    with pytest.raises(CollectionError, match="holds 384-d vectors, not 768-d"):
        store.create("tiny-docs", embedder.name, 768)
    with pytest.raises(CollectionError, match="unknown Milvus collection 'other'.*known: tiny-docs"):
        store.open("other")
    with pytest.raises(ConfigError, match="invalid collection name"):
        milvus_name("bad name!")
    with pytest.raises(ConfigError, match="unknown Milvus search mode"):
        MilvusRetriever(filled, "elser")
    impostor = Embedder(name="BAAI/bge-base-en-v1.5", model=embedder.model)
    with pytest.raises(CollectionError, match="query model is BAAI/bge-base-en-v1.5"):
        MilvusRetriever(filled, "dense", impostor).search(["passport"], 3)


def test_foreign_schema_is_refused(store: MilvusStore) -> None:
    store.client.create_collection(milvus_name("foreign"), dimension=8)
    with pytest.raises(CollectionError, match="does not have convrag's schema"):
        store.open("foreign")


def test_unreachable_server() -> None:
    with pytest.raises(CollectionError, match=r"cannot reach Milvus at http://127\.0\.0\.1:1"):
        MilvusStore("http://127.0.0.1:1", timeout=2)


def test_a_lite_file_open_in_another_process_is_one_clear_error(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Milvus Lite serves one process at a time. A second process (an index run while a chat holds
    the file) got a traceback from Milvus Lite's launcher and then "Open local milvus failed"."""
    import subprocess
    import sys

    uri = str(tmp_path / "convrag.db")
    holder = subprocess.Popen([sys.executable, "-c", "import sys; from convrag.backends.milvus import MilvusStore; "
                               f"MilvusStore({uri!r}); print('open', flush=True); sys.stdin.read()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        with pytest.raises(CollectionError) as error:
            MilvusStore(uri)
        assert str(error.value).startswith(f"the Milvus Lite file {uri} is open in another process")
        assert "Traceback" not in capfd.readouterr().err
    finally:
        holder.communicate("", timeout=60)
    MilvusStore(uri).close()  # free again once the other process is gone


def test_a_file_where_milvus_lite_keeps_a_folder_is_one_clear_error(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Milvus Lite keeps its data in a folder named by the URI; a file there (an old Lite 1.x
    database) gave "[Errno 17] File exists" after the launcher's traceback."""
    uri = tmp_path / "old.db"
    uri.write_bytes(b"SQLite format 3\x00" + bytes(200))
    with pytest.raises(CollectionError, match="it is a file, and Milvus Lite keeps its data in a folder of that name"):
        MilvusStore(str(uri))
    assert "Traceback" not in capfd.readouterr().err and uri.read_bytes().startswith(b"SQLite")  # left as it was


def test_closing_the_last_store_of_a_lite_file_frees_it_for_other_processes(tmp_path: Path, tiny_passages: list[Passage],
                                                                             embedder: Embedder) -> None:
    """A closed store kept Milvus Lite's in-process server, and with it the file, until the process
    exited: a notebook that closed its store still blocked `convrag index` in a terminal."""
    import subprocess
    import sys

    uri = str(tmp_path / "convrag.db")
    first, second = MilvusStore(uri), MilvusStore(uri)
    first.create("kb", embedder.name, embedder.dimension).sync(tiny_passages, embedder)
    first.close()
    assert len(second.open("kb")) == len(tiny_passages)  # another store of this process still works
    second.close()
    other = subprocess.run([sys.executable, "-c", "from convrag.backends.milvus import MilvusStore; "
                            f"s = MilvusStore({uri!r}); print(len(s.open('kb'))); s.close()"],
                           capture_output=True, text=True, timeout=120)
    assert other.returncode == 0 and other.stdout.strip() == str(len(tiny_passages)), other.stderr[-2000:]
    reopened = MilvusStore(uri)  # and this process can open it again after
    assert reopened.names() == ["kb"]
    reopened.close()
    reopened.close()  # closing twice is harmless


def test_a_lite_connection_sends_no_keepalive_pings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chat idle for a minute or two between turns printed gRPC's "GOAWAY ... too_many_pings":
    pymilvus pings every 10 s and Milvus Lite's in-process server refuses pings without calls (seen
    after 60-135 s idle; too slow to wait for here). Lite clients turn keepalive off, servers keep it."""
    import pymilvus

    made: list[dict] = []
    real = pymilvus.MilvusClient
    monkeypatch.setattr(pymilvus, "MilvusClient", lambda **kwargs: made.append(kwargs) or real(**kwargs))
    MilvusStore(str(tmp_path / "convrag.db")).close()
    assert made[0]["grpc_options"]["grpc.keepalive_time_ms"] == 2**31 - 1  # gRPC's "never"
    assert not made[0]["grpc_options"]["grpc.keepalive_permit_without_calls"]
    with pytest.raises(CollectionError):
        MilvusStore("http://127.0.0.1:1", timeout=1)
    assert "grpc_options" not in made[1]


def test_empty_queries(filled) -> None:  # type: ignore[no-untyped-def]
    assert MilvusRetriever(filled, "bm25").search([], 3) == []
    assert MilvusRetriever(filled, "bm25").search([""], 3) == [[]]



def test_sync_makes_the_collection_hold_exactly_the_corpus(store: MilvusStore, filled, tiny_passages: list[Passage],
                                                           embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Upserting alone kept the passages of removed and edited documents: a stale "130 dollars" passage
    outranked its replacement."""
    encoded: list[str] = []
    encode = embedder.encode
    monkeypatch.setattr(embedder, "encode", lambda texts: encoded.extend(texts) or encode(texts))
    stored = filled._stored
    listed = []
    monkeypatch.setattr(filled, "_stored", lambda: listed.append(1) or stored())
    # the fixture ingested these passages without recording a corpus hash: compared, nothing written
    assert filled.sync(tiny_passages, embedder) == (0, 0, 6) and not encoded and listed == [1]
    assert filled.sync(tiny_passages, embedder) == (0, 0, 6) and listed == [1]  # the hash recorded: nothing listed
    edited = [p._replace(text="Passport renewal now costs 150 dollars.") if p.doc_id == "p2" else p
              for p in tiny_passages if p.doc_id != "p3"] + [Passage("p9", "Library cards are free for residents.", "Library")]
    assert filled.sync(edited, embedder) == (2, 1, 6)
    assert len(encoded) == 2  # only the edited and the new passage were embedded
    hits = MilvusRetriever(filled, "hybrid", embedder).search(["passport renewal cost"], 6)[0]
    assert [h.doc_id for h in hits if "dollars" in h.text] == ["p2"] and "150 dollars" in hits[0].text
    assert "p3" not in {h.doc_id for h in hits}

    reopened = store.open("tiny-docs")  # the corpus hash was recorded with the collection
    assert reopened.info.corpus_sha256 == filled.info.corpus_sha256 and reopened.sync(edited, embedder) == (0, 0, 6)


def test_a_pipeline_answers_from_milvus_collections(store: MilvusStore, tiny_passages: list[Passage], embedder: Embedder) -> None:
    """`ask` and `chat` could not use Milvus at all: collections indexed there were only searchable."""
    from convrag.pipeline import PipelineSpec, build_pipeline
    from tests.helpers import ScriptedLLM

    store.create("sport", embedder.name, embedder.dimension).sync(tiny_passages[::2], embedder)
    store.create("admin", embedder.name, embedder.dimension).sync(tiny_passages[1::2], embedder)
    llm = ScriptedLLM(answer=["Renewing a passport by mail costs 130 dollars [1].", "They played the Rams in London in 2017 [1]."])
    pipeline = build_pipeline(PipelineSpec(("sport", "admin"), strategy="last_turn"), llm=llm, milvus=store)
    assert [c.name for c in pipeline.collections] == ["sport", "admin"]
    assert pipeline.collections[0].embedder is pipeline.collections[1].embedder  # one query embedding per turn
    result = pipeline.answer([Message("user", "How much is a passport renewal by mail?")])
    assert [(c.collection, c.passage_id) for c in result.citations] == [("admin", "p2")]
    searched = result.trace.search
    assert searched is not None and set(searched.seconds) == {"admin"} and not searched.failures
    assert searched.embeddings_computed == {embedder.name: 1}  # routing and the search embed the question once, counted once

    # routing: Milvus collections were all searched and fused; now, as with embedded ones, a turn
    # searches the collections it is about, and the earlier questions keep a vague follow-up there
    routing = result.trace.to_dict()["routing"]
    assert routing["kept"] == ["admin"] and routing["dropped"] == ["sport"] and routing["scores"]["admin"] > routing["scores"]["sport"]
    history = [Message("user", "Where do the Arizona Cardinals play?"), Message("agent", "At State Farm Stadium [1].")]
    follow_up = pipeline.answer([*history, Message("user", "Did they ever play abroad?")])
    assert follow_up.trace.routing is not None and follow_up.trace.routing.kept == ("sport",)

    with pytest.raises(CollectionError, match="unknown Milvus collection 'nope'"):
        build_pipeline(PipelineSpec(("admin", "nope")), llm=llm, milvus=store)


def test_a_chat_over_milvus_finds_passages_synced_during_it(store: MilvusStore, tiny_passages: list[Passage], embedder: Embedder,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from convrag.pipeline import LivePipeline, PipelineSpec
    from tests.helpers import LIBRARY_FEES, ScriptedLLM, chat_with_indexing

    kb = store.create("kb", embedder.name, embedder.dimension)
    kb.sync(tiny_passages, embedder)
    llm = ScriptedLLM(answer=["Passport renewal costs 130 dollars [1].", "A library card costs 12 dollars a year [1]."])
    chat_with_indexing(LivePipeline(PipelineSpec(("kb",), strategy="last_turn"), llm, milvus=store),
                       lambda: kb.sync([*tiny_passages, LIBRARY_FEES], embedder))
    out = capsys.readouterr().out
    assert "kb / Library fees (f1)" in out and "re-indexed" not in out  # Milvus searches what is stored now


def test_fields_are_cut_to_the_schema_in_bytes() -> None:
    """A VARCHAR's max_length counts bytes of UTF-8: cut to that many characters, a passage in Chinese
    was three times too long for a Milvus server (Milvus Lite stores it anyway), and an id of 200
    Chinese characters (600 bytes) passed the check and was refused by the server."""
    from convrag.backends.milvus import MAX_TEXT, _check_passages, _row_fields

    text, title, url = _row_fields(Passage("cjk", "港口费用每晚六十欧元。" * 3000, title="港" * 1000, url="https://x/" + "é" * 2000))
    assert len(text.encode()) <= MAX_TEXT and len(title.encode()) <= 2048 and len(url.encode()) <= 2048
    assert text.startswith("港" * 1000 + "\n港口费用") and len(text.encode()) > MAX_TEXT - 3  # the title first; cut at a character's end
    assert _row_fields(Passage("p", "short", title="t", url="u")) == ("t\nshort", "t", "u")  # short ones whole
    _check_passages([Passage("港" * 170, "x")])  # 510 bytes
    with pytest.raises(CollectionError, match="longer than 512 bytes of UTF-8"):
        _check_passages([Passage("港" * 200, "x")])
