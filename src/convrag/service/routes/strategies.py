"""``GET /api/strategies``: the strategies a conversation may be given (``POST /api/conversations``,
``strategy``), and the service's default. Only these: a request never makes the server import one."""

from typing import Any

from fastapi import APIRouter, Depends

from ...strategies.registry import offered_strategies
from ..state import ServiceState, get_state


def router() -> APIRouter:
    api = APIRouter(tags=["conversations"])

    @api.get("/strategies")
    def strategies(state: ServiceState = Depends(get_state)) -> dict[str, Any]:
        return {"default": state.settings.strategy, "strategies": [s._asdict() for s in offered_strategies()]}

    return api
