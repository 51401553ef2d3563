"""The ingest section renders every run, the peer ratio and the stage shares from a result."""

from __future__ import annotations

from bench.ingest import IngestConfig, IngestResult
from bench.ingest_render import render


def test_render_ratios_and_stages() -> None:
    result = IngestResult(IngestConfig(), source="LoCoMo dev (5 conversations)", facts=1000)
    result.embedder = {"kind": "onnx", "before": 300.0, "after": 260.0, "texts_per_s": 280.0}
    stages = {"embed": 3.0, "entities": 0.5, "write_units": 0.3}
    result.runs = {
        "tempr single process, entities extracted": {
            "inserted": 1000,
            "elapsed_s": 4.0,
            "facts_per_s": 250.0,
            "cpu_ms_per_fact": 3.9,
            "stages": stages,
        },
        "tempr via workers (2 processes), entities extracted": {
            "inserted": 1000,
            "elapsed_s": 5.0,
            "facts_per_s": 200.0,
            "cpu_ms_per_fact": 4.5,
        },
    }
    result.peer = {"facts": 1000, "seconds": 20.0, "facts_per_s": 50.0, "banks": {"a": 20.0}}
    result.cli_250 = {"wall_s": 0.9}
    text = render(result)
    assert "| tempr single process, entities extracted | 1,000 | 4.0 | 250 | 3.9 | 89 % | 5.0× |" in text
    assert "Hindsight 1.1 peer" in text and "| 50 |" in text
    assert "3.00 (75 %)" in text and "0.9" in text and "No GPU" in text


def test_each_run_is_measured_against_the_embedder_rates_around_it() -> None:
    result = IngestResult(IngestConfig(), source="synthetic", facts=100)
    result.embedder = {"kind": "onnx", "rates": [400.0, 300.0, 200.0], "texts_per_s": 300.0}
    result.runs = {
        "tempr single process, entities given": {
            "inserted": 100,
            "elapsed_s": 0.5,
            "facts_per_s": 200.0,
            "cpu_ms_per_fact": 3.0,
            "embedder_texts_per_s": 250.0,  # the machine slowed down during this run
        },
    }
    text = render(result)
    assert "| tempr single process, entities given | 100 | 0.5 | 200 | 3.0 | 80 % | – |" in text
    assert "400.0, 300.0, 200.0" in text


def test_the_250_fact_command_is_shown_through_the_gateway_and_without_one() -> None:
    result = IngestResult(IngestConfig(), source="synthetic", facts=100)
    result.embedder = {"kind": "onnx", "rates": [400.0], "texts_per_s": 400.0}
    timeline = {"probe": 0.0, "submit": 0.05, "staging": 0.4, "publish": 0.1, "chunks": 2}
    result.cli_250 = {
        "facts": 250,
        "gateway": {"wall_s": [0.71, 0.8, 0.7], "median_wall_s": 0.71, "timeline": timeline},
        "celery": {"wall_s": [1.3, 1.25, 1.4], "median_wall_s": 1.3, "timeline": {**timeline, "probe": 0.2}},
    }
    text = render(result)
    assert "through the local gateway" in text and "**0.71 s** median (0.71, 0.80, 0.70" in text
    assert "without a gateway" in text and "1.30 s (1.30, 1.25, 1.40" in text


def test_the_database_the_run_wrote_into_is_said() -> None:
    result = IngestResult(IngestConfig(), source="synthetic", facts=100)
    result.embedder = {"kind": "onnx", "rates": [400.0], "texts_per_s": 400.0}
    assert "The database held" not in render(result)  # a result from before the field
    result.database = {"memories": 112_420, "bytes": 3 * 2**30, "shared_buffers": "512MB"}
    assert "The database held 112,420 memories (3.0 GiB; shared_buffers 512MB) before the run." in render(result)
