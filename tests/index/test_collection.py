import re
from dataclasses import replace
from pathlib import Path

import pytest

from convrag.embeddings import Embedder
from convrag.errors import CollectionError
from convrag.index import collection as collection_module
from convrag.index.atomic import write_json
from convrag.index.bm25 import BM25Index
from convrag.index.collection import Collection, CollectionStore
from convrag.index.manifest import MANIFEST_FILE, corpus_sha256
from convrag.retrieve.dense import DenseRetriever
from convrag.types import Passage


def test_build_open_and_manifest(tmp_path: Path, tiny_passages: list[Passage], embedder: Embedder) -> None:
    built = Collection.build(tmp_path / "c", tiny_passages, embedder=embedder, source="test")
    opened = Collection.open(tmp_path / "c")
    manifest = opened.manifest
    assert (manifest.passage_count, manifest.embedding_model, manifest.embedding_dimension) == (6, "all-MiniLM-L6-v2", 384)
    assert manifest.corpus_sha256 == corpus_sha256(tiny_passages)
    assert opened.passages == tiny_passages
    assert opened.dense.size == 6 and opened.bm25.size == 6
    assert built.version_dir == opened.version_dir


def test_identical_rebuild_is_a_no_op_and_change_makes_new_version(tmp_path: Path, tiny_passages: list[Passage]) -> None:
    first = Collection.build(tmp_path / "c", tiny_passages)
    again = Collection.build(tmp_path / "c", tiny_passages)
    assert again.version_dir == first.version_dir
    changed = Collection.build(tmp_path / "c", tiny_passages[:-1])
    assert changed.version_dir != first.version_dir and len(changed) == 5
    assert not first.version_dir.exists(), "old versions are removed once the new one is live"


def test_changed_corpus_is_a_clear_error(tmp_path: Path, tiny_passages: list[Passage]) -> None:
    Collection.build(tmp_path / "c", tiny_passages)
    other = corpus_sha256(tiny_passages[:3])
    with pytest.raises(CollectionError, match="built from a different corpus"):
        Collection.open(tmp_path / "c", expected_corpus_sha256=other)


def test_mismatched_embedding_model(tiny_collection: Collection, embedder: Embedder) -> None:
    impostor = Embedder(name="BAAI/bge-base-en-v1.5", model=embedder.model)
    with pytest.raises(CollectionError, match="was embedded with all-MiniLM-L6-v2 .*query model is BAAI/bge-base-en-v1.5"):
        DenseRetriever(tiny_collection, impostor)


def test_same_name_different_weights_is_detected(tmp_path: Path, tiny_passages: list[Passage], embedder: Embedder) -> None:
    built = Collection.build(tmp_path / "c", tiny_passages, embedder=embedder)
    tampered = replace(built.manifest, embedding_probe=[-x for x in built.manifest.embedding_probe or []])
    built.manifest = tampered
    with pytest.raises(CollectionError, match="different embeddings"):
        built.check_embedder(embedder)


def test_bm25_only_collection_refuses_dense(tmp_path: Path, tiny_passages: list[Passage]) -> None:
    built = Collection.build(tmp_path / "c", tiny_passages)
    with pytest.raises(CollectionError, match="without embeddings"):
        DenseRetriever(built)


def test_crash_during_index_write_keeps_previous_version(
    tmp_path: Path, tiny_passages: list[Passage], monkeypatch: pytest.MonkeyPatch
) -> None:
    Collection.build(tmp_path / "c", tiny_passages)

    def crash(self: BM25Index, folder: Path) -> None:
        (folder / "partial").parent.mkdir(parents=True, exist_ok=True)
        (folder / "partial").write_text("half-written")
        raise OSError("disk full")

    monkeypatch.setattr(BM25Index, "save", crash)
    with pytest.raises(OSError, match="disk full"):
        Collection.build(tmp_path / "c", tiny_passages[:2])
    monkeypatch.undo()
    survivor = Collection.open(tmp_path / "c")
    assert len(survivor) == 6
    positions, _ = survivor.bm25.search(["passport renewal"], 1)
    assert survivor.passages[positions[0][0]].doc_id == "p2"
    assert not [p for p in (tmp_path / "c").iterdir() if p.name.startswith(".tmp-")]


def test_crash_after_version_written_before_switch(tmp_path: Path, tiny_passages: list[Passage], monkeypatch: pytest.MonkeyPatch) -> None:
    """Even a crash between writing the new version and switching CURRENT leaves the old one live."""
    Collection.build(tmp_path / "c", tiny_passages)
    real = collection_module.write_text

    def crash(path: Path, text: str) -> None:
        if path.name == "CURRENT":
            raise KeyboardInterrupt()
        real(path, text)

    monkeypatch.setattr(collection_module, "write_text", crash)
    with pytest.raises(KeyboardInterrupt):
        Collection.build(tmp_path / "c", tiny_passages[:2])
    monkeypatch.undo()
    assert len(Collection.open(tmp_path / "c")) == 6
    assert len(Collection.build(tmp_path / "c", tiny_passages[:2])) == 2


def test_bad_collections(tmp_path: Path, tiny_passages: list[Passage]) -> None:
    with pytest.raises(CollectionError, match="corpus is empty"):
        Collection.build(tmp_path / "empty", [])
    with pytest.raises(CollectionError, match="duplicate passage id 'p1'"):
        Collection.build(tmp_path / "dup", tiny_passages + [tiny_passages[0]])
    with pytest.raises(CollectionError, match="not a convrag collection"):
        Collection.open(tmp_path)
    built = Collection.build(tmp_path / "c", tiny_passages)
    (built.version_dir / "manifest.json").write_text("{not json")
    with pytest.raises(CollectionError, match=r"collection 'c': v[^/]+/manifest.json is corrupt .*; rebuild the collection"):
        Collection.open(tmp_path / "c")


@pytest.mark.parametrize("damage", ["dense/embeddings.npy", "dense/embeddings.npy:truncated", "bm25/vocab.index.json",
                                    "bm25/data.csc.index.npy", "bm25/params.index.json", "passages.jsonl"])
def test_a_damaged_file_is_one_clear_error_naming_the_collection(tmp_path: Path, tiny_passages: list[Passage],
                                                                  embedder: Embedder, damage: str) -> None:
    """Index files overwritten or cut short (a disk fault, a copy cut short) raised whatever numpy,
    json or bm25s met first, up to a service's 500 "internal error" with nothing said."""
    from convrag.errors import CollectionDamaged
    from convrag.retrieve import make_retriever

    name, _, how = damage.partition(":")
    built = Collection.build(tmp_path / "c", tiny_passages, embedder=embedder)
    target = built.version_dir / name
    target.write_bytes(target.read_bytes()[: len(target.read_bytes()) // 2] if how == "truncated" else b"\x93garbage\x00")
    with pytest.raises(CollectionDamaged, match=r"rebuild the collection") as raised:
        make_retriever("hybrid", Collection.open(tmp_path / "c"), embedder)
    message = str(raised.value)
    assert message.startswith("collection 'c': ") and "unsafely" not in message
    assert str(tmp_path) not in message  # a file is named within the collection (a service shows this to its clients)


def test_building_again_repairs_a_damaged_version(tmp_path: Path, tiny_passages: list[Passage], embedder: Embedder) -> None:
    """The error says "rebuild the collection", but building the same corpus again returned the
    damaged version as it was (an identical build is a no-op), and a build reusing its vectors (the
    service's upload) failed on them. Both now build a sound version."""
    from convrag.retrieve import make_retriever

    built = Collection.build(tmp_path / "c", tiny_passages, embedder=embedder)
    (built.version_dir / "dense" / "embeddings.npy").write_bytes(b"\x00" * 64)
    again = Collection.build(tmp_path / "c", tiny_passages, embedder=embedder)
    assert again.dense.size == len(tiny_passages)
    assert make_retriever("hybrid", Collection.open(tmp_path / "c"), embedder).search(["passport renewal"], 1)[0][0].doc_id == "p2"

    (Collection.open(tmp_path / "c").version_dir / "bm25" / "vocab.index.json").write_text("[")
    assert Collection.build(tmp_path / "c", tiny_passages, embedder=embedder).bm25.search(["cardinals"], 1)[0][0].size == 1

    damaged = Collection.open(tmp_path / "c")
    (damaged.version_dir / "dense" / "embeddings.npy").write_bytes(b"\x00" * 64)
    grown = Collection.build(tmp_path / "c", [*tiny_passages, Passage("p7", "Library cards cost 12 dollars.", "Library")],
                             embedder=embedder, reuse=damaged, force=True)
    assert grown.dense.size == len(tiny_passages) + 1


def test_store(tmp_path: Path, tiny_passages: list[Passage]) -> None:
    store = CollectionStore(tmp_path)
    Collection.build(store.path("docs"), tiny_passages)
    assert store.names() == ["docs"]
    assert len(store.open("docs")) == 6
    with pytest.raises(CollectionError, match=r"unknown collection 'wiki' .*known: docs"):
        store.open("wiki")
    with pytest.raises(CollectionError, match="invalid collection name"):
        store.path("../escape")
    # a new collection is named as the service names one, so that "-c a,b" and URLs can hold it
    for name in ("a,b", "a b", "x" * 65, "-lead", "tab\there"):
        with pytest.raises(CollectionError, match="invalid collection name"):
            store.path(name, new=True)
    assert store.path("faq_2026-v2", new=True) == tmp_path / "faq_2026-v2"
    (tmp_path / "made before the rule").mkdir()  # an existing folder keeps its name
    assert store.path("made before the rule", new=True).name == "made before the rule"


@pytest.fixture
def encoded(embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the embedder is asked to encode during the test (``clear()`` it to count from a point)."""
    texts: list[str] = []
    original = type(embedder).encode

    def spy(self, batch, *args, **kwargs):  # type: ignore[no-untyped-def]
        texts.extend(batch)
        return original(self, batch, *args, **kwargs)

    monkeypatch.setattr(type(embedder), "encode", spy)
    return texts


def test_reuse_embeds_only_new_passages(tmp_path: Path, tiny_passages: list[Passage], embedder: Embedder, encoded: list[str]) -> None:
    import numpy as np

    first = Collection.build(tmp_path / "c", tiny_passages[:4], embedder=embedder)
    encoded.clear()  # the first build's
    changed = tiny_passages[1]._replace(text="Passport renewal now costs 165 dollars.")
    passages = [tiny_passages[0], changed, *tiny_passages[2:]]
    second = Collection.build(tmp_path / "c", passages, embedder=embedder, reuse=first)
    assert sorted(encoded) == sorted(p.searchable_text for p in [changed, *tiny_passages[4:]])
    fresh = embedder.encode([p.searchable_text for p in passages])
    assert np.allclose(second.dense.embeddings, fresh, atol=1e-5)  # same vectors as a full rebuild


def test_building_a_changed_corpus_again_embeds_only_what_the_live_version_lacks(
        tmp_path: Path, tiny_passages: list[Passage], embedder: Embedder, encoded: list[str]) -> None:
    """``convrag index`` of a folder after one file was edited embedded every passage again (only the
    service's uploads passed the live version on as ``reuse``): a build takes its vectors from the live
    version by itself, unless told to start afresh (``force``, --rebuild) or the model differs."""
    import numpy as np

    Collection.build(tmp_path / "c", tiny_passages[:4], embedder=embedder)
    encoded.clear()  # the first build's
    changed = tiny_passages[1]._replace(text="Passport renewal now costs 165 dollars.")
    passages = [tiny_passages[0], changed, *tiny_passages[2:]]
    second = Collection.build(tmp_path / "c", passages, embedder=embedder)
    assert sorted(encoded) == sorted(p.searchable_text for p in [changed, *tiny_passages[4:]])
    assert np.allclose(second.dense.embeddings, embedder.encode([p.searchable_text for p in passages]), atol=1e-5)
    encoded.clear()
    Collection.build(tmp_path / "c", passages[:-1], embedder=embedder, force=True)  # --rebuild: every passage
    assert sorted(encoded) == sorted(p.searchable_text for p in passages[:-1])
    live = Collection.open(tmp_path / "c")  # the live version as built by other weights under the same name
    write_json(live.version_dir / MANIFEST_FILE, replace(live.manifest, embedding_probe=[-x for x in live.manifest.embedding_probe or []]).to_json())
    encoded.clear()
    Collection.build(tmp_path / "c", passages, embedder=embedder)
    assert sorted(encoded) == sorted(p.searchable_text for p in passages)


def test_shards_embedded_elsewhere_finish_the_build_without_embedding(
        tmp_path: Path, tiny_passages: list[Passage], embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """``embed_passages`` leaves its staging shards; copied into a collection folder on another
    machine, they are what ``build`` takes (the ``tools/embed_shards.py`` route for a GPU)."""
    import shutil

    import numpy as np

    from convrag.index.collection import embed_passages
    from convrag.index.windows import WindowSettings

    windows = WindowSettings(size=16, stride=8)  # small enough that the tiny passages have windows
    elsewhere = embed_passages(tmp_path / "gpu" / "c", tiny_passages, embedder, windows=windows)
    assert elsewhere.windows is not None and len(elsewhere.windows) > 0
    shutil.copytree(tmp_path / "gpu" / "c" / ".staging", tmp_path / "here" / "c" / ".staging")

    encoded: list[str] = []
    original = type(embedder).encode

    def spy(self, texts, *args, **kwargs):  # type: ignore[no-untyped-def]
        encoded.extend(texts)
        return original(self, texts, *args, **kwargs)

    monkeypatch.setattr(type(embedder), "encode", spy)
    built = Collection.build(tmp_path / "here" / "c", tiny_passages, embedder=embedder, windows=windows)
    assert encoded == [], "every vector came from the copied shards"
    assert np.array_equal(built.dense.embeddings, elsewhere.embeddings)
    assert np.array_equal(built.dense.windows, elsewhere.windows) and np.array_equal(built.dense.owners, elsewhere.owners)
    assert built.manifest.dense_windows == {"size": 16, "stride": 8, "count": len(elsewhere.owners)}
    assert not (tmp_path / "here" / "c" / ".staging").exists(), "a finished build removes its staging"

    # shards of another corpus are never taken: one changed passage re-embeds everything
    shutil.copytree(tmp_path / "gpu" / "c" / ".staging", tmp_path / "other" / "c" / ".staging")
    changed = [tiny_passages[0]._replace(text="Passport renewal now costs 165 dollars."), *tiny_passages[1:]]
    Collection.build(tmp_path / "other" / "c", changed, embedder=embedder)
    assert len(encoded) == len(changed)


def test_new_bm25_weights_rebuild_bm25_alone(tmp_path: Path, tiny_passages: list[Passage], embedder: Embedder,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A collection built with other BM25 weights (e.g. before the default changed) is brought to
    the asked ones without embedding a passage again; the old version stays live until then."""
    import numpy as np

    from convrag.index.bm25 import BM25Params
    from convrag.index.windows import WindowSettings

    windows = WindowSettings(size=16, stride=8)
    before = Collection.build(tmp_path / "c", tiny_passages, embedder=embedder, windows=windows,
                              bm25_params=BM25Params(k1=1.5, b=0.75))
    old_vectors, old_windows = before.dense.embeddings.copy(), before.dense.windows.copy()
    old_scores = before.bm25.model.get_scores(before.bm25.tokenizer.tokenize(["passport renewal"], return_as="ids")[0])

    def no_embedding(self, texts, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError(f"embedded {len(texts)} texts")

    monkeypatch.setattr(type(embedder), "encode", no_embedding)
    after = Collection.build(tmp_path / "c", tiny_passages, embedder=embedder, windows=windows,
                             bm25_params=BM25Params(k1=1.5, b=0.2))
    assert after.version_dir != before.version_dir and not before.version_dir.exists()
    opened = Collection.open(tmp_path / "c")
    assert opened.version_dir == after.version_dir
    assert opened.manifest.bm25["b"] == 0.2 and opened.bm25.params == BM25Params(k1=1.5, b=0.2)
    assert (opened.manifest.embedding_model, opened.manifest.dense_windows) == (before.manifest.embedding_model,
                                                                              before.manifest.dense_windows)
    assert np.array_equal(opened.dense.embeddings, old_vectors) and np.array_equal(opened.dense.windows, old_windows)
    new_scores = opened.bm25.model.get_scores(opened.bm25.tokenizer.tokenize(["passport renewal"], return_as="ids")[0])
    assert not np.allclose(new_scores, old_scores), "a smaller b discounts the long passages less"
    assert opened.with_bm25(BM25Params(k1=1.5, b=0.2)) is opened, "the same weights are a no-op"


def test_a_crash_while_reweighting_bm25_keeps_the_live_version(tmp_path: Path, tiny_passages: list[Passage],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from convrag.index.bm25 import BM25Params

    before = Collection.build(tmp_path / "c", tiny_passages, bm25_params=BM25Params(b=0.75))

    def crash(self: BM25Index, folder: Path) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(BM25Index, "save", crash)
    with pytest.raises(OSError, match="disk full"):
        before.with_bm25(BM25Params(b=0.3))
    monkeypatch.undo()
    survivor = Collection.open(tmp_path / "c")
    assert survivor.version_dir == before.version_dir and survivor.manifest.bm25["b"] == 0.75
    assert not [p for p in (tmp_path / "c").iterdir() if p.name.startswith(".tmp-")]


def test_a_second_build_of_one_collection_waits_for_the_first(tmp_path: Path, tiny_passages: list[Passage],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Two builds at once used to clear each other's folders as stale, both said they had finished, and
    left a version holding only its manifest. A build now waits while another holds the collection."""
    import threading
    from contextlib import contextmanager

    class Recording:
        def __init__(self) -> None:
            self.waiting = threading.Event()

        @contextmanager
        def stage(self, description: str, total: int | None = None):  # type: ignore[no-untyped-def]
            if "waiting for another build" in description:
                self.waiting.set()
            yield lambda n=1: None

    inside, go_on = threading.Event(), threading.Event()
    bm25_of = collection_module._bm25_of

    def slow_first(passages, params):  # type: ignore[no-untyped-def]
        if not inside.is_set():  # the first build stops half-way, its folder being written
            inside.set()
            go_on.wait(timeout=60)
        return bm25_of(passages, params)

    monkeypatch.setattr(collection_module, "_bm25_of", slow_first)
    path, reporter, built = tmp_path / "c", Recording(), {}
    first = threading.Thread(target=lambda: built.update(first=Collection.build(path, tiny_passages)))
    second = threading.Thread(target=lambda: built.update(second=Collection.build(path, tiny_passages[:4], reporter=reporter)))
    first.start()
    assert inside.wait(timeout=60)
    second.start()
    waited = reporter.waiting.wait(timeout=20)
    go_on.set()
    first.join(timeout=60)
    second.join(timeout=60)
    assert waited and set(built) == {"first", "second"}
    opened = Collection.open(path)  # the second build's version, complete: passages, BM25 and manifest
    assert opened.passages == tiny_passages[:4] and opened.bm25.size == 4 and built["second"].version_dir == opened.version_dir
    assert [p.name for p in path.iterdir() if p.is_dir()] == [opened.version_dir.name]  # the first's, cleared after


def test_a_reader_whose_version_was_replaced_is_told_to_open_it_again(tmp_path: Path, tiny_passages: list[Passage]) -> None:
    """A build publishes, then removes the version before it; a reader that opened that version and
    loads its index only now used to get a raw FileNotFoundError."""
    from convrag.errors import CollectionReplaced

    path = tmp_path / "c"
    Collection.build(path, tiny_passages)
    early = Collection.open(path)  # nothing loaded yet
    Collection.build(path, tiny_passages[:4])
    with pytest.raises(CollectionReplaced, match="rebuilt after it was opened.*open it again"):
        early.bm25.search(["cardinals"], 1)
    assert Collection.open(path).bm25.size == 4
    # a file missing from the live version is damage, named as such
    live = Collection.open(path)
    for child in (live.version_dir / "bm25").iterdir():
        child.unlink()
    with pytest.raises(CollectionError, match="is missing; rebuild the collection") as raised:
        live.bm25.search(["cardinals"], 1)
    assert not isinstance(raised.value, CollectionReplaced)


def test_opening_reads_the_new_version_when_a_build_publishes_during_the_read(
        tmp_path: Path, tiny_passages: list[Passage], monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c"
    Collection.build(path, tiny_passages)
    read_passages = collection_module._read_passages
    published: list[str] = []

    def build_first(file: Path) -> list[Passage]:  # another build publishes just as this reader reads (once)
        monkeypatch.setattr(collection_module, "_read_passages", read_passages)
        published.append(Collection.build(path, tiny_passages[:3]).version_dir.name)
        return read_passages(file)

    monkeypatch.setattr(collection_module, "_read_passages", build_first)
    opened = Collection.open(path)
    assert opened.version_dir.name == published[0] and opened.passages == tiny_passages[:3]


def test_the_store_lists_each_collection_from_its_manifest(tmp_path: Path, tiny_passages: list[Passage], embedder: Embedder) -> None:
    store = CollectionStore(tmp_path)
    Collection.build(store.path("dense", new=True), tiny_passages, name="dense", embedder=embedder, source="docs/")
    Collection.build(store.path("lexical", new=True), tiny_passages[:2], name="lexical")
    (tmp_path / "unfinished" / ".staging").mkdir(parents=True)  # a first build stopped before it published
    (tmp_path / ".hidden").mkdir()
    assert store.folders() == ["dense", "lexical", "unfinished"]
    dense, lexical, unfinished = (store.info(n) for n in store.folders())
    assert (dense.passages, dense.embedding_model, dense.source, dense.problem) == (6, "all-MiniLM-L6-v2", "docs/", None)
    assert dense.bytes > lexical.bytes > 0 and dense.built
    assert (lexical.passages, lexical.embedding_model) == (2, None)
    assert unfinished.problem == "no index yet (a build did not finish; index it again)"
    (store.path("lexical") / (store.version("lexical") or "") / "manifest.json").write_text("{")
    assert re.fullmatch(r"damaged: v[\w-]+/manifest.json is corrupt \(.*\); index it again", store.info("lexical").problem or "")


def test_deleting_a_collection(tmp_path: Path, tiny_passages: list[Passage]) -> None:
    from filelock import FileLock

    store = CollectionStore(tmp_path / "collections")
    built = Collection.build(store.path("c", new=True), tiny_passages, name="c")
    with FileLock(built.path / collection_module.WRITE_LOCK, thread_local=False):  # a build of it is running
        with pytest.raises(CollectionError, match="collection 'c' is being built; delete it when the build ends"):
            store.delete("c")
    assert store.open("c").passages == tiny_passages
    (tmp_path / "convrag.sqlite").touch()  # the folder is a convrag service's
    with pytest.raises(CollectionError, match="holds a convrag service's collections; delete 'c' in its web chat"):
        store.delete("c")
    for name in ("c", "new"):  # nor built into: a build would drop the documents uploaded to it
        with pytest.raises(CollectionError, match=f"holds a convrag service's collections; add documents to '{name}'"):
            store.writable(name)
    (tmp_path / "convrag.sqlite").unlink()
    store.delete("c")
    assert not built.path.exists() and store.names() == []
    with pytest.raises(CollectionError, match="unknown collection 'c'"):
        store.delete("c")


def test_a_linked_collection_and_its_source_never_change_each_other(tmp_path: Path, tiny_passages: list[Passage],
                                                                      embedder: Embedder) -> None:
    """How the service takes on a collection `convrag index` built: its files linked, not copied, and
    later builds of either side leave the other's version as it was."""
    source = Collection.build(tmp_path / "cli" / "docs", tiny_passages, embedder=embedder)
    linked = collection_module.link_collection(source.path, tmp_path / "svc" / "docs")
    assert linked.version_dir.name == source.version_dir.name and linked.passages == source.passages and linked.intact()
    assert (linked.version_dir / "dense" / "embeddings.npy").samefile(source.version_dir / "dense" / "embeddings.npy")
    Collection.build(source.path, tiny_passages[:2], embedder=embedder)  # `convrag index` again, a smaller corpus
    Collection.build(linked.path, tiny_passages[1:], embedder=embedder, reuse=Collection.open(linked.path), force=True)
    assert len(Collection.open(source.path).passages) == 2 and len(Collection.open(linked.path).passages) == len(tiny_passages) - 1
    assert Collection.open(source.path).intact() and Collection.open(linked.path).intact()


def test_a_source_that_cannot_be_read_is_not_linked(tmp_path: Path, tiny_passages: list[Passage], embedder: Embedder) -> None:
    source = Collection.build(tmp_path / "cli" / "docs", tiny_passages, embedder=embedder)
    (source.version_dir / "dense" / "embeddings.npy").write_bytes(b"not an array")
    with pytest.raises(CollectionError, match="'docs'") as raised:
        collection_module.link_collection(source.path, tmp_path / "svc" / "docs")
    assert str(tmp_path) not in str(raised.value)
    with pytest.raises(CollectionError, match="no index"):
        collection_module.link_collection(tmp_path / "cli" / "none", tmp_path / "svc" / "none")
