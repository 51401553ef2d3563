"""`tempr api` runs its query embedder on one thread, however the gateway is started.

`tempr services up` passed TEMPR_EMBEDDER_THREADS=1 to the gateway it starts; a gateway started by
hand (or by the peer benchmark) got ONNX Runtime's default, a spinning thread per core, and used
26.9 ms of CPU per recall at saturation against the services gateway's 11-13.
"""

from __future__ import annotations

import argparse

import pytest


@pytest.mark.parametrize(("preset", "expected"), [(None, 1), ("2", 2)])
def test_the_gateway_embeds_on_one_thread_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch, preset: str | None, expected: int
) -> None:
    import uvicorn

    from config.settings import get_settings
    from tempr.cli import cmd_api

    monkeypatch.setenv("TEMPR_EMBEDDER_THREADS", preset or "")  # recorded: what run() sets is undone after
    if preset is None:
        monkeypatch.delenv("TEMPR_EMBEDDER_THREADS")
    served: list[dict] = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **kw: served.append(kw))
    try:
        args = argparse.Namespace(host=None, port=None, workers=1, log_level="info")
        assert cmd_api.run(args) == 0
        assert served and get_settings().embedder_threads == expected
    finally:
        get_settings.cache_clear()
