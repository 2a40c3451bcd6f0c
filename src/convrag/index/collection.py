"""A collection: a named corpus with its BM25 and dense indexes, stored in one folder.

Layout of a collection folder::

    CURRENT                  name of the live version folder (replaced atomically)
    v<time>-<hash>/          one complete build: manifest.json, passages.jsonl, bm25/, dense/
    .staging/<key>/          embedding shards of a build in progress (for resuming)

A build writes a new version folder aside and only then switches ``CURRENT`` to
it, so a crash at any point leaves the previous version in use. Building the
same corpus with the same settings again is a no-op.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, replace
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

import numpy as np
from filelock import FileLock, Timeout

from .. import __version__
from ..embeddings import Embedder
from ..errors import CollectionDamaged, CollectionError, CollectionReplaced
from ..progress import SILENT, Reporter
from ..types import Passage
from .atomic import atomic_open, fsync_dir, write_json, write_text
from .bm25 import BM25Index, BM25Params
from .dense import DenseIndex, embed_resumable
from .manifest import MANIFEST_FILE, Manifest, corpus_sha256
from .windows import WindowSettings, window_plan

#: what numpy, json and bm25s raise for an index file that is truncated or holds something else
_UNREADABLE = (ValueError, EOFError, OSError, KeyError, TypeError, IndexError, pickle.UnpicklingError)

CURRENT_FILE = "CURRENT"
PASSAGES_FILE = "passages.jsonl"
STAGING_DIR = ".staging"
PROBE_TOLERANCE = 0.02
#: how often :meth:`Collection.open` reads ``CURRENT`` again when builds keep replacing the version it reads
OPEN_ATTEMPTS = 5


class Collection:
    """An opened, immutable version of a collection. Indexes load lazily on first use."""

    def __init__(self, path: Path, version_dir: Path, manifest: Manifest, passages: list[Passage]) -> None:
        self.path = path
        self.version_dir = version_dir
        self.manifest = manifest
        self.passages = passages

    @property
    def name(self) -> str:
        return self.manifest.name

    def __len__(self) -> int:
        return len(self.passages)

    def __repr__(self) -> str:
        return f"Collection({self.name!r}, {len(self)} passages, embedding={self.manifest.embedding_model!r})"

    @cached_property
    def bm25(self) -> BM25Index:
        with self._loading("BM25"):
            index = BM25Index.load(self.version_dir / "bm25")
        if index.size != len(self.passages):
            raise CollectionDamaged(f"collection {self.name!r}: its BM25 index holds {index.size} passages, the collection "
                                    f"{len(self.passages)}; rebuild it")
        return index

    @cached_property
    def dense(self) -> DenseIndex:
        if self.manifest.embedding_model is None:
            raise CollectionError(f"collection {self.name!r} was built without embeddings; rebuild it with an embedding model")
        with self._loading("dense"):
            index = DenseIndex.load(self.version_dir / "dense", mmap=True)
        if index.size != len(self.passages) or index.dimension != self.manifest.embedding_dimension:
            raise CollectionDamaged(
                f"collection {self.name!r}: embeddings are {index.size}x{index.dimension}, manifest says "
                f"{len(self.passages)}x{self.manifest.embedding_dimension}; rebuild it"
            )
        expected = (self.manifest.dense_windows or {}).get("count", 0)
        if (index.owners is None and expected) or (index.owners is not None and len(index.owners) != expected):
            raise CollectionDamaged(f"collection {self.name!r}: the window embeddings do not match the manifest; rebuild it")
        return index

    @contextmanager
    def _loading(self, index: str) -> Iterator[None]:
        """Name what an index file that cannot be read means. A newer build publishes and then removes
        the version before it, so a reader that opened this version and loads an index only now can
        find it gone: :class:`CollectionReplaced` (the collection is fine; open it again). Any other
        missing or unreadable file is a damaged collection (:class:`CollectionDamaged`), said as one
        line naming the index (and the file within the collection where known), where the index
        libraries raised whatever their parser met first. Retrievers load their index when they are
        made, which keeps the first window short."""
        try:
            yield
        except FileNotFoundError as exc:
            if live_version(self.path) != self.version_dir.name:
                raise CollectionReplaced(
                    f"collection {self.name!r} was rebuilt after it was opened (its version {self.version_dir.name} "
                    f"is gone); open it again"
                ) from None
            raise CollectionDamaged(f"collection {self.name!r}: {self._file(exc.filename)} is missing; rebuild the collection") from None
        except _UNREADABLE as exc:
            where = f"{self._file(exc.filename)} " if getattr(exc, "filename", None) else ""
            # the libraries' own words are not repeated: numpy's, for one, suggests loading the file "unsafely"
            raise CollectionDamaged(f"collection {self.name!r}: its {index} index {where}is damaged or unreadable "
                                    f"({type(exc).__name__}); rebuild the collection") from None

    def intact(self, bm25: bool = True) -> bool:
        """Whether this version's indexes load (its dense one, and with ``bm25`` its BM25 one). A build
        checks the version it would keep, or take vectors from, so that building again repairs damage
        instead of keeping it (an identical corpus is otherwise a no-op)."""
        try:
            if bm25:
                self.bm25  # noqa: B018 (loading is the check)
            if self.manifest.embedding_model is not None:
                self.dense  # noqa: B018
        except CollectionDamaged:
            return False
        return True

    def _file(self, filename: object) -> str:
        """A file of this collection named from the collection's folder, not the host's root."""
        try:
            return str(Path(str(filename)).relative_to(self.path))
        except ValueError:
            return Path(str(filename)).name

    def check_embedder(self, embedder: Embedder) -> None:
        """Refuse to search with a model other than the one the passages were embedded with."""
        manifest = self.manifest
        if manifest.embedding_model is None:
            raise CollectionError(f"collection {self.name!r} has no dense index")
        if embedder.name != manifest.embedding_model or embedder.dimension != manifest.embedding_dimension:
            raise CollectionError(
                f"collection {self.name!r} was embedded with {manifest.embedding_model} "
                f"({manifest.embedding_dimension}-d); the query model is {embedder.name} ({embedder.dimension}-d). "
                f"Use the same model, or rebuild the collection with --embedding-model {embedder.name}"
            )
        if manifest.embedding_probe:
            probe = np.asarray(embedder.probe())
            stored = np.asarray(manifest.embedding_probe)
            if probe.shape != stored.shape or float(np.max(np.abs(probe - stored))) > PROBE_TOLERANCE:
                raise CollectionError(
                    f"collection {self.name!r}: the model named {embedder.name} gives different embeddings than "
                    f"the one that built the index (different weights under the same name); rebuild the collection"
                )

    def bm25_index(self, params: BM25Params) -> BM25Index:
        """This collection's passages indexed by BM25 with ``params``, in memory (nothing written)."""
        return _bm25_of(self.passages, params)

    def with_bm25(self, params: BM25Params, reporter: Reporter = SILENT) -> Collection:
        """This collection with its BM25 index rebuilt with ``params``, as a new version switched to
        like a build (a crash leaves this one live). The passages and the dense index are carried
        over (hard links where the file system allows), so a change of BM25's weights never
        re-embeds a passage. Unchanged weights return this collection."""
        if self.manifest.bm25 == asdict(params):
            return self
        with _writing(self.path, self.name, reporter):
            return self._rebuilt_bm25(params, reporter)

    def _rebuilt_bm25(self, params: BM25Params, reporter: Reporter) -> Collection:
        """:meth:`with_bm25`'s work, for a caller that holds the collection's write lock."""
        started = time.perf_counter()
        version = _version_name(self.manifest.corpus_sha256)
        with _staging(self.path, version) as building:
            shutil.copytree(self.version_dir, building, ignore=shutil.ignore_patterns("bm25", MANIFEST_FILE),
                            copy_function=_link_or_copy)
            with reporter.stage(f"{self.name}: BM25 index", total=None):
                self.bm25_index(params).save(building / "bm25")
            manifest = replace(self.manifest, bm25=asdict(params), created=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                               convrag_version=__version__,
                               build_seconds=round((self.manifest.build_seconds or 0.0) + time.perf_counter() - started, 2))
            write_json(building / MANIFEST_FILE, manifest.to_json())
            final = _publish(self.path, building, version)
        return type(self)(self.path, final, manifest, self.passages)

    @classmethod
    def open(cls, path: Path | str, expected_corpus_sha256: str | None = None) -> Collection:
        """Open the live version of the collection at ``path``. A build that publishes while this
        reads removes the version being read; the version then named by ``CURRENT`` is read instead."""
        path = Path(path)
        if not (path / CURRENT_FILE).exists():
            raise CollectionError(f"{path} is not a convrag collection (no {CURRENT_FILE} file); build it with `convrag index`")
        for _ in range(OPEN_ATTEMPTS - 1):
            version = live_version(path)
            try:
                return cls._open_version(path, version or "", expected_corpus_sha256)
            except CollectionError:
                if live_version(path) == version:
                    raise
        return cls._open_version(path, live_version(path) or "", expected_corpus_sha256)

    @classmethod
    def _open_version(cls, path: Path, version: str, expected_corpus_sha256: str | None) -> Collection:
        version_dir = path / version
        try:
            if not version:
                raise CollectionDamaged(f"{CURRENT_FILE} is empty")
            if not version_dir.is_dir():
                raise CollectionDamaged(f"{CURRENT_FILE} names {version_dir.name}, which is missing")
            manifest = Manifest.read(version_dir)
            if expected_corpus_sha256 is not None and manifest.corpus_sha256 != expected_corpus_sha256:
                raise CollectionError(
                    f"collection {manifest.name!r} at {path} was built from a different corpus than the one given "
                    f"(corpus hash {manifest.corpus_sha256[:12]} vs {expected_corpus_sha256[:12]}); rebuild it (--rebuild)"
                )
            passages = _read_passages(version_dir / PASSAGES_FILE)
            if len(passages) != manifest.passage_count:
                raise CollectionDamaged(f"{len(passages)} passages on disk, manifest says {manifest.passage_count}")
        except CollectionDamaged as exc:  # named by the collection and its own files, not the host's folders
            raise CollectionDamaged(f"collection {path.name!r}: {exc}; rebuild the collection") from None
        return cls(path, version_dir, manifest, passages)

    @classmethod
    def build(
        cls,
        path: Path | str,
        passages: Iterable[Passage],
        *,
        name: str | None = None,
        embedder: Embedder | None = None,
        bm25_params: BM25Params = BM25Params(),
        source: str = "",
        force: bool = False,
        reporter: Reporter = SILENT,
        reuse: Collection | None = None,
        windows: WindowSettings | None = None,
    ) -> Collection:
        """Build (or reuse, if identical) the collection at ``path`` from ``passages``.

        ``embedder=None`` builds BM25 only. The previous version stays live until
        the new one is complete. ``reuse``: a collection embedded with the same model whose
        vectors are taken for passages it already holds (same id and text), so adding a few
        documents to a large collection embeds only the new passages; without it, the live version at
        ``path`` serves where its model and weights are the embedder's (not with ``force``, which embeds
        every passage). ``windows``: also embed
        the further windows of passages longer than the model reads (see :mod:`.windows`).
        """
        path = Path(path)
        passages = list(passages)
        if not passages:
            raise CollectionError(f"cannot build collection at {path}: the corpus is empty")
        _check_unique_ids(passages)
        name = name or path.name
        path.mkdir(parents=True, exist_ok=True)
        with _writing(path, name, reporter):
            return cls._build(path, passages, name, embedder, bm25_params, source, force, reporter, reuse, windows)

    @classmethod
    def _build(cls, path: Path, passages: list[Passage], name: str, embedder: Embedder | None, bm25_params: BM25Params,
               source: str, force: bool, reporter: Reporter, reuse: Collection | None, windows: WindowSettings | None) -> Collection:
        """:meth:`build`'s work, under the collection's write lock."""
        digest = corpus_sha256(passages)
        model = embedder.name if embedder is not None else None

        existing = None
        if not force and (path / CURRENT_FILE).exists():
            try:
                existing = cls.open(path)
            except CollectionError:
                existing = None
            if (
                existing is not None
                and existing.intact()  # a damaged version is built again, not kept: building repairs it
                and existing.manifest.corpus_sha256 == digest
                and existing.manifest.embedding_model == model
                and existing.name == name
                and _window_settings(existing.manifest) == (windows if embedder is not None else None)
            ):
                # itself when the weights are the same
                return existing if existing.manifest.bm25 == asdict(bm25_params) else existing._rebuilt_bm25(bm25_params, reporter)
        if reuse is None and existing is not None and embedder is not None and existing.manifest.embedding_model is not None:
            # a corpus that changed (a folder indexed again after one file was edited): the passages the
            # live version holds keep their vectors, where every passage was embedded again
            try:
                existing.check_embedder(embedder)
                reuse = existing
            except CollectionError:  # another model, or other weights under its name: all embedded anew
                pass
        if reuse is not None and not reuse.intact(bm25=False):
            with reporter.stage(f"{name}: the vectors of the version to reuse cannot be read; embedding every passage"):
                reuse = None

        started = time.perf_counter()
        version = _version_name(digest)
        with _staging(path, version) as building:
            building.mkdir()
            with atomic_open(building / PASSAGES_FILE) as handle:
                for passage in passages:
                    handle.write((json.dumps(passage._asdict(), ensure_ascii=False) + "\n").encode("utf-8"))
            with reporter.stage(f"{name}: BM25 index", total=None):
                _bm25_of(passages, bm25_params).save(building / "bm25")
            probe = None
            window_info: dict[str, int] | None = None
            if embedder is not None:
                dense = embed_passages(path, passages, embedder, name=name, reuse=reuse, windows=windows, reporter=reporter)
                if windows is not None and dense.owners is not None:
                    window_info = {**windows.to_json(), "count": len(dense.owners)}
                dense.save(building / "dense")
                probe = embedder.probe()
            manifest = Manifest(
                name=name,
                passage_count=len(passages),
                corpus_sha256=digest,
                created=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                convrag_version=__version__,
                bm25=asdict(bm25_params),
                embedding_model=model,
                embedding_dimension=embedder.dimension if embedder is not None else None,
                embedding_probe=probe,
                source=source,
                build_seconds=round(time.perf_counter() - started, 2),
                dense_windows=window_info,
            )
            write_json(building / MANIFEST_FILE, manifest.to_json())
            final = _publish(path, building, version)
        return cls(path, final, manifest, passages)


def embed_passages(
    path: Path | str,
    passages: Sequence[Passage],
    embedder: Embedder,
    *,
    name: str | None = None,
    reuse: Collection | None = None,
    windows: WindowSettings | None = None,
    reporter: Reporter = SILENT,
) -> DenseIndex:
    """The dense index :meth:`Collection.build` would make for ``passages`` at ``path``.

    Embedding is the slow part of a build, so it goes through the collection's resumable staging
    shards (``path/.staging/``), which only a completed build removes. Calling this alone embeds a
    corpus and leaves its shards in place: that is how a corpus is embedded on a faster machine
    (a GPU) and its shards copied into the same collection folder here, where ``build`` then
    finds every shard done and embeds nothing (``tools/embed_shards.py``).
    """
    path = Path(path)
    passages = list(passages)
    name = name or path.name
    digest = corpus_sha256(passages)
    texts = [p.searchable_text for p in passages]
    staging = staging_dir(path, digest, embedder.name)
    vectors, todo = _reused_vectors(passages, reuse, embedder)
    with reporter.stage(f"{name}: embedding {len(todo)} passages", total=len(todo)) as advance:
        fresh = embed_resumable(
            [texts[i] for i in todo],
            embedder,
            staging,
            {"corpus_sha256": digest, "model": embedder.name, "reused": len(passages) - len(todo)},
            progress=advance,
        )
    if len(todo):
        vectors[todo] = fresh
    if windows is None:
        return DenseIndex(vectors)
    window_vectors, owners = _window_vectors(passages, embedder, windows, reuse, staging, digest, reporter, name)
    return DenseIndex(vectors, window_vectors, owners)


def staging_dir(path: Path | str, corpus_digest: str, model: str) -> Path:
    """Where a build of the corpus with hash ``corpus_digest`` keeps its passage shards for ``model``
    (its windows' shards sit beside it, with ``-windows`` appended)."""
    return Path(path) / STAGING_DIR / f"{corpus_digest[:16]}-{_slug(model)}"


def _window_settings(manifest: Manifest) -> WindowSettings | None:
    info = manifest.dense_windows
    return WindowSettings(info["size"], info["stride"]) if info else None


def _window_vectors(
    passages: Sequence[Passage], embedder: Embedder, settings: WindowSettings, reuse: Collection | None, staging: Path,
    digest: str, reporter: Reporter, name: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Every extra window's vector and owner; windows of passages ``reuse`` already holds with the
    same window settings are taken from it, the others embedded (resumable, like the passages)."""
    texts, owners = window_plan(passages, embedder.tokenizer, settings)
    vectors = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
    known: dict[tuple[str, str], np.ndarray] = {}
    if reuse is not None and _window_settings(reuse.manifest) == settings and reuse.manifest.embedding_model == embedder.name:
        old = reuse.dense
        if old.windows is not None and old.owners is not None:
            for position in np.unique(old.owners):
                p = reuse.passages[int(position)]
                known[(p.doc_id, p.searchable_text)] = np.asarray(old.windows[old.owners == position])
    todo: list[int] = []
    start = 0
    for position in np.unique(owners) if len(owners) else []:
        count = int((owners == position).sum())
        p = passages[int(position)]
        old_rows = known.get((p.doc_id, p.searchable_text))
        if old_rows is not None and len(old_rows) == count:
            vectors[start : start + count] = old_rows
        else:
            todo.extend(range(start, start + count))
        start += count
    with reporter.stage(f"{name}: embedding {len(todo)} extra windows of long passages", total=len(todo)) as advance:
        fresh = embed_resumable([texts[i] for i in todo], embedder, staging.with_name(staging.name + "-windows"),
                                {"corpus_sha256": digest, "model": embedder.name, "windows": settings.to_json()}, progress=advance)
    if todo:
        vectors[todo] = fresh
    return vectors, owners


def live_version(path: Path) -> str | None:
    """The live version folder named by ``path/CURRENT``; None when the collection has no index yet."""
    try:
        return (Path(path) / CURRENT_FILE).read_text().strip() or None
    except FileNotFoundError:
        return None


def _reused_vectors(passages: Sequence[Passage], reuse: Collection | None, embedder: Embedder) -> tuple[np.ndarray, list[int]]:
    """A matrix with the rows ``reuse`` already has for identical passages, and the positions still to embed."""
    vectors = np.zeros((len(passages), embedder.dimension), dtype=np.float32)
    if reuse is None or reuse.manifest.embedding_model != embedder.name or reuse.manifest.embedding_dimension != embedder.dimension:
        return vectors, list(range(len(passages)))
    known = {(p.doc_id, p.searchable_text): row for row, p in enumerate(reuse.passages)}
    todo = []
    for i, p in enumerate(passages):
        row = known.get((p.doc_id, p.searchable_text))
        if row is None:
            todo.append(i)
        else:
            vectors[i] = reuse.dense.embeddings[row]
    return vectors, todo


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)[-60:]


def _check_unique_ids(passages: Sequence[Passage]) -> None:
    seen: set[str] = set()
    for passage in passages:
        if passage.doc_id in seen:
            raise CollectionError(f"duplicate passage id {passage.doc_id!r} in the corpus")
        seen.add(passage.doc_id)


def _read_passages(path: Path) -> list[Passage]:
    try:
        with open(path, encoding="utf-8") as handle:
            return [Passage(**json.loads(line)) for line in handle if line.strip()]
    except FileNotFoundError:
        raise CollectionDamaged(f"{path.parent.name}/{path.name} is missing") from None
    except (json.JSONDecodeError, TypeError, UnicodeDecodeError) as exc:
        raise CollectionDamaged(f"{path.parent.name}/{path.name} is corrupt ({exc})") from None


def _bm25_of(passages: Sequence[Passage], params: BM25Params) -> BM25Index:
    return BM25Index.build([p.searchable_text for p in passages], params)


#: the file whose lock a build or a BM25 rebuild holds, in the collection's folder
WRITE_LOCK = ".write.lock"


@contextmanager
def _writing(path: Path, name: str, reporter: Reporter) -> Iterator[None]:
    """Hold the collection's write lock (the operating system's, via ``filelock``: a crashed process
    holds nothing) while a new version is built and published. Two builds of one collection at once
    each cleared the other's folders as stale and both said they had finished, leaving a version
    with only its manifest; a second build now waits for the first, then finds its result (and
    returns it when the corpus is the same)."""
    lock = FileLock(path / WRITE_LOCK, thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        with reporter.stage(f"{name}: waiting for another build of this collection to finish", total=None):
            lock.acquire()
    try:
        yield
    finally:
        lock.release()


@contextmanager
def _staging(path: Path, version: str) -> Iterator[Path]:
    """The folder a new version is built in (``.tmp-<version>``, not yet created, any leftover of it
    removed); removed again if the build fails or is interrupted, so only :func:`_publish` makes it live."""
    building = path / f".tmp-{version}"
    shutil.rmtree(building, ignore_errors=True)
    try:
        yield building
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise


def _version_name(corpus_digest: str) -> str:
    return f"v{time.strftime('%Y%m%d%H%M%S')}-{corpus_digest[:8]}-{uuid.uuid4().hex[:8]}"


def _publish(path: Path, building: Path, version: str) -> Path:
    """Make the complete build in ``building`` the live version ``version``: renamed into place, then
    named by ``CURRENT`` (one atomic write), then the versions before it removed."""
    final = path / version
    os.replace(building, final)
    fsync_dir(path)
    write_text(path / CURRENT_FILE, version + "\n")
    _remove_stale(path, keep=version)
    return final


def _link_or_copy(source: str, target: str) -> str:
    """A hard link to an immutable version's file (no bytes copied), or a copy where links fail."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
    return target


def link_collection(source: Path | str, target: Path | str, reporter: Reporter = SILENT) -> Collection:
    """Make ``target`` a collection whose live version is ``source``'s, its files hard-linked (copied
    where links fail), and open it. A published version never changes and a build makes a new one,
    so neither collection's later builds touch the other's files: how the service takes on a
    collection ``convrag index`` built, without embedding it again or sharing a folder with it.
    A version ``source`` replaces while it is linked is linked again as the one then live."""
    source, target = Path(source), Path(target)
    target.mkdir(parents=True, exist_ok=True)
    with _writing(target, target.name, reporter):
        for attempt in range(OPEN_ATTEMPTS):
            version = live_version(source)
            if version is None:
                raise CollectionError(f"collection {source.name!r} has no index; build it with `convrag index`")
            try:
                with _staging(target, version) as building:
                    shutil.copytree(source / version, building, copy_function=_link_or_copy)
                    _publish(target, building, version)
                break
            except (FileNotFoundError, shutil.Error):  # named by the collection, not the host's folders
                if live_version(source) == version or attempt == OPEN_ATTEMPTS - 1:
                    raise CollectionDamaged(f"collection {source.name!r}: its files cannot be read; "
                                            "rebuild it with `convrag index`") from None
    linked = Collection.open(target)
    if not linked.intact():
        raise CollectionDamaged(f"collection {source.name!r}: its indexes cannot be read; rebuild it with `convrag index`")
    return linked


def _remove_stale(path: Path, keep: str) -> None:
    """Delete versions other than the live one, abandoned temporary builds, and finished staging."""
    for child in path.iterdir():
        if child.name in (keep, CURRENT_FILE):
            continue
        if child.is_dir() and (child.name.startswith("v") or child.name.startswith(".tmp-") or child.name == STAGING_DIR):
            shutil.rmtree(child, ignore_errors=True)


#: what a new collection may be called, from the command line or the service: a name that is a folder
#: name and a URL path part as it is, and that a comma-separated list (``-c a,b``) can hold
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


class CollectionInfo(NamedTuple):
    """One collection as ``convrag collections`` lists it, read from its manifest (the passages and
    indexes are not loaded, so listing a store of large collections is instant)."""

    name: str
    passages: int | None
    embedding_model: str | None
    #: extra dense windows of passages longer than the model reads (0 without)
    windows: int
    source: str
    built: str
    bytes: int
    #: why it cannot be searched (no index yet, a damaged manifest); None when it can
    problem: str | None = None


class CollectionStore:
    """A folder of named collections (one sub-folder each)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def path(self, name: str, new: bool = False) -> Path:
        """The folder of collection ``name``. A ``new`` collection's name must match :data:`NAME`; an
        existing one only has to stay inside the store (one made before the rule keeps working)."""
        if not name or "/" in name or "\\" in name or name.startswith(".") or (
                new and not NAME.fullmatch(name) and not (self.root / name).is_dir()):
            raise CollectionError(f"invalid collection name {name!r} (use letters, digits, '-' or '_'; at most 64)")
        return self.root / name

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if (p / CURRENT_FILE).exists())

    def version(self, name: str) -> str | None:
        """The name of the collection's live version folder; None when it has no index yet."""
        return live_version(self.path(name))

    def open(self, name: str) -> Collection:
        path = self.path(name)
        if not (path / CURRENT_FILE).exists():
            known = ", ".join(self.names()) or "none"
            raise CollectionError(f"unknown collection {name!r} in {self.root} (known: {known})")
        return Collection.open(path)

    def folders(self) -> list[str]:
        """Every collection folder, built or not (a first build that was interrupted has no
        ``CURRENT`` yet; running it again resumes it)."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))

    def info(self, name: str) -> CollectionInfo:
        path = self.path(name)
        size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())
        version = live_version(path)
        if version is None:
            return CollectionInfo(name, None, None, 0, "", "", size, "no index yet (a build did not finish; index it again)")
        try:
            m = Manifest.read(path / version)
        except CollectionDamaged as exc:
            return CollectionInfo(name, None, None, 0, "", "", size, f"damaged: {exc}; index it again")
        except CollectionError as exc:  # a format this convrag does not read
            return CollectionInfo(name, None, None, 0, "", "", size, str(exc))
        return CollectionInfo(m.name, m.passage_count, m.embedding_model, (m.dense_windows or {}).get("count", 0), m.source,
                              m.created, size, None)

    def writable(self, name: str) -> Path:
        """The folder ``convrag index`` builds collection ``name`` in, refusing a convrag service's
        store: a build makes a collection hold exactly the corpus it is given, which would drop the
        documents uploaded to it while the service's database still lists them (and a new folder
        there, without a record, would block the name in the service)."""
        path = self.path(name, new=True)
        if self.served():
            raise CollectionError(f"{self.root} holds a convrag service's collections; add documents to {name!r} in its "
                                  f"web chat or with POST /api/collections/{name}/documents, so that its database knows "
                                  "them (or index into another --store, and create the collection by name in the service "
                                  "to take it on)")
        return path

    def served(self) -> bool:
        """Whether this is a convrag service's store (its database beside it records the collections)."""
        return (self.root.parent / SERVICE_DATABASE).exists()

    def deletable(self, name: str) -> Path:
        """The folder of collection ``name``, refusing one that is not there, or a convrag
        service's (its database records the collection too). Asked before a user is asked to confirm."""
        path = self.path(name)
        if not path.is_dir():
            known = ", ".join(self.folders()) or "none"
            raise CollectionError(f"unknown collection {name!r} in {self.root} (known: {known})")
        if self.served():
            raise CollectionError(f"{self.root} holds a convrag service's collections; delete {name!r} in its web chat or "
                                  f"with DELETE /api/collections/{name}, so that its database forgets it too")
        return path

    def delete(self, name: str) -> None:
        """Remove a collection: ``CURRENT`` first (readers then find no collection rather than half
        of one), then its folder. Refused as :meth:`deletable` says, and while a build of it runs
        (it holds the write lock)."""
        path = self.deletable(name)
        lock = FileLock(path / WRITE_LOCK, thread_local=False)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            raise CollectionError(f"collection {name!r} is being built; delete it when the build ends") from None
        try:
            (path / CURRENT_FILE).unlink(missing_ok=True)
            fsync_dir(path)
            shutil.rmtree(path)
        finally:
            lock.release()


#: the database a convrag service keeps beside its ``collections`` folder (service/store.py)
SERVICE_DATABASE = "convrag.sqlite"
