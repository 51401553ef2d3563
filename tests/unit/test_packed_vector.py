"""The query embedding crosses hops packed (base64 float64): lossless, and a float list still reads."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from tempr.recall.plan import PackedVector


class Holder(BaseModel):
    v: PackedVector


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=400))
def test_json_round_trip_is_exact(values: list[float]) -> None:
    wire = Holder(v=values).model_dump(mode="json")
    assert isinstance(wire["v"], str)
    assert Holder.model_validate(json.loads(json.dumps(wire))).v == values


def test_python_dumps_stay_lists_and_lists_are_read() -> None:
    assert Holder(v=[0.5, -1.0]).model_dump() == {"v": [0.5, -1.0]}
    assert Holder.model_validate({"v": [1, 2.5]}).v == [1.0, 2.5]


def test_a_truncated_vector_is_refused() -> None:
    with pytest.raises(ValidationError):
        Holder.model_validate({"v": "AAAA"})  # 3 bytes: not whole float64 values
