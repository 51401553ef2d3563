"""The body-size middleware: declared and chunked bodies over the limit are a 413, others pass."""

from __future__ import annotations

from collections.abc import Iterator

from fastapi import FastAPI, Request
from fastapi.testclient import TestClient

from tempr.api.limits import BodyLimit


def _client(limit: int) -> TestClient:
    app = FastAPI()

    @app.post("/echo")
    async def echo(request: Request) -> dict[str, int]:
        return {"size": len(await request.body())}

    app.add_middleware(BodyLimit, max_bytes=limit)
    return TestClient(app)


def _chunks(n: int, size: int) -> Iterator[bytes]:
    for _ in range(n):
        yield b"x" * size


def test_declared_length_over_the_limit_is_413() -> None:
    client = _client(1024)
    assert client.post("/echo", content=b"x" * 1024).json() == {"size": 1024}
    refused = client.post("/echo", content=b"x" * 1025)
    assert refused.status_code == 413 and refused.json()["error"] == "PayloadTooLarge"
    assert refused.json()["field"] == "body"


def test_chunked_bodies_are_counted() -> None:
    client = _client(1024)
    assert client.post("/echo", content=_chunks(4, 256)).json() == {"size": 1024}
    assert client.post("/echo", content=_chunks(5, 256)).status_code == 413


def test_a_bad_content_length_is_400() -> None:
    client = _client(1024)
    assert client.post("/echo", content=b"{}", headers={"Content-Length": "abc"}).status_code in (400, 413)
