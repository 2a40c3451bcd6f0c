"""Collections: create, list, describe, change the description, delete (index, uploads and jobs)."""

import shutil
from typing import Any

from fastapi import APIRouter, Depends, Response
from pydantic import BaseModel, Field

from ...embeddings import load_embedder
from ...index.collection import NAME
from ..errors import ApiError
from ..indexing import indexed_documents
from ..state import ServiceState, get_state
from .common import collection_info, job_info, require_collection


class CollectionIn(BaseModel):
    name: str = Field(pattern=f"^{NAME.pattern}$", description="letters, digits, '-' and '_'; at most 64")
    description: str = Field("", max_length=2000)


class CollectionPatch(BaseModel):
    description: str = Field(max_length=2000)


def router() -> APIRouter:
    api = APIRouter(tags=["collections"])

    @api.get("/collections")
    def list_collections(state: ServiceState = Depends(get_state)) -> list[dict[str, Any]]:
        return [collection_info(state, c) for c in state.store.collections()]

    @api.post("/collections", status_code=201)
    def create_collection(body: CollectionIn, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        """A new, empty collection; or, where ``convrag index`` made a collection of that name that the
        service can reach (into the same Milvus; with embedded folders, into the settings'
        ``indexed_store``), that one taken on as it is (``taken_on`` is true): its passages searched,
        its embedding model kept, its documents listed (they have no uploaded file), documents
        added to it by uploads."""
        if state.store.collection(body.name) is not None:
            raise ApiError(409, f"a collection named {body.name!r} exists", "collection_exists")
        model = state.collections.made_elsewhere(body.name)
        if model is None and state.collections.taken(body.name):
            raise ApiError(409, f"a collection named {body.name!r} exists", "collection_exists")
        if model is not None:  # refused here, not at its first question, where the machine lacks the model
            load_embedder(model)
        record = state.store.add_collection(body.name, body.description, model or state.settings.embedding_model)
        if model is not None:
            try:
                passages = state.collections.take_on(body.name)
            except BaseException:
                state.store.delete_collection(body.name)
                raise
            job = state.store.add_job(body.name, [], source="indexed")  # cut off before it is recorded: run again
            state.store.finish_job(job["id"], body.name, indexed_documents(passages))
        return {**collection_info(state, record), "taken_on": model is not None}

    @api.post("/collections/{name}/take-on", status_code=202)
    def take_on_again(name: str, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        """Bring in what ``convrag index`` has built of this collection since it was taken on (embedded
        folders; a Milvus collection is searched where it is): its documents replace those taken on
        before, documents uploaded to the service stay (one uploaded under the same id wins). A job."""
        require_collection(state, name)
        if state.collections.indexed_version(name) is None:
            shared = " (a Milvus collection is searched where it is: there is no other copy to bring in)" if state.collections.kind == "milvus" else ""
            raise ApiError(409, f"`convrag index` has built no collection {name!r} for the service to take on{shared}", "not_indexed")
        job = state.store.add_job(name, [], source="indexed")
        state.indexer.submit(job["id"], name)
        return job_info(job)

    @api.get("/collections/{name}")
    def describe_collection(name: str, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        info = collection_info(state, require_collection(state, name))
        info["documents_list"] = state.store.documents(name)
        info["jobs"] = [job_info(j) for j in state.store.jobs(name, limit=20)]
        return info

    @api.patch("/collections/{name}")
    def update_collection(name: str, body: CollectionPatch, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        require_collection(state, name)
        state.store.set_collection_description(name, body.description)
        return collection_info(state, require_collection(state, name))

    @api.delete("/collections/{name}", status_code=204)
    def delete_collection(name: str, state: ServiceState = Depends(get_state)) -> Response:
        """The collection, its index, its jobs and every file uploaded to it."""
        require_collection(state, name)
        if state.indexer.busy(name):
            raise ApiError(409, f"collection {name!r} is being indexed; delete it when the job ends", "collection_busy")
        jobs = state.store.jobs(name)
        state.store.delete_collection(name)
        state.pipelines.forget(name)
        state.collections.delete(name)
        for job in jobs:
            shutil.rmtree(state.uploads / job["id"], ignore_errors=True)
        return Response(status_code=204)

    return api
