"""Who is calling the gateway: one dependency per role, checked before a route does anything.

Keys come in ``Authorization: Bearer <key>`` or ``X-API-Key: <key>``. No key or a bad one is 401,
a valid key outside its banks or roles is 403 (docs/execution.md, "Authentication"). With
``TEMPR_AUTH=off`` every caller is ``ANONYMOUS``. /healthz, /docs and /openapi.json stay open:
they hold no bank data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Request, Security
from fastapi.concurrency import run_in_threadpool
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from tempr.api.gateway import gateway
from tempr.auth import ANONYMOUS, Principal, authenticate
from tempr.bank_ids import check_bank_id

BEARER = HTTPBearer(auto_error=False, description="Authorization: Bearer tk_<id>_<secret>")
API_KEY = APIKeyHeader(name="X-API-Key", auto_error=False, description="the same key, in its own header")


async def principal(
    request: Request,
    bearer: HTTPAuthorizationCredentials | None = Security(BEARER),
    api_key: str | None = Security(API_KEY),
) -> Principal:
    gw = gateway(request)
    if gw.settings.auth == "off":
        return ANONYMOUS
    raw = bearer.credentials if bearer is not None else api_key
    known = gw.keys.get(raw)  # checked in the last TEMPR_AUTH_CACHE_S seconds
    if known is not None:
        return known
    who = await run_in_threadpool(authenticate, gw.resources.engine, raw)
    gw.keys.put(raw or "", who)
    return who


def role(name: str) -> Callable[..., Any]:
    """A dependency: the caller, who must hold ``name`` over the path's ``bank_id`` (if any).

    The bank id is validated first, so a bad id is a 422 whatever the key."""

    async def dependency(request: Request, who: Principal = Security(principal)) -> Principal:
        bank_id = request.path_params.get("bank_id")
        if bank_id is not None:
            check_bank_id(bank_id)
        return who.require(name, bank_id)

    return dependency
