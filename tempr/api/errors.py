"""Every error the gateway returns is JSON in one shape, never a traceback.

    {"error": "<ExceptionName>", "message": "...", "field": "...", ["line": n,] ["job_id": "..."]}

Bad input is a 4xx (malformed JSON 400, invalid fields 422, unknown bank/job 404); a recall past
its deadline is 504 with the job id (poll ``GET /v1/jobs/{job_id}``); fleet trouble is 502/503.
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
    NotFound,
    RecallError,
    RecallTimeout,
    ServiceError,
    TemprError,
    ValidationError,
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


def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
    err = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request", "type": ""}
    if err.get("type") == "json_invalid":
        return JSONResponse(body("ValidationError", "the body is not valid JSON", "body"), status_code=400)
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


def _tempr(_: Request, exc: Exception) -> JSONResponse:
    if isinstance(exc, JobError):
        cause = exc.cause
        payload = body(type(cause).__name__, str(cause), None, job_id=exc.job_id, status_url=f"/v1/jobs/{exc.job_id}")
        return JSONResponse(payload, status_code=_status_for(cause))
    to_dict = getattr(exc, "to_dict", None)
    payload = to_dict() if callable(to_dict) else body(type(exc).__name__, str(exc))
    return JSONResponse(payload, status_code=_status_for(exc))


def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
    name = {404: "NotFound", 405: "MethodNotAllowed"}.get(exc.status_code, "HTTPError")
    return JSONResponse(body(name, str(exc.detail)), status_code=exc.status_code, headers=getattr(exc, "headers", None))


def _database(_: Request, exc: OperationalError) -> JSONResponse:
    log.warning("database unavailable: %s", exc.orig)
    return JSONResponse(body("ServiceError", "database unavailable"), status_code=503)


def _unexpected(_: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error in the gateway")
    return JSONResponse(body("InternalError", "internal error (see the gateway's log)"), status_code=500)


def install(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation)  # type: ignore[arg-type]
    app.add_exception_handler(TemprError, _tempr)
    app.add_exception_handler(StarletteHTTPException, _http)  # type: ignore[arg-type]
    app.add_exception_handler(OperationalError, _database)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _unexpected)
