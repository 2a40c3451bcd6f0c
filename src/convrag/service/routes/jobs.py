"""Indexing jobs: what is queued, running, done or failed, with progress."""

from typing import Any

from fastapi import APIRouter, Depends

from ..errors import ApiError
from ..state import ServiceState, get_state
from .common import job_info


def router() -> APIRouter:
    api = APIRouter(tags=["jobs"])

    @api.get("/jobs")
    def list_jobs(collection: str | None = None, state: ServiceState = Depends(get_state)) -> list[dict[str, Any]]:
        return [job_info(j) for j in state.store.jobs(collection)]

    @api.get("/jobs/{job_id}")
    def get_job(job_id: str, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        job = state.store.job(job_id)
        if job is None:
            raise ApiError(404, f"no job {job_id!r}", "job_not_found")
        return job_info(job)

    return api
