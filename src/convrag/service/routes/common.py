"""What several ``/api`` routers share: a request's list of collections, finding a collection, and
the JSON of a collection and a job."""

from typing import Annotated, Any

from pydantic import AfterValidator, Field

from ..errors import ApiError
from ..state import ServiceState


def _once_each(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))


#: The collections a request names, each once, in the order given: a name given twice made the
#: pipeline refuse its own configuration, a 500 from /api/search, conversation creation and the
#: OpenAI endpoint alike (a conversation's PATCH already kept each once).
CollectionNames = Annotated[list[str], Field(min_length=1, max_length=50), AfterValidator(_once_each)]


def require_collection(state: ServiceState, name: str) -> dict[str, Any]:
    record = state.store.collection(name)
    if record is None:
        raise ApiError(404, f"no collection named {name!r}", "collection_not_found")
    return record


def collection_info(state: ServiceState, record: dict[str, Any]) -> dict[str, Any]:
    name = record["name"]
    info: dict[str, Any] = {**record, "passages": 0, "documents": state.store.document_count(name), "version": None,
                            "indexing": state.indexer.busy(name),
                            # `convrag index` has built a collection of this name: POST .../take-on brings it in
                            "indexed": state.collections.indexed_version(name) is not None}
    holding = state.collections.holding(name)
    info.update(passages=holding.passages, version=holding.version)
    if holding.problem is not None:
        info["problem"] = holding.problem
    if holding.passages and holding.version is not None and (damage := state.pipelines.damage(name, holding.version)) is not None:
        info["problem"] = damage
    return info


def job_info(job: dict[str, Any]) -> dict[str, Any]:
    out = {k: job[k] for k in ("id", "collection", "status", "stage", "done", "total", "created", "started", "finished")}
    out["files"] = [{"filename": f.get("original") or f["filename"], "doc_id": f["doc_id"], "bytes": f["bytes"]}
                    for f in job["files"]]
    out["remove"] = job.get("remove", [])
    out["source"] = job.get("source") or "uploads"
    if job.get("web"):
        out["web"] = job["web"]
    out["error" if job["status"] == "failed" else "warning"] = job["error"]
    return out
