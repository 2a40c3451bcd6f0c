"""Indexing jobs: what is queued, running, done or failed, with progress."""

from typing import Any

from fastapi import APIRouter, Depends, Query

from ..errors import ApiError
from ..state import ServiceState, get_state
from .common import job_info


def router() -> APIRouter:
    api = APIRouter(tags=["jobs"])

    @api.get("/jobs")
    def list_jobs(collection: str | None = None, limit: int = Query(100, ge=1, le=1000),
                  before: float | None = Query(None, description="only jobs created before this time: the `created` "
                                                                 "of the last job of the page before"),
                  state: ServiceState = Depends(get_state)) -> list[dict[str, Any]]:
        """Jobs, newest first, a page of ``limit`` at a time: every upload is a job, and a server that
        runs for a year keeps thousands of them."""
        return [job_info(j) for j in state.store.jobs(collection, limit, before)]

    @api.get("/jobs/{job_id}")
    def get_job(job_id: str, state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        job = state.store.job(job_id)
        if job is None:
            raise ApiError(404, f"no job {job_id!r}", "job_not_found")
        return job_info(job)

    return api
