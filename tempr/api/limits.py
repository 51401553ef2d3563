"""Request body size limit (``TEMPR_MAX_BODY_BYTES``): 413 before the body is parsed.

A declared ``Content-Length`` over the limit is refused without reading a byte; a body without one
(chunked) is read up to the limit and refused as soon as it passes it, so a 50 MB upload costs
the gateway at most the limit in memory, never the whole upload.
"""

from __future__ import annotations

import json
from typing import Any

Scope = dict[str, Any]
Message = dict[str, Any]


def _response(status: int, error: str, message: str) -> tuple[Message, Message]:
    payload = json.dumps({"error": error, "message": message, "field": "body"}).encode()
    start = {
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())],
    }
    return start, {"type": "http.response.body", "body": payload}


class BodyLimit:
    """Pure ASGI middleware (no buffering of bodies within the limit that declare their length)."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def _refuse(self, send: Any, status: int, error: str, message: str) -> None:
        start, body = _response(status, error, message)
        await send(start)
        await send(body)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = f"the request body is over the {self.max_bytes}-byte limit (TEMPR_MAX_BODY_BYTES)"
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            try:
                length = int(declared)
            except ValueError:
                await self._refuse(send, 400, "ValidationError", "Content-Length is not a number")
                return
            if length > self.max_bytes:
                await self._refuse(send, 413, "PayloadTooLarge", too_large)
                return
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        total, more = 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message], receive), send)
                return
            chunk = message.get("body", b"")
            total += len(chunk)
            if total > self.max_bytes:
                await self._refuse(send, 413, "PayloadTooLarge", too_large)
                return
            chunks.append(chunk)
            more = bool(message.get("more_body"))
        whole = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        await self.app(scope, _replay([whole], receive), send)


def _replay(messages: list[Message], then: Any) -> Any:
    """A receive() that hands back what was already read, then the connection's own receive."""
    queue = list(messages)

    async def receive() -> Message:
        if queue:
            return queue.pop(0)
        return await then()

    return receive
