"""config.codec: orjson decodes Celery's JSON to exactly what kombu's decoder gives."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from decimal import Decimal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from kombu.serialization import dumps as registry_dumps
from kombu.serialization import loads as registry_loads
from kombu.utils import json as kombu_json

from config import codec

plain = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=30,
)
typed = st.datetimes() | st.uuids() | st.decimals(allow_nan=False, allow_infinity=False) | st.binary(max_size=16)


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types all the way down (1 == 1.0 == True would hide a difference)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


@given(plain)
def test_plain_json_decodes_as_kombu_decodes_it(value: Any) -> None:
    encoded = kombu_json.dumps(value)
    for data in (encoded, encoded.encode(), bytearray(encoded.encode()), memoryview(encoded.encode())):
        assert same(codec.loads(data), kombu_json.loads(encoded))


@given(st.lists(plain | typed, max_size=4))
def test_kombu_typed_values_still_come_back_typed(values: list[Any]) -> None:
    encoded = kombu_json.dumps({"values": values})
    assert same(codec.loads(encoded), kombu_json.loads(encoded))


def test_what_orjson_refuses_kombu_decodes() -> None:
    for text in ('{"x": NaN}', "[Infinity, -Infinity]", "1e400", '"\\ud800"'):
        assert same(codec.loads(text), kombu_json.loads(text)), text
    assert isinstance(
        codec.loads('{"when": {"__type__": "datetime", "__value__": "2024-06-01T12:00:00"}}')["when"], dt.datetime
    )


def test_the_one_accepted_difference_integers_past_64_bits() -> None:
    """Documented in config/codec.py: orjson reads them as floats; tempr's messages carry none."""
    assert codec.loads(str(2**63 - 1)) == 2**63 - 1
    assert isinstance(codec.loads(str(10**30)), float)


def test_install_makes_celerys_json_decoder_this_one() -> None:
    codec.install()
    codec.install()  # idempotent
    answer = {"results": [{"id": "a", "scores": {"final": 0.25}}], "when": uuid.UUID(int=7), "d": Decimal("1.5")}
    content_type, encoding, payload = registry_dumps(answer, serializer="json")
    assert content_type == "application/json"
    back = registry_loads(payload, content_type, encoding, accept=["application/json"])
    assert back == answer and isinstance(back["when"], uuid.UUID)
    from kombu.serialization import registry

    assert registry._decoders["application/json"] is codec.loads
    assert registry._encoders["json"].encoder is codec.dumps


answers = st.dictionaries(st.text(max_size=8), plain | st.floats(), max_size=6)
"""Answers as pydantic writes them: plain JSON, NaN and infinities included (``ser_json_inf_nan``)."""


@given(answers, st.dictionaries(st.sampled_from(["status", "traceback", "children", "task_id"]), plain | typed))
def test_a_result_reuses_its_answers_text_and_decodes_to_the_same_value(answer: dict[str, Any], rest: Any) -> None:
    """The Celery result meta with an ``EncodedAnswer`` reads back exactly as kombu's own encoding of it."""
    meta = {**rest, "result": codec.EncodedAnswer(answer, kombu_json.dumps(answer))}
    plain_meta = {**rest, "result": dict(answer)}
    assert same(codec.loads(codec.dumps(meta)), kombu_json.loads(kombu_json.dumps(plain_meta)))


def test_the_answers_own_text_is_what_goes_into_the_result() -> None:
    """Proof that the answer is not encoded again: its stored text, even one kombu would not write,
    is what the result holds (in tempr that text is always the dict's own JSON)."""
    answer = codec.EncodedAnswer({"results": []}, '{"results":[],"marker":1}')
    out = codec.dumps({"status": "SUCCESS", "result": answer, "traceback": None})
    assert out.startswith('{"result": {"results":[],"marker":1}, "status": "SUCCESS"')
    assert codec.loads(out) == {"result": {"results": [], "marker": 1}, "status": "SUCCESS", "traceback": None}
    assert codec.loads(codec.dumps({"result": answer})) == {"result": {"results": [], "marker": 1}}


def test_an_encoded_answer_anywhere_else_is_an_ordinary_dict() -> None:
    """A webhook message carries the answer inside its args: kombu encodes the dict itself there."""
    answer = codec.EncodedAnswer({"results": [1]}, '{"results":[1],"marker":1}')
    for value in ([{"result": answer}], {"payload": answer}, answer, {"result": {"inner": answer}}):
        assert codec.dumps(value) == kombu_json.dumps(value)
    assert answer == {"results": [1]} and isinstance(answer, dict)
