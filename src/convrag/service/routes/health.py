"""``GET /api/health``: the service is up, and which model it answers with."""

from typing import Any

from fastapi import APIRouter, Depends

from ..state import ServiceState, get_state


def router() -> APIRouter:
    api = APIRouter(tags=["service"])

    @api.get("/health")
    def health(state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        return {"status": "ok", "llm": state.settings.llm, "collections": len(state.store.collections())}

    return api
