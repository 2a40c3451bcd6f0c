"""The service's collections as folders of embedded BM25 and dense indexes (the default)."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from ...embeddings import Embedder
from ...errors import CollectionDamaged, CollectionError, ConvragError
from ...index.collection import CURRENT_FILE, Collection, CollectionStore, link_collection, live_version
from ...index.manifest import Manifest
from ...index.windows import WindowSettings
from ...llm.base import LLM
from ...pipeline import Pipeline, PipelineSpec, build_pipeline
from ...progress import Reporter
from ...types import Passage, document_of
from . import Built, Holding, StoredPassages


def job_source(job_id: str) -> str:
    return f"job:{job_id}"


class EmbeddedCollections:
    """Collections as folders of BM25 and dense indexes under ``root``, each version built aside and
    switched to atomically (:mod:`convrag.index.collection`). ``indexed``: the folder ``convrag index``
    builds collections in (its ``--store``), whose collections are taken on when created by name."""

    kind = "embedded"

    def __init__(self, root: Path, indexed: Path | None = None) -> None:
        self.store = CollectionStore(root)
        self.root = self.store.root
        self.indexed = CollectionStore(indexed) if indexed is not None else None
        self._opened: dict[str, Collection] = {}
        self._lock = threading.Lock()

    def built(self) -> list[str]:
        return self.store.names()

    def version(self, name: str) -> str | None:
        return live_version(self.root / name)

    def holding(self, name: str) -> Holding:
        version = self.version(name)
        if version is None:
            return Holding(0, None)
        try:
            return Holding(Manifest.read(self.root / name / version).passage_count, version)
        except (ConvragError, OSError) as exc:
            return Holding(0, version, str(exc))

    def passage(self, name: str, passage_id: str) -> Passage | None:
        """Opened once per version (opening reads every passage)."""
        version = self.version(name)
        if version is None:
            return None
        with self._lock:
            opened = self._opened.get(name)
            if opened is None or opened.version_dir.name != version:
                opened = self._opened[name] = self.store.open(name)
        return next((p for p in opened.passages if p.doc_id == passage_id), None)

    def passages_of(self, name: str, documents: set[str]) -> list[Passage]:
        if self.version(name) is None:
            return []
        return [p for p in self.store.open(name).passages if document_of(p.doc_id) in documents]

    def taken(self, name: str) -> bool:
        return self.store.path(name).exists()

    def _indexed_path(self, name: str) -> Path | None:
        """Where ``convrag index`` keeps collection ``name`` for this service to take on; None without
        an ``indexed`` store, or where that store is this service's own folder."""
        if self.indexed is None:
            return None
        source = self.indexed.path(name)
        return None if source.resolve() == self.store.path(name).resolve() else source

    def made_elsewhere(self, name: str) -> str | None:
        """A collection of ``indexed`` with an index, where the service has no folder of that name (one
        here is the service's own, which a cut-off delete left: never taken on again): its model."""
        source = self._indexed_path(name)
        if source is None or self.taken(name) or not source.is_dir():
            return None
        version = live_version(source)
        if version is None:  # not made anew and empty under its name, which would hide it once built
            raise CollectionError(f"collection {name!r} that `convrag index` builds has no index yet (its first build is "
                                  "running, or was cut off: run it again); create it when the build has finished, or "
                                  "choose another name")
        try:
            model = Manifest.read(source / version).embedding_model
        except (ConvragError, OSError):
            return None
        if model is None:  # not made anew and empty under its name, which would hide it
            raise CollectionError(f"collection {name!r} that `convrag index` built has no dense index (--no-dense), "
                                  "which the service searches too: index it again without --no-dense, or choose another name")
        return model

    def take_on(self, name: str) -> list[Passage]:
        """The collection of ``indexed`` linked in as this folder's (see :func:`link_collection`)."""
        source = self._indexed_path(name)
        assert source is not None, "made_elsewhere found nothing to take on"
        target = self.store.path(name, new=True)
        try:
            return link_collection(source, target).passages
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise

    def indexed_version(self, name: str) -> str | None:
        source = self._indexed_path(name)
        return live_version(source) if source is not None else None

    def indexed_passages(self, name: str) -> tuple[str | None, list[Passage]]:
        source = self._indexed_path(name)
        if source is None or live_version(source) is None:
            raise CollectionError(f"`convrag index` has built no collection {name!r} for the service to take on")
        built = Collection.open(source)
        return built.manifest.embedding_model, built.passages

    def keep(self, names: list[str]) -> None:
        pass  # the service's folder is its own: `convrag index` refuses it (CollectionStore.writable)

    def delete(self, name: str) -> None:
        with self._lock:
            self._opened.pop(name, None)
        shutil.rmtree(self.store.path(name), ignore_errors=True)

    def apply(self, name: str, job_id: str, new: list[Passage], replaced: set[str], embedder: Embedder,
              reporter: Reporter, stored: StoredPassages) -> Built:
        """A new version of the previous passages (their vectors reused) with ``new`` in place of the
        ``replaced`` documents'. A passage file that cannot be read is rebuilt from ``stored``."""
        path = self.root / name
        reread = False
        try:
            existing = Collection.open(path) if live_version(path) is not None else None
            kept = [p for p in (existing.passages if existing else []) if document_of(p.doc_id) not in replaced]
        except CollectionDamaged:
            existing, reread = None, True
            with reporter.stage("reading the collection's documents again", total=None):
                kept = stored(replaced)
        if not kept and not new:  # the last documents were deleted: no index until the next upload
            clear_collection(path)
            return Built(0, reread)
        collection = Collection.build(path, kept + new, name=name, embedder=embedder, source=job_source(job_id), reuse=existing,
                                      reporter=reporter, force=True, windows=WindowSettings())
        return Built(len(collection.passages), reread)

    def applied(self, name: str, job_id: str) -> bool | None:
        path = self.root / name
        if live_version(path) is None:
            return False
        try:
            return Collection.open(path).manifest.source == job_source(job_id)
        except ConvragError:
            return False

    def pipeline(self, spec: PipelineSpec, llm: LLM) -> Pipeline:
        return build_pipeline(spec, llm=llm, store=self.root)

    def close(self) -> None:
        pass


def clear_collection(path: Path) -> None:
    """Take a collection's index away (no documents left): ``CURRENT`` goes first, atomically, so
    a reader sees either the old index or none."""
    current = path / CURRENT_FILE
    if current.exists():
        current.unlink()
    for child in path.iterdir() if path.is_dir() else ():
        if child.is_dir():
            shutil.rmtree(child, ignore_errors=True)
