"""Every error the gateway returns is JSON in one shape, never a traceback.

    {"error": "<ExceptionName>", "message": "...", "field": "...", ["line": n,] ["job_id": "..."]}

A 404 also carries FastAPI's conventional ``detail`` (``{"detail": "bank 'x' does not exist"}``).

Bad input is a 4xx (malformed JSON 400, no/bad API key 401, key outside its banks or roles 403,
invalid fields 422, unknown bank/job 404, body over TEMPR_MAX_BODY_BYTES 413); a recall past
its deadline is 504 with the job id (poll ``GET /v1/jobs/{job_id}``); fleet trouble is 502/503.
A service outage (PostgreSQL, Redis or the broker down) is a fast 503 with ``Retry-After`` whose
message names the service but never its host, port or credentials.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException

from config.errors import (
    AllStrategiesFailed,
    AuthError,
    Forbidden,
    NotFound,
    PayloadTooLarge,
    RecallError,
    RecallTimeout,
    ServiceError,
    TemprError,
    ValidationError,
    outage_message,
    permanent_database_error,
    public_text,
)

log = logging.getLogger(__name__)


def body(error: str, message: str, field: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"error": error, "message": message, "field": field, **extra}


class JobError(TemprError):
    """A recall error that happened to a known job: the response carries the job id."""

    def __init__(self, cause: RecallError, job_id: str) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.job_id = job_id


def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
    err = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request", "type": ""}
    if err.get("type") == "json_invalid":
        return JSONResponse(body("ValidationError", "the body is not valid JSON", "body"), status_code=400)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if tuple(err.get("loc", ())) == ("body",) and kind and kind != "application/json" and not kind.endswith("+json"):
        # FastAPI reads such a body as a string: "Input should be a valid dictionary" said nothing useful
        message = f"the body must be JSON sent as Content-Type: application/json, not {kind}"
        return JSONResponse(body("ValidationError", message, "content-type"), status_code=415)
    loc = [str(p) for p in err.get("loc", ())]
    if loc and loc[0] in ("body", "path", "query", "header"):
        loc = loc[1:]
    message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    if err.get("type") == "extra_forbidden":
        message = "unknown field"
    elif err.get("type") == "missing":
        message = "is required"
    return JSONResponse(body("ValidationError", message, ".".join(loc) or None), status_code=422)


def _status_for(exc: BaseException) -> int:
    if isinstance(exc, Forbidden):
        return 403
    if isinstance(exc, AuthError):
        return 401
    if isinstance(exc, PayloadTooLarge):
        return 413
    if isinstance(exc, ValidationError):
        return 422
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, RecallTimeout):
        return 504
    if isinstance(exc, AllStrategiesFailed | ServiceError):
        return 503
    if isinstance(exc, RecallError):
        return 502
    return 500


def _retry_after(request: Request) -> dict[str, str]:
    gateway = getattr(request.app.state, "gateway", None)
    seconds = getattr(getattr(gateway, "settings", None), "api_retry_after_s", 5)
    return {"Retry-After": str(int(seconds))}


def _respond(request: Request, payload: dict[str, Any], status: int) -> JSONResponse:
    headers = None
    if status == 401:
        headers = {"WWW-Authenticate": "Bearer"}
    if status == 503:
        headers = _retry_after(request)
        log.warning("503 %s: %s", payload.get("error"), payload.get("message"))
    return JSONResponse(payload, status_code=status, headers=headers)


def _tempr(request: Request, exc: Exception) -> JSONResponse:
    if isinstance(exc, JobError):
        cause = exc.cause
        payload = body(type(cause).__name__, str(cause), None, job_id=exc.job_id, status_url=f"/v1/jobs/{exc.job_id}")
        return _respond(request, payload, _status_for(cause))
    if isinstance(exc, NotFound):
        return JSONResponse(body("NotFound", str(exc), detail=str(exc)), status_code=404)
    to_dict = getattr(exc, "to_dict", None)
    payload = to_dict() if callable(to_dict) else body(type(exc).__name__, str(exc))
    return _respond(request, payload, _status_for(exc))


def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
    name = {404: "NotFound", 405: "MethodNotAllowed"}.get(exc.status_code, "HTTPError")
    return JSONResponse(body(name, str(exc.detail)), status_code=exc.status_code, headers=getattr(exc, "headers", None))


def _database(request: Request, exc: OperationalError) -> JSONResponse:
    if permanent_database_error(exc):  # a value past one of PostgreSQL's limits: retrying cannot help
        log.warning("the database refused a statement: %s", public_text(exc))
        return _respond(request, body("ValidationError", f"the database refused the input: {public_text(exc)}"), 422)
    log.warning("database unavailable: %s", exc.orig)
    return _respond(request, body("ServiceUnavailable", "the database is unavailable"), 503)


def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    outage = outage_message(exc)
    if outage:  # a driver's connection error that no route translated: still a 503, not a 500
        log.warning("service unavailable: %s: %s", type(exc).__name__, exc)
        return _respond(request, body("ServiceUnavailable", outage), 503)
    log.exception("unhandled error in the gateway")
    return JSONResponse(body("InternalError", "internal error (see the gateway's log)"), status_code=500)


def install(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation)  # type: ignore[arg-type]
    app.add_exception_handler(TemprError, _tempr)
    app.add_exception_handler(StarletteHTTPException, _http)  # type: ignore[arg-type]
    app.add_exception_handler(OperationalError, _database)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _unexpected)
