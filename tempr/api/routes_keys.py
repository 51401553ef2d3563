"""API keys over HTTP, for a tenant's admin keys: create (within the caller's own banks), list, revoke.

An admin key manages its own tenant's keys only, and cannot hand out a bank it does not cover
itself; operators with database access use `tempr keys` for everything else (any tenant).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field

from config.errors import Forbidden, NotFound, ValidationError
from tempr.api.gateway import gateway
from tempr.api.security import role
from tempr.auth import Principal, create_key, list_keys, revoke
from tempr.bank_ids import check_bank_pattern, pattern_covered
from tempr.inputs import CleanStr

router = APIRouter(tags=["keys"])
ADMIN = Depends(role("admin"))
_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "no API key, or an unknown or revoked one"},
    403: {"description": "the key lacks the admin role, or asks for banks outside its own"},
}


class KeyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    banks: list[CleanStr] = Field(min_length=1, max_length=64)
    roles: list[CleanStr] = Field(default_factory=lambda: ["recall"], min_length=1, max_length=3)
    note: CleanStr = Field(default="", max_length=200)


def _tenant(who: Principal) -> str:
    if who.tenant is None:
        raise ValidationError("TEMPR_AUTH=off: there are no tenants; use `tempr keys create`", field="tenant")
    return who.tenant


@router.post("/v1/keys", status_code=201, responses=_ERRORS)
async def create(body: KeyRequest, request: Request, who: Principal = ADMIN) -> dict[str, Any]:
    """A new key of the caller's tenant, shown once (with the tenant's webhook secret)."""
    tenant = _tenant(who)
    for pattern in body.banks:
        if not pattern_covered(check_bank_pattern(pattern), who.banks):
            raise Forbidden(f"bank pattern {pattern!r} is outside this key's banks")
    engine = gateway(request).resources.engine
    new = await run_in_threadpool(create_key, engine, tenant, body.banks, body.roles, body.note)
    return new.to_dict()


@router.get("/v1/keys", responses=_ERRORS)
async def listing(request: Request, who: Principal = ADMIN) -> dict[str, Any]:
    """The caller's tenant's keys (ids, scopes, roles; never the keys)."""
    keys = await run_in_threadpool(list_keys, gateway(request).resources.engine, _tenant(who))
    return {"keys": keys}


@router.delete("/v1/keys/{key_id}", responses={**_ERRORS, 404: {"description": "no live key of this tenant"}})
async def delete(key_id: str, request: Request, who: Principal = ADMIN) -> dict[str, Any]:
    """Revoke one of the caller's tenant's keys: refused from the next request on by this gateway, within
    TEMPR_AUTH_CACHE_S (2 s) by any other."""
    tenant = _tenant(who)
    engine = gateway(request).resources.engine
    owned = {k["id"] for k in await run_in_threadpool(list_keys, engine, tenant) if not k["revoked_at"]}
    if key_id not in owned or not await run_in_threadpool(revoke, engine, key_id):
        raise NotFound(f"no live key {key_id!r}")
    gateway(request).keys.clear()  # this gateway stops trusting it now; others within TEMPR_AUTH_CACHE_S
    return {"id": key_id, "revoked": True}
