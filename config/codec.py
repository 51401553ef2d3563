"""Celery's JSON, decoded by orjson: the same values, about four times faster.

Every message and result tempr's processes read goes through kombu's ``json`` decoder, which
calls a Python ``object_hook`` for every JSON object (it turns kombu's ``{"__type__": ...,
"__value__": ...}`` wrappers back into datetimes, UUIDs, decimals and bytes). A recall's answer
is about 180 KB of JSON with thousands of objects: the gateway spent 1.6 ms of CPU decoding it
with kombu, 0.4 ms with orjson (BENCHMARKS.md, "Celery's JSON decoded by orjson"), and every
strategy report and chord callback is decoded the same way in the workers.

Exactness: orjson gives the same Python values as ``json.loads`` for standard JSON, with one
exception: an integer beyond 64 bits comes back as a float. tempr's messages carry none (ids are
strings; every integer is a count, a limit or a position, and requests are validated against their
bounds), so the exception is accepted and pinned by a unit test. A payload that carries kombu's type
marker, or that orjson refuses (``NaN``, ``Infinity``, numbers out of range, lone surrogates), is
decoded by kombu exactly as before. Encoding stays kombu's: orjson writes ``NaN`` as ``null`` and
datetimes as bare strings, which a kombu peer would read back differently, and tempr's messages are
JSON types already, so encoding them faster gains little.

One encoding is spared: a recall's answer is already JSON when its task returns it (pydantic wrote
it once for the cache and the job record), so the task returns it as an ``EncodedAnswer``, a plain
dict that keeps that text, and ``dumps`` writes the text into the Celery result instead of encoding
it again (kombu's encoder took 2.1-2.9 ms of the analyse worker's CPU per recall, 0.1 ms now:
``python -m bench.answer_cost``). Every other value, and everything around the answer, is encoded by
kombu as before.

Apps that enqueue recalls need none of this: it changes how tempr's own processes read and write
their JSON, not what goes over the wire (the same values, in the same JSON types).
"""

from __future__ import annotations

from typing import Any

import orjson
from kombu.serialization import registry
from kombu.utils import json as kombu_json

_MARK_STR = '"__type__"'
_MARK_BYTES = _MARK_STR.encode()


def loads(data: str | bytes | bytearray | memoryview) -> Any:
    """kombu's ``json.loads``, by orjson wherever kombu's object hook would change nothing."""
    if isinstance(data, memoryview | bytearray):
        data = bytes(data)
    marked = (_MARK_BYTES in data) if isinstance(data, bytes) else (_MARK_STR in data)
    if not marked:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # NaN / Infinity, numbers out of range, lone surrogates: kombu decides, as before
    return kombu_json.loads(data)


class EncodedAnswer(dict[str, Any]):
    """A dict that also holds its own JSON text, so a task's result need not be encoded twice.

    The text must decode to the dict (``succeed_job`` builds both from the same bytes); nothing
    may change the dict afterwards. Anywhere else it is an ordinary dict."""

    __slots__ = ("json_text",)

    def __init__(self, value: dict[str, Any], json_text: str) -> None:
        super().__init__(value)
        self.json_text = json_text


def dumps(value: Any) -> str:
    """kombu's ``json.dumps``; a result whose ``result`` is an ``EncodedAnswer`` reuses its text.

    A Celery result is ``{"status": ..., "result": ..., "traceback": ..., ...}``: the answer's text
    goes in as the first member, kombu encodes the rest. The result's key order changes, not its
    value."""
    if type(value) is dict and type(answer := value.get("result")) is EncodedAnswer:
        rest = kombu_json.dumps({k: v for k, v in value.items() if k != "result"})
        return '{"result": ' + answer.json_text + (", " + rest[1:] if len(rest) > 2 else "}")
    encoded: str = kombu_json.dumps(value)
    return encoded


def install() -> None:
    """Make this process's ``json`` serializer decode with ``loads`` and encode with ``dumps`` (idempotent)."""
    registry.register("json", dumps, loads, content_type="application/json", content_encoding="utf-8")
