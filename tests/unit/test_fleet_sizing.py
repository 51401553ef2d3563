"""The sizing model (bench/fleet/sizing.py) and docs/deploy.md agree, and the model's arithmetic
is Little's law: slots = rate x slot time / utilisation, rounded up."""

from __future__ import annotations

from pathlib import Path

from bench.fleet.sizing import COSTS, UTILISATION, slots, table

DOC = Path(__file__).resolve().parents[2] / "docs" / "deploy.md"


def test_docs_show_the_models_table() -> None:
    assert table() in DOC.read_text()


def test_slots_follow_littles_law() -> None:
    fuse = next(c for c in COSTS if c.queue == "fuse")
    assert slots(100, fuse) == -(-100 * fuse.slot_ms // (1000 * UTILISATION))
    for c in COSTS:  # ten times the rate: ten times the slots, give or take the rounding up
        assert 10 * (slots(100, c) - 1) <= slots(1000, c) <= 10 * slots(100, c)
    assert all(slots(0, c) == 0 for c in COSTS)
