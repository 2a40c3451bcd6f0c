"""Where the service keeps its collections: folders of embedded indexes (the default), or Milvus
(Milvus Lite in the data folder, or a Milvus server shared by several services).

Both answer the same questions for the rest of the service: which collections can be searched,
what a collection holds, one passage by id, building an indexing job's result into a collection,
deleting one, and the pipeline over some of them. The database (documents, jobs, conversations)
and the uploaded files stay in the data folder either way.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple, Protocol

from ..embeddings import Embedder
from ..errors import CollectionDamaged, ConvragError
from ..index.collection import CURRENT_FILE, Collection, CollectionStore, live_version
from ..index.manifest import Manifest
from ..index.windows import WindowSettings
from ..llm.base import LLM
from ..pipeline import Pipeline, PipelineSpec, build_pipeline
from ..progress import Reporter
from ..types import Passage, document_of


class Built(NamedTuple):
    """What an indexing job made of a collection: how many passages it holds now, and whether its
    earlier passages had to be read again from the uploaded files (a damaged passage file)."""

    passages: int
    reread: bool = False


class Holding(NamedTuple):
    """A collection as its info shows it: passages held, the version searched (None: nothing
    indexed yet, or a backend without versions), and why it cannot be searched."""

    passages: int
    version: str | None
    problem: str | None = None


#: the passages of a collection's documents other than the given ones, read again from their
#: uploaded files (the indexer's; what repairs an embedded collection whose passage file is damaged)
StoredPassages = Callable[[set[str]], list[Passage]]


class ServiceCollections(Protocol):
    kind: str

    def built(self) -> list[str]:
        """The collections that hold passages (those a question can search)."""

    def version(self, name: str) -> str | None:
        """What a pipeline over ``name`` was built over; None when it holds nothing."""

    def holding(self, name: str) -> Holding: ...

    def passage(self, name: str, passage_id: str) -> Passage | None: ...

    def passages_of(self, name: str, documents: set[str]) -> list[Passage]:
        """The passages of ``documents`` in ``name`` (a job's, when it is recorded after a stop)."""

    def taken(self, name: str) -> bool:
        """Whether something of that name is already there (a new collection may not take it)."""

    def delete(self, name: str) -> None: ...

    def apply(self, name: str, job_id: str, new: list[Passage], replaced: set[str], embedder: Embedder,
              reporter: Reporter, stored: StoredPassages) -> Built:
        """Make ``name`` hold its passages with those of the ``replaced`` documents swapped for ``new``."""

    def applied(self, name: str, job_id: str) -> bool | None:
        """Whether the job's result is live (a job cut off after its switch); None: the backend
        cannot tell, and the job is to be run again."""

    def pipeline(self, spec: PipelineSpec, llm: LLM) -> Pipeline: ...

    def close(self) -> None: ...


def job_source(job_id: str) -> str:
    return f"job:{job_id}"


class EmbeddedCollections:
    """Collections as folders of BM25 and dense indexes under ``root``, each version built aside and
    switched to atomically (:mod:`convrag.index.collection`)."""

    kind = "embedded"

    def __init__(self, root: Path) -> None:
        self.store = CollectionStore(root)
        self.root = self.store.root
        self._opened: dict[str, Collection] = {}

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

    def delete(self, name: str) -> None:
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


class MilvusCollections:
    """Collections in Milvus: Milvus Lite (a file in the data folder) or a Milvus server. Milvus
    searches what is stored when a query comes, so there are no versions: a job writes its new
    passages (upserted) and then deletes the replaced documents' others, so a crash half-way
    leaves every old passage searchable, and the job is run again at the next start."""

    kind = "milvus"

    def __init__(self, uri: str, token: str | None = None) -> None:
        from ..backends.milvus import MilvusStore

        self.uri = uri
        self.milvus = MilvusStore(uri, token)

    def built(self) -> list[str]:
        return [n for n in self.milvus.names() if len(self.milvus.open(n))]

    def version(self, name: str) -> str | None:
        return "milvus" if self.milvus.exists(name) and len(self.milvus.open(name)) else None

    def holding(self, name: str) -> Holding:
        if not self.milvus.exists(name):
            return Holding(0, None)
        try:
            return Holding(len(self.milvus.open(name)), None)
        except ConvragError as exc:
            return Holding(0, None, str(exc))

    def passage(self, name: str, passage_id: str) -> Passage | None:
        if not self.milvus.exists(name):
            return None
        return self.milvus.open(name).passage(passage_id)

    def passages_of(self, name: str, documents: set[str]) -> list[Passage]:
        return self.milvus.open(name).passages_of(documents) if self.milvus.exists(name) else []

    def taken(self, name: str) -> bool:
        return self.milvus.exists(name)

    def delete(self, name: str) -> None:
        self.milvus.delete(name)

    def apply(self, name: str, job_id: str, new: list[Passage], replaced: set[str], embedder: Embedder,
              reporter: Reporter, stored: StoredPassages) -> Built:
        collection = self.milvus.create(name, embedder.name, embedder.dimension)
        return Built(collection.replace_documents(new, replaced, embedder, reporter=reporter))

    def applied(self, name: str, job_id: str) -> bool | None:
        return None  # writing a job's passages again is harmless: it is run again

    def pipeline(self, spec: PipelineSpec, llm: LLM) -> Pipeline:
        return build_pipeline(spec, llm=llm, milvus=self.milvus)

    def close(self) -> None:
        self.milvus.close()


def make_collections(kind: str, data_dir: Path, milvus_uri: str | None = None, milvus_token: str | None = None) -> ServiceCollections:
    """The settings' backend: embedded folders under ``data_dir/collections``, or Milvus at
    ``milvus_uri`` (default: a Milvus Lite file in the data folder)."""
    if kind == "milvus":
        return MilvusCollections(milvus_uri or str(data_dir / "milvus.db"), milvus_token)
    return EmbeddedCollections(data_dir / "collections")

