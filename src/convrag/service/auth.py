"""Bearer-token authentication for the API routes (the page itself is public; it asks for the key).

The key is compared in constant time and never logged: uvicorn's access log holds the method,
path and status only, and traces never see request headers."""

from __future__ import annotations

import secrets

from fastapi import Depends, Request

from .errors import ApiError
from .state import ServiceState, get_state


def require_key(request: Request, state: ServiceState = Depends(get_state)) -> None:
    key = state.settings.api_key
    if key is None or not key.get_secret_value():
        return
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not secrets.compare_digest(token.strip().encode(), key.get_secret_value().encode()):
        raise ApiError(401, "missing or wrong API key: send 'Authorization: Bearer <key>'", "invalid_api_key")
