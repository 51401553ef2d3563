"""Job records keep one compressed copy of the answer (and still read records written before)."""

from __future__ import annotations

import json

from tempr.jobs.records import RESULT_FIELD, _decode, _shape, pack_json


def test_the_answer_is_stored_compressed_and_read_back_exactly() -> None:
    answer = {"results": [{"id": f"f{i}", "text": "Alice joined Google in March 2023. " * 3} for i in range(40)]}
    packed = pack_json(json.dumps(answer).encode())
    assert len(packed) * 3 < len(json.dumps(answer))
    record = _decode({b"job_id": b"j", b"status": b"succeeded", RESULT_FIELD.encode(): packed})
    assert _shape(record, [])["result"] == answer


def test_records_written_before_compression_still_read() -> None:
    record = _decode({b"job_id": b"j", b"status": b"succeeded", b"result": json.dumps({"results": []}).encode()})
    assert _shape(record, [])["result"] == {"results": []}
