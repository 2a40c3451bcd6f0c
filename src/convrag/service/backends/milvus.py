"""The service's collections in Milvus: Milvus Lite in the data folder, or a Milvus server."""

from __future__ import annotations

from ...embeddings import Embedder
from ...errors import ConvragError
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
        from ...backends.milvus import MilvusStore

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
