"""``POST /api/search``: passages for a query without rewriting or generation, retrieved and fused
across collections by the same pipeline a chat over those collections uses."""

from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field, create_model

from ..settings import Limits, PipelineConfig
from ..state import ServiceState, get_state
from .common import CollectionNames, require_collection


def search_model(limits: Limits) -> type[BaseModel]:
    """The request body, with this service's limits in its schema (so the OpenAPI description says what is accepted)."""
    return create_model(
        "SearchIn",
        collections=(CollectionNames, ...),
        query=(str, Field(min_length=1, max_length=limits.max_question_chars, pattern=r"\w")),  # a word to search: not "???"
        k=(int, Field(10, ge=1, le=limits.max_search_k)),
    )


def router(limits: Limits) -> APIRouter:
    api = APIRouter(tags=["search"])
    SearchIn = search_model(limits)  # noqa: N806 - a class

    @api.post("/search")
    def search(body: SearchIn, state: ServiceState = Depends(get_state)) -> dict[str, Any]:  # type: ignore[valid-type]
        for name in body.collections:
            require_collection(state, name)
        ready, empty = state.pipelines.ready(body.collections)
        if not ready:
            return {"query": body.query, "hits": [], "failures": {}, "empty_collections": empty}
        pipeline = state.pipelines.get(PipelineConfig(collections=ready, strategy="last_turn"), k=body.k)
        hits, report = pipeline.search(body.query, body.k)
        return {
            "query": body.query,
            "hits": [{"collection": h.collection, "passage_id": h.passage_id, "document_id": h.document_id, "title": h.title,
                      "url": h.url, "text": h.text, "score": h.score, "rank": h.rank} for h in hits],
            "failures": report.failures, "empty_collections": empty,
        }

    return api
