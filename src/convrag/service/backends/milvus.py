"""The service's collections in Milvus: Milvus Lite in the data folder, or a Milvus server."""

from __future__ import annotations

import threading

from ...backends.milvus import MilvusCollection, MilvusStore
from ...embeddings import Embedder
from ...errors import BackendUnavailable, CollectionError, ConvragError
from ...llm.base import LLM
from ...pipeline import Pipeline, PipelineSpec, build_pipeline
from ...progress import Reporter
from ...types import Passage
from . import Built, Holding, StoredPassages


class MilvusCollections:
    """Collections in Milvus: Milvus Lite (a file in the data folder) or a Milvus server. Milvus
    searches what is stored when a query comes, so there are no versions: a job writes its new
    passages (upserted) and then deletes the replaced documents' others, so a crash half-way
    leaves every old passage searchable, and the job is run again at the next start."""

    kind = "milvus"

    def __init__(self, uri: str, token: str | None = None) -> None:
        self.uri = uri
        self.milvus = MilvusStore(uri, token)
        #: opened once (opening reads and checks the collection's schema); each request counts rows
        self._opened: dict[str, MilvusCollection] = {}
        self._lock = threading.Lock()

    def _collection(self, name: str) -> MilvusCollection | None:
        """The opened collection, or None when Milvus has none of that name (any more)."""
        if not self.milvus.exists(name):
            with self._lock:
                self._opened.pop(name, None)
            return None
        with self._lock:
            opened = self._opened.get(name)
        if opened is None:
            opened = self.milvus.open(name)
            with self._lock:
                self._opened[name] = opened
        return opened

    def built(self) -> list[str]:
        return [n for n in self.milvus.names() if self.version(n) is not None]

    def version(self, name: str) -> str | None:
        collection = self._collection(name)
        return "milvus" if collection is not None and len(collection) else None

    def holding(self, name: str) -> Holding:
        try:
            collection = self._collection(name)
            return Holding(len(collection) if collection is not None else 0, None)
        except BackendUnavailable:  # not this collection's problem, and "0 passages" would look like a loss
            raise
        except ConvragError as exc:
            return Holding(0, None, str(exc))

    def passage(self, name: str, passage_id: str) -> Passage | None:
        collection = self._collection(name)
        return collection.passage(passage_id) if collection is not None else None

    def passages_of(self, name: str, documents: set[str]) -> list[Passage]:
        collection = self._collection(name)
        return collection.passages_of(documents) if collection is not None else []

    def taken(self, name: str) -> bool:
        return self.milvus.exists(name)

    def made_elsewhere(self, name: str) -> str | None:
        """A collection with convrag's schema (what ``convrag index --backend milvus`` makes):
        its embedding model. One of another schema, one another convrag service sharing this
        Milvus keeps, or none: None."""
        try:
            collection = self._collection(name)
        except BackendUnavailable:
            raise
        except ConvragError:  # not convrag's schema
            return None
        if collection is None or self.milvus.served(name):  # another service sharing this Milvus keeps it
            return None
        return collection.info.embedding_model

    def take_on(self, name: str) -> list[Passage]:
        """Nothing moves: the collection is searched where it is. Its passages, listed in batches."""
        collection = self._collection(name)
        if collection is None:
            return []
        passages = collection.stored_passages()
        self.milvus.serve(name)  # last: a listing that fails leaves it unmarked, to be taken on again
        return passages

    def indexed_version(self, name: str) -> str | None:
        return None  # searched where it is: `convrag index` writes the one copy there is

    def indexed_passages(self, name: str) -> tuple[str | None, list[Passage]]:
        raise CollectionError(f"Milvus collection {name!r} is searched where it is: there is no other copy to bring in")

    def keep(self, names: list[str]) -> None:
        for name in names:
            if self.milvus.exists(name):
                self.milvus.serve(name)

    def delete(self, name: str) -> None:
        with self._lock:
            self._opened.pop(name, None)
        self.milvus.delete(name)

    def apply(self, name: str, job_id: str, new: list[Passage], replaced: set[str], embedder: Embedder,
              reporter: Reporter, stored: StoredPassages) -> Built:
        collection = self.milvus.create(name, embedder.name, embedder.dimension)
        if not collection.info.served:  # a new one, or one a service made before collections were marked
            self.milvus.serve(name)
        with self._lock:
            self._opened[name] = collection
        return Built(collection.replace_documents(new, replaced, embedder, reporter=reporter))

    def applied(self, name: str, job_id: str) -> bool | None:
        return None  # writing a job's passages again is harmless: it is run again

    def pipeline(self, spec: PipelineSpec, llm: LLM) -> Pipeline:
        return build_pipeline(spec, llm=llm, milvus=self.milvus)

    def close(self) -> None:
        self.milvus.close()
