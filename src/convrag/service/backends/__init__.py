"""Where the service keeps its collections: folders of embedded indexes (the default), or Milvus
(Milvus Lite in the data folder, or a Milvus server shared by several services).

Both answer the same questions for the rest of the service: which collections can be searched,
what a collection holds, one passage by id, building an indexing job's result into a collection,
deleting one, and the pipeline over some of them (:class:`ServiceCollections`; one module per
backend). The database (documents, jobs, conversations) and the uploaded files stay in the data
folder either way.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple, Protocol

from ...embeddings import Embedder
from ...llm.base import LLM
from ...pipeline import Pipeline, PipelineSpec
from ...progress import Reporter
from ...types import Passage
from ..settings import ServiceSettings


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

    def made_elsewhere(self, name: str) -> str | None:
        """The embedding model of a collection ``name`` that ``convrag index`` made where the service
        can take it on as it is (into the same Milvus; for embedded folders, into the settings'
        ``indexed_store``); None when there is none, or when it cannot be told from a leftover of
        the service's own."""

    def take_on(self, name: str) -> list[Passage]:
        """Make the collection :meth:`made_elsewhere` found the service's own, as it is; its passages
        (what the service then records as its documents). Milvus: nothing to move. Embedded: its
        live version linked into the service's folder, so that the service's uploads and deletes
        never change what ``convrag index`` keeps."""

    def indexed_version(self, name: str) -> str | None:
        """The live version of what ``convrag index`` built under ``name`` where the service takes
        collections on from (embedded: ``indexed_store``); None where there is none, and for Milvus,
        whose collections are searched where they are (there is no other copy to bring in)."""

    def indexed_passages(self, name: str) -> tuple[str | None, list[Passage]]:
        """The embedding model and the passages of what ``convrag index`` built under ``name`` (see
        :meth:`indexed_version`); a :class:`~convrag.errors.CollectionError` where there is none."""

    def keep(self, names: list[str]) -> None:
        """Mark the collections the service's database records as the service's where other convrag
        programs can reach them (Milvus), so that ``convrag index`` and ``convrag delete`` leave them
        alone: at each start, for collections a service made before they were marked."""

    def delete(self, name: str) -> None: ...

    def apply(self, name: str, job_id: str, new: list[Passage], replaced: set[str], embedder: Embedder,
              reporter: Reporter, stored: StoredPassages) -> Built:
        """Make ``name`` hold its passages with those of the ``replaced`` documents swapped for ``new``."""

    def applied(self, name: str, job_id: str) -> bool | None:
        """Whether the job's result is live (a job cut off after its switch); None: the backend
        cannot tell, and the job is to be run again."""

    def pipeline(self, spec: PipelineSpec, llm: LLM) -> Pipeline: ...

    def close(self) -> None: ...


def make_collections(settings: ServiceSettings) -> ServiceCollections:
    """The settings' backend: embedded folders under ``data_dir/collections``, or Milvus at
    :attr:`ServiceSettings.milvus_target`."""
    if settings.backend == "milvus":
        from .milvus import MilvusCollections

        token = settings.milvus_token.get_secret_value() if settings.milvus_token else None
        return MilvusCollections(settings.milvus_target, token)
    from .embedded import EmbeddedCollections

    return EmbeddedCollections(Path(settings.data_dir) / "collections", indexed=settings.indexed_store)
