"""The Milvus backend: one Milvus collection per convrag collection.

Schema: ``id`` (the passage id, primary key), ``doc_id`` (the source document),
``title``, ``url``, ``text`` (analyzed: standard tokenizer, lowercase, the
embedded BM25's English stopwords, and English stemming where the engine
supports it: Milvus servers do, Milvus Lite does not), a
``sparse`` field filled by Milvus's built-in BM25 function, and a ``dense``
float vector searched exactly (FLAT index, inner product on normalized vectors).
Search modes are ``bm25``, ``dense`` and ``hybrid`` (Milvus ``hybrid_search``
with its RRF ranker, k=60).

The URI picks the deployment: a file path (``./data/convrag.db``) runs Milvus
Lite in-process; ``http://host:19530`` with a token talks to a server or a
cluster. Nothing else changes.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from bm25s.stopwords import STOPWORDS_EN

from ..embeddings import Embedder, load_embedder
from ..errors import BackendUnavailable, CollectionError, ConfigError
from ..index.manifest import corpus_sha256
from ..progress import SILENT, Reporter
from ..types import Hit, Passage, document_of

if TYPE_CHECKING:
    from ..retrieve.multi import CollectionSearch

DEFAULT_URI = "./data/convrag.db"
SCHEMA_VERSION = 1
MODES = ("bm25", "dense", "hybrid")
MAX_TEXT = 65_535
# The stop words are spelled out (bm25s's English list, as the embedded BM25 uses) because Milvus Lite
# reads "_english_" as a literal word; servers understand both. Lite also ignores the stemmer filter,
# which Milvus servers apply.
ANALYZER = {
    "tokenizer": "standard",
    "filter": ["lowercase", {"type": "stop", "stop_words": sorted(STOPWORDS_EN)}, {"type": "stemmer", "language": "english"}],
}
#: Collection property holding :class:`MilvusInfo` as JSON (properties survive on Lite and servers alike).
INFO_PROPERTY = "convrag.info"
_FIELDS = ("id", "doc_id", "title", "url", "text", "sparse", "dense")
#: ids deleted per request when a sync removes passages
DELETE_BATCH = 1000
#: The client pings its server every 10 s, idle or not; Milvus Lite's in-process gRPC server
#: refuses pings that come without calls, and after a minute of a chat's idle time the client
#: printed "GOAWAY ... too_many_pings" between turns. A connection inside one process needs no
#: keepalive (gRPC's own default: off); servers keep pymilvus's.
_LITE_CLIENT = {"grpc_options": {"grpc.keepalive_time_ms": 2**31 - 1, "grpc.keepalive_permit_without_calls": False}}


#: Open stores per Milvus Lite file in this process: they share its one in-process server, which
#: the last to close stops.
_LITE_USERS: Counter[str] = Counter()
_LITE_LOCK = threading.Lock()


def milvus_name(name: str) -> str:
    """Milvus allows letters, digits and underscores; convrag names may also hold '-'."""
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,200}", name or ""):
        raise ConfigError(f"invalid collection name {name!r} (use letters, digits, '-' or '_')")
    return "convrag_" + name.replace("-", "_")


@dataclass(frozen=True)
class MilvusInfo:
    """What convrag stores with the Milvus collection (a collection property), checked on open."""

    name: str
    embedding_model: str
    dimension: int
    corpus_sha256: str = ""
    schema_version: int = SCHEMA_VERSION
    #: kept by a convrag service, whose database lists the documents uploaded to it: ``convrag index``
    #: (which makes a collection hold exactly the corpus it is given) and ``convrag delete`` leave it alone
    served: bool = False


def lite_file_missing(uri: str) -> bool:
    """Whether ``uri`` names a Milvus Lite file (not a server's address) that does not exist."""
    return "://" not in uri and not Path(uri).expanduser().exists()


class MilvusStore:
    """A Milvus deployment holding convrag collections."""

    def __init__(self, uri: str = DEFAULT_URI, token: str | None = None, timeout: float = 10.0, *, create: bool = True) -> None:
        """``create=False`` (the commands that only read: search, ask, chat, delete) refuses a Milvus
        Lite file that is not there rather than making it, and its folders: the default is relative
        to the working folder, so a search from another folder, or a mistyped path, left an empty
        database behind and said only that the collection was unknown."""
        from pymilvus import MilvusClient
        from pymilvus.exceptions import MilvusException

        self.uri = uri
        self.timeout = timeout
        is_remote = "://" in uri
        if not is_remote and not create and lite_file_missing(uri):
            where = uri if Path(uri).is_absolute() else f"{uri} ({Path(uri).expanduser().resolve()})"
            raise CollectionError(f"no Milvus Lite file at {where}; convrag index --backend milvus --milvus-uri {uri} creates it")
        if not is_remote:
            Path(uri).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
        self._lite_path = None if is_remote else os.path.abspath(uri)
        with _lite_start_failures() as failures:
            try:
                self.client = MilvusClient(uri=uri, token=token or "", timeout=timeout, **({} if is_remote else _LITE_CLIENT))
            except MilvusException as exc:
                lite = _lite_failure(uri, failures)
                if lite:
                    raise CollectionError(lite) from None
                raise BackendUnavailable(f"cannot reach Milvus at {uri}: {exc.message}", public=f"cannot reach Milvus: {exc.message}") from None
            except Exception as exc:  # the lite launcher raises plain errors for unusable files
                raise CollectionError(_lite_failure(uri, failures) or f"cannot open Milvus at {uri}: {exc}") from None
        if self._lite_path is not None:
            with _LITE_LOCK:
                _LITE_USERS[self._lite_path] += 1

    def close(self) -> None:
        """Close the connection; the last store of a Milvus Lite file in this process also stops
        its in-process server, which frees the file for other processes (an index run, a chat).
        Milvus Lite otherwise keeps it until the process exits."""
        self.client.close()
        path, self._lite_path = self._lite_path, None
        if path is None:
            return
        with _LITE_LOCK:
            _LITE_USERS[path] -= 1
            last = _LITE_USERS[path] <= 0
            if last:
                del _LITE_USERS[path]
        if last:
            from milvus_lite.server_manager import server_manager_instance

            server_manager_instance.release_server(path)

    def names(self) -> list[str]:
        out = []
        with _reported("listing the collections", self.uri):
            listed = self.client.list_collections()
        for collection in listed:
            info = self._info(collection)
            if info is not None:
                out.append(info.name)
        return sorted(out)

    def _info(self, milvus_collection: str) -> MilvusInfo | None:
        with _reported("describing a collection", self.uri):
            properties = self.client.describe_collection(milvus_collection).get("properties") or {}
        try:
            return MilvusInfo(**json.loads(properties.get(INFO_PROPERTY, "")))
        except (TypeError, ValueError):
            return None

    def exists(self, name: str) -> bool:
        with _reported("looking a collection up", self.uri):
            return bool(self.client.has_collection(milvus_name(name)))

    def served(self, name: str) -> bool:
        """Whether a convrag service keeps the collection ``name`` (False when there is none)."""
        info = self._info(milvus_name(name)) if self.exists(name) else None
        return info is not None and info.served

    def serve(self, name: str) -> None:
        """Mark the collection ``name`` as a convrag service's (see :attr:`MilvusInfo.served`)."""
        target = milvus_name(name)
        info = self._info(target)
        if info is not None and not info.served:
            with _reported("marking a collection as the service's", self.uri):
                self.client.alter_collection_properties(target, properties={INFO_PROPERTY: json.dumps({**info.__dict__, "served": True})})

    def refuse_served(self, name: str, action: str) -> None:
        """A clear error where ``action`` (``convrag index`` or ``convrag delete``) would change a
        collection a convrag service keeps behind its database's back."""
        if self.served(name):
            raise CollectionError(f"Milvus collection {name!r} is kept by a convrag service, whose database lists the "
                                  f"documents uploaded to it; {action} would leave that list wrong: add or delete documents "
                                  "through the service (web chat or /api/collections), or delete the collection there")

    def delete(self, name: str) -> None:
        if self.exists(name):
            with _reported("dropping a collection", self.uri):
                self.client.drop_collection(milvus_name(name))

    def create(self, name: str, embedder_name: str, dimension: int, corpus_sha256: str = "") -> MilvusCollection:
        """Create the collection if missing; an existing one must have the same model and dimension."""
        from pymilvus import DataType, Function, FunctionType

        target = milvus_name(name)
        if self.exists(name):
            return self.open(name, expect_model=embedder_name, expect_dimension=dimension)
        info = MilvusInfo(name=name, embedding_model=embedder_name, dimension=dimension, corpus_sha256=corpus_sha256)
        schema = self.client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=512)
        schema.add_field("doc_id", DataType.VARCHAR, max_length=512)
        schema.add_field("title", DataType.VARCHAR, max_length=2048)
        schema.add_field("url", DataType.VARCHAR, max_length=2048)
        schema.add_field("text", DataType.VARCHAR, max_length=MAX_TEXT, enable_analyzer=True, analyzer_params=ANALYZER)
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dimension)
        schema.add_function(
            Function(name="text_bm25", function_type=FunctionType.BM25, input_field_names=["text"], output_field_names=["sparse"])
        )
        index_params = self.client.prepare_index_params()
        index_params.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        index_params.add_index("dense", index_type="FLAT", metric_type="IP")
        with _reported("creating a collection", self.uri):
            self.client.create_collection(
                target, schema=schema, index_params=index_params, properties={INFO_PROPERTY: json.dumps(info.__dict__)}
            )
        return MilvusCollection(self, info)

    def open(self, name: str, expect_model: str | None = None, expect_dimension: int | None = None) -> MilvusCollection:
        """Open an existing collection, checking that its schema is the one convrag creates."""
        target = milvus_name(name)
        if not self.exists(name):
            known = ", ".join(self.names()) or "none"
            raise CollectionError(f"unknown Milvus collection {name!r} at {self.uri} (known: {known})")
        info = self._info(target)
        with _reported("describing a collection", self.uri):
            fields = {f["name"]: f for f in self.client.describe_collection(target)["fields"]}
        if info is None or set(_FIELDS) - set(fields):
            raise CollectionError(
                f"Milvus collection {target!r} at {self.uri} does not have convrag's schema "
                f"(fields {sorted(fields)}); drop it or use another name"
            )
        if info.schema_version != SCHEMA_VERSION:
            raise CollectionError(f"Milvus collection {name!r} has schema version {info.schema_version}; this convrag needs {SCHEMA_VERSION}")
        if expect_model is not None and expect_model != info.embedding_model:
            raise CollectionError(
                f"Milvus collection {name!r} was embedded with {info.embedding_model}, not {expect_model}; "
                f"use the same model or delete the collection"
            )
        if expect_dimension is not None and expect_dimension != info.dimension:
            raise CollectionError(f"Milvus collection {name!r} holds {info.dimension}-d vectors, not {expect_dimension}-d")
        with _reported("loading a collection", self.uri):
            self.client.load_collection(target)
        return MilvusCollection(self, info)


@contextmanager
def _lite_start_failures() -> Iterator[list[BaseException]]:
    """The errors Milvus Lite met starting its server, kept instead of printed.

    Milvus Lite logs why its server did not start (a traceback on stderr) and the client then
    raises only "Open local milvus failed"; the reason, kept here, makes the one-line error."""
    failures: list[BaseException] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.exc_info and record.exc_info[1] is not None:
                failures.append(record.exc_info[1])

    logger = logging.getLogger("milvus_lite.server_manager")
    keep, propagate = Keep(), logger.propagate
    logger.addHandler(keep)
    logger.propagate = False
    try:
        yield failures
    finally:
        logger.removeHandler(keep)
        logger.propagate = propagate


def _lite_failure(uri: str, failures: Sequence[BaseException]) -> str | None:
    """A clear message for a Milvus Lite file that could not be opened, from the kept reason."""
    from milvus_lite.exceptions import DataDirLockedError

    if any(isinstance(f, DataDirLockedError) for f in failures):
        return (f"the Milvus Lite file {uri} is open in another process, and Milvus Lite serves one process at a time: "
                "stop that process (a chat, an index run), or use a Milvus server (--milvus-uri http://host:19530)")
    if Path(uri).is_file():  # a Milvus Lite 1.x database, or any other file, where Lite now keeps a folder
        return (f"cannot open Milvus at {uri}: it is a file, and Milvus Lite keeps its data in a folder of that name "
                "(a database of Milvus Lite 1.x cannot be read); move the file aside or give another --milvus-uri")
    return f"cannot open Milvus at {uri}: {failures[-1]}" if failures else None


@contextmanager
def _reported(action: str, uri: str) -> Iterator[None]:
    """Turn the client's errors into one clear :class:`BackendUnavailable`: whatever Milvus refuses
    at this point (a server gone, a connection closed, a request timed out) is the backend's fault,
    not the caller's, since convrag checks its own requests before making them."""
    from pymilvus.exceptions import MilvusException

    try:
        yield
    except MilvusException as exc:
        why = exc.message or f"no answer (error code {exc.code}: the connection is closed or the server is down)"
        raise BackendUnavailable(f"Milvus at {uri}: {action} failed: {why}", public=f"Milvus: {action} failed: {why}") from None


class MilvusCollection:
    """One convrag collection in Milvus: ingest and search."""

    def __init__(self, store: MilvusStore, info: MilvusInfo) -> None:
        self.store = store
        self.info = info
        self.target = milvus_name(info.name)

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def client(self) -> Any:
        return self.store.client

    def __len__(self) -> int:
        # count(*) is exact; collection statistics may still count replaced rows on a server.
        with _reported("count", self.store.uri):
            rows = self.client.query(self.target, filter="", output_fields=["count(*)"])
        return int(rows[0]["count(*)"])

    def ingest(
        self,
        passages: Sequence[Passage],
        embedder: Embedder | None = None,
        vectors: np.ndarray | None = None,
        batch_size: int = 256,
        reporter: Reporter = SILENT,
    ) -> int:
        """Upsert passages in batches (re-ingesting the same ids replaces them); returns the count written.

        Pass ``vectors`` (one normalized row per passage, for example from an
        embedded collection) to skip embedding; else ``embedder`` embeds them.
        """
        _check_passages(passages)
        if vectors is not None and vectors.shape != (len(passages), self.info.dimension):
            raise CollectionError(
                f"{vectors.shape[0]}x{vectors.shape[1]} vectors for {len(passages)} passages of a "
                f"{self.info.dimension}-d collection"
            )
        if vectors is None:
            embedder = embedder or load_embedder(self.info.embedding_model)
            if embedder.name != self.info.embedding_model or embedder.dimension != self.info.dimension:
                raise CollectionError(
                    f"Milvus collection {self.name!r} holds {self.info.embedding_model} ({self.info.dimension}-d) "
                    f"vectors; the embedder is {embedder.name} ({embedder.dimension}-d)"
                )
        written = 0
        with reporter.stage(f"{self.name}: ingesting {len(passages)} passages into Milvus", total=len(passages)) as advance:
            for start in range(0, len(passages), batch_size):
                batch = passages[start : start + batch_size]
                block = vectors[start : start + batch_size] if vectors is not None else embedder.encode([p.searchable_text for p in batch])  # type: ignore[union-attr]
                rows = [_row(p, block[i]) for i, p in enumerate(batch)]
                with _reported("upsert", self.store.uri):
                    written += int(self.client.upsert(self.target, rows)["upsert_count"])
                advance(len(batch))
        with _reported("flush", self.store.uri):
            self.client.flush(self.target)
            self.client.load_collection(self.target)
        return written

    def sync(self, passages: Sequence[Passage], embedder: Embedder | None = None, reporter: Reporter = SILENT) -> Synced:
        """Make the collection hold exactly ``passages``, as a build of an embedded collection does
        (what ``convrag index`` means by "create or update"). Upserting alone kept the passages of
        documents since removed or edited, and an outdated passage could outrank its replacement.

        Only new and changed passages are embedded. They are upserted before the passages no longer
        in the corpus are deleted, so a crash half-way leaves every old passage searchable; the corpus
        hash is recorded last, so the next sync finishes the work. When the recorded hash and the size
        match, nothing is read or written."""
        _check_passages(passages)
        digest = corpus_sha256(passages)
        if self.info.corpus_sha256 == digest and len(self) == len(passages):
            return Synced(0, 0, len(passages))
        stored = self._stored()
        changed = [p for p in passages if stored.get(p.doc_id) != _row_fields(p)]
        written = self.ingest(changed, embedder, reporter=reporter) if changed else 0
        wanted = {p.doc_id for p in passages}
        stale = [pid for pid in stored if pid not in wanted]
        info = replace(self.info, corpus_sha256=digest)
        with _reported("delete", self.store.uri):
            for start in range(0, len(stale), DELETE_BATCH):
                self.client.delete(self.target, ids=stale[start : start + DELETE_BATCH])
            self.client.flush(self.target)
            self.client.alter_collection_properties(self.target, properties={INFO_PROPERTY: json.dumps(info.__dict__)})
        self.info = info
        return Synced(written, len(stale), len(self))

    def replace_documents(self, passages: Sequence[Passage], documents: set[str], embedder: Embedder | None = None,
                          reporter: Reporter = SILENT) -> int:
        """Swap the passages of ``documents`` (their ids' document part) for ``passages``, the rest
        kept: what a service upload or removal does. The new passages are upserted first and the
        documents' other passages deleted after, so a crash half-way leaves every old passage
        searchable, and doing it again finishes it. Returns how many passages the collection holds."""
        _check_passages(passages)
        if passages:
            self.ingest(passages, embedder, reporter=reporter)
        if documents:
            keep = {p.doc_id for p in passages}
            with _reported("delete", self.store.uri):
                rows = self.client.query(self.target, filter=_of_documents(documents),
                                         output_fields=["id"])
                stale = [str(r["id"]) for r in rows if str(r["id"]) not in keep]
                for start in range(0, len(stale), DELETE_BATCH):
                    self.client.delete(self.target, ids=stale[start : start + DELETE_BATCH])
                self.client.flush(self.target)
        return len(self)

    def passage(self, passage_id: str) -> Passage | None:
        """One stored passage by id, as it was ingested; None when there is none."""
        with _reported("get", self.store.uri):
            rows = self.client.get(self.target, ids=[passage_id], output_fields=["id", "title", "text", "url"])
        return _passage(rows[0]) if rows else None

    def passages_of(self, documents: set[str]) -> list[Passage]:
        """The stored passages of ``documents`` (the document part of their ids)."""
        if not documents:
            return []
        with _reported("query", self.store.uri):
            rows = self.client.query(self.target, filter=_of_documents(documents),
                                     output_fields=["id", "title", "text", "url"])
        return [_passage(r) for r in rows]

    def stored_passages(self) -> list[Passage]:
        """Every stored passage, as it was ingested (listed in batches of 1000)."""
        return [Passage(passage_id, _passage_text(text, title), title, url) for passage_id, (text, title, url) in self._stored().items()]

    def _stored(self) -> dict[str, tuple[str, str, str]]:
        """Every stored passage's id and the fields a sync compares (text, title, url)."""
        out: dict[str, tuple[str, str, str]] = {}
        # the iterator warns that Milvus Lite gives it no server timestamp; it then uses the client's
        quiet = logging.getLogger("pymilvus.client.iterator.query_iterator")
        level = quiet.level
        quiet.setLevel(logging.ERROR)
        try:
            with _reported("listing the passages", self.store.uri):
                rows = self.client.query_iterator(self.target, batch_size=1000, output_fields=["id", "text", "title", "url"])
                try:
                    while batch := rows.next():
                        out.update((str(r["id"]), (r["text"], r["title"], r["url"])) for r in batch)
                finally:
                    rows.close()
        finally:
            quiet.setLevel(level)
        return out

    def search(self, queries: Sequence[str], k: int = 10, mode: str = "hybrid", embedder: Embedder | None = None, depth: int = 100) -> list[list[Hit]]:
        """Ranked hits per query, with the same shape as the embedded backend's retrievers."""
        if mode not in MODES:
            raise ConfigError(f"unknown Milvus search mode {mode!r}; expected one of {', '.join(MODES)}")
        if not queries:
            return []
        if embedder is not None and embedder.name != self.info.embedding_model:
            raise CollectionError(
                f"Milvus collection {self.name!r} was embedded with {self.info.embedding_model}; "
                f"the query model is {embedder.name}"
            )
        with _reported("search", self.store.uri):
            raw = self._search(queries, k, mode, embedder, depth)
        return [_hits(list(hits), mode) for hits in raw]

    def top_cosines(self, vectors: np.ndarray, top: int) -> list[np.ndarray]:
        """The ``top`` highest cosines of each query vector here (stored vectors are normalized, so
        inner product is cosine): what routing compares collections by, read without the passages."""
        with _reported("search", self.store.uri):
            raw = self.client.search(self.target, data=np.asarray(vectors, np.float32).tolist(), anns_field="dense", limit=top,
                                     output_fields=[], search_params={"metric_type": "IP"})
        return [np.array([float(h["distance"]) for h in hits], np.float32) for hits in raw]

    def _search(self, queries: Sequence[str], k: int, mode: str, embedder: Embedder | None, depth: int) -> list[Any]:
        from pymilvus import AnnSearchRequest, RRFRanker

        fields = ["title", "text", "url"]
        texts = [q if q.strip() else " " for q in queries]
        if mode == "bm25":
            raw = self.client.search(
                self.target, data=texts, anns_field="sparse", limit=k, output_fields=fields, search_params={"metric_type": "BM25"}
            )
        else:
            embedder = embedder or load_embedder(self.info.embedding_model)
            vectors = embedder.encode(list(queries)).tolist()
            if mode == "dense":
                raw = self.client.search(
                    self.target, data=vectors, anns_field="dense", limit=k, output_fields=fields, search_params={"metric_type": "IP"}
                )
            else:
                raw = []
                for text, vector in zip(texts, vectors):  # hybrid_search takes one query per call
                    requests = [
                        AnnSearchRequest(data=[text], anns_field="sparse", param={"metric_type": "BM25"}, limit=max(depth, k)),
                        AnnSearchRequest(data=[vector], anns_field="dense", param={"metric_type": "IP"}, limit=max(depth, k)),
                    ]
                    raw.extend(self.client.hybrid_search(self.target, requests, ranker=RRFRanker(60), limit=k, output_fields=fields))
        return list(raw)


class Synced(NamedTuple):
    """What :meth:`MilvusCollection.sync` did: passages written (new or changed), passages removed (no
    longer in the corpus), and how many the collection holds after."""

    written: int
    removed: int
    total: int


def _row_fields(passage: Passage) -> tuple[str, str, str]:
    """The text, title and url a passage is stored with (cut to the schema's lengths)."""
    return _cut(passage.searchable_text, MAX_TEXT), _cut(passage.title, 2048), _cut(passage.url, 2048)


def _cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` bytes of UTF-8, at a character's end: a VARCHAR's max_length is in
    bytes, and cut to that many characters a passage in Chinese (3 bytes a character) was three times
    too long, which a Milvus server refuses (Milvus Lite stores it)."""
    raw = text.encode("utf-8")
    return text if len(raw) <= limit else raw[:limit].decode("utf-8", "ignore")


def _row(passage: Passage, vector: np.ndarray) -> dict[str, Any]:
    text, title, url = _row_fields(passage)
    return {"id": passage.doc_id, "doc_id": document_of(passage.doc_id), "title": title, "url": url, "text": text,
            "dense": vector.astype(np.float32).tolist()}


def _hits(raw: list[dict[str, Any]], mode: str) -> list[Hit]:
    """Milvus results as :class:`Hit` values, in the engine's order, with higher-is-better scores.

    BM25 scores are never negative, yet Milvus Lite reports them negated (as a
    distance, best first); such scores are flipped so every backend's hits read
    the same way.
    """
    flip = mode == "bm25" and any(float(h["distance"]) < 0 for h in raw)
    return [
        Hit(
            str(h["id"]),
            -float(h["distance"]) if flip else float(h["distance"]),
            _passage_text(h["entity"].get("text", ""), h["entity"].get("title", "")),
            h["entity"].get("title", ""),
            h["entity"].get("url", ""),
            rank,
        )
        for rank, h in enumerate(raw, start=1)
    ]


def _of_documents(documents: set[str]) -> str:
    """A Milvus filter for the passages of ``documents`` (the document part of their ids)."""
    return f"doc_id in {json.dumps(sorted(documents), ensure_ascii=False)}"


def _passage(row: dict[str, Any]) -> Passage:
    return Passage(str(row["id"]), _passage_text(row["text"], row["title"]), row["title"], row["url"])


def _passage_text(stored: str, title: str) -> str:
    """The passage's text as the embedded backend returns it: the stored text is what the analyzer
    reads (:attr:`Passage.searchable_text`, headed by the title), and a hit showed the title twice."""
    head = f"{title}\n"
    return stored[len(head):] if title and stored.startswith(head) else stored


class MilvusRetriever:
    """A Milvus collection behind the :class:`convrag.retrieve.Retriever` interface."""

    def __init__(self, collection: MilvusCollection, mode: str = "hybrid", embedder: Embedder | None = None) -> None:
        if mode not in MODES:
            raise ConfigError(f"unknown Milvus search mode {mode!r}; expected one of {', '.join(MODES)}")
        self.collection, self.name, self.embedder = collection, mode, embedder

    def search(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        return self.collection.search(queries, k, self.name, self.embedder)


def _check_passages(passages: Iterable[Passage]) -> None:
    seen: set[str] = set()
    for passage in passages:
        if not passage.doc_id or len(passage.doc_id.encode("utf-8")) > 512:  # max_length counts bytes
            raise CollectionError(f"passage id {passage.doc_id[:40]!r} is empty or longer than 512 bytes of UTF-8")
        if passage.doc_id in seen:
            raise CollectionError(f"duplicate passage id {passage.doc_id!r} in the batch to ingest")
        seen.add(passage.doc_id)


def milvus_searches(store: MilvusStore, names: Sequence[str], mode: str = "hybrid", k: int = 10) -> list[CollectionSearch]:
    """A pipeline's collections in Milvus (``ask``, ``chat``), each searched by Milvus in ``mode``.

    Collections embedded with one model share one query embedder, so a turn's queries are embedded
    once, as with the embedded backend. Routing scores each collection by its nearest stored vectors
    (:meth:`MilvusCollection.top_cosines`), as it scores an embedded one by its dense index; ``bm25``
    embeds nothing, so it searches every collection. Milvus searches what is stored when the
    query comes, so a collection synced during a chat is searched as it is without reopening."""
    from ..retrieve.multi import CollectionSearch, SharedQueryEmbedder, shared_embedder

    shared: dict[str, SharedQueryEmbedder] = {}
    out = []
    for name in names:
        collection = store.open(name)
        embedder = shared_embedder(shared, collection.info.embedding_model) if mode != "bm25" else None
        out.append(CollectionSearch(name, MilvusRetriever(collection, mode, embedder), embedder, k,
                                    cosines=collection.top_cosines if embedder is not None else None))
    return out
