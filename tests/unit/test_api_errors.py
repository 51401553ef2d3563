"""The gateway's error shape (tempr/api/errors.py): one JSON body per error, the right status, never a traceback."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from psycopg.errors import ProgramLimitExceeded
from pydantic import BaseModel
from sqlalchemy.exc import OperationalError

from config.errors import (
    AllStrategiesFailed,
    IngestValidationError,
    NotFound,
    RecallError,
    RecallTimeout,
    ServiceError,
    ValidationError,
)
from tempr.api import errors


class Body(BaseModel):
    query: str


def _client(exc: BaseException) -> TestClient:
    app = FastAPI()
    errors.install(app)

    @app.post("/boom")
    def boom(body: Body) -> None:
        raise exc

    return TestClient(app, raise_server_exceptions=False)


@pytest.mark.parametrize(
    ("exc", "status"),
    [
        (ValidationError("bad", field="query"), 422),
        (IngestValidationError("bad", line=3, field="text"), 422),
        (NotFound("no bank"), 404),
        (RecallTimeout("late"), 504),
        (AllStrategiesFailed("none"), 503),
        (ServiceError("down"), 503),
        (RecallError("odd"), 502),
        (OperationalError("SELECT 1", {}, Exception("refused")), 503),
        (OperationalError("INSERT ...", {}, ProgramLimitExceeded("string is too long for tsvector")), 422),
        (RuntimeError("bug"), 500),
    ],
)
def test_each_error_gets_its_status_and_one_body_shape(exc: BaseException, status: int) -> None:
    response = _client(exc).post("/boom", json={"query": "q"})
    assert response.status_code == status
    data = response.json()
    assert {"error", "message", "field"} <= set(data)
    assert "Traceback" not in response.text
    if isinstance(exc, IngestValidationError):
        assert data["line"] == 3 and data["field"] == "text"


def test_a_job_error_carries_the_job_id() -> None:
    response = _client(errors.JobError(RecallTimeout("late"), "j-1")).post("/boom", json={"query": "q"})
    assert response.status_code == 504
    assert response.json()["job_id"] == "j-1" and response.json()["status_url"] == "/v1/jobs/j-1"


def test_bad_json_is_400_and_a_bad_field_is_422_naming_it() -> None:
    client = _client(RuntimeError())
    bad_json = client.post("/boom", content=b"{", headers={"content-type": "application/json"})
    assert bad_json.status_code == 400 and bad_json.json()["field"] == "body"
    missing = client.post("/boom", json={})
    assert missing.status_code == 422 and missing.json() == {
        "error": "ValidationError",
        "message": "is required",
        "field": "query",
    }
    extra = client.post("/nowhere")
    assert extra.status_code == 404 and extra.json()["error"] == "NotFound"


def test_a_body_sent_as_another_content_type_is_415_naming_it() -> None:
    response = _client(RuntimeError()).post("/boom", content=b'{"query": "q"}', headers={"content-type": "text/plain"})
    assert response.status_code == 415
    assert response.json()["field"] == "content-type" and "text/plain" in response.json()["message"]
