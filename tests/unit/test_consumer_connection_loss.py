"""A lost broker connection never kills the worker: the close and the acks on the old channel are guarded."""

from __future__ import annotations

import logging

import pytest

from workers.consumer import _survive_cleared_client


def test_the_cleared_client_error_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    def ack(*_: object) -> None:
        raise AttributeError("'NoneType' object has no attribute 'hostname'")

    with caplog.at_level(logging.WARNING, logger="workers.consumer"):
        assert _survive_cleared_client("an ack", ack)() is None
    assert "an ack on the lost broker connection skipped" in caplog.text


def test_results_and_other_errors_pass_through() -> None:
    assert _survive_cleared_client("an ack", lambda x: x + 1)(1) == 2

    def boom() -> None:
        raise ValueError("not the cleared client")

    with pytest.raises(ValueError):
        _survive_cleared_client("a reject", boom)()
