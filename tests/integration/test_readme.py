"""The README runs verbatim: the blocks marked ``<!-- readme: run -->`` are run, as written, in
the repository root against the test session's stack, after what `make demo` does (the sample
ingested into bank ``demo``). Each command must succeed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from readme_blocks import blocks

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo_bank(resources: Any, sample_facts: Path) -> str:
    """What `make demo` leaves behind: bank ``demo`` holding the sample."""
    from tempr.ingest.facts import parse_jsonl
    from tempr.ingest.pipeline import IngestDeps, ingest_facts

    facts = list(parse_jsonl(sample_facts.read_text().splitlines()))
    ingest_facts(
        "demo", facts, IngestDeps(resources.engine, resources.embedder, resources.extractor, resources.settings)
    )
    return "demo"


@pytest.mark.parametrize("index", [i for i, b in enumerate(blocks()) if b.run])
def test_marked_readme_block_runs(index: int, demo_bank: str, worker: Path) -> None:
    block = blocks()[index]
    venv_bin = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{venv_bin}:{os.environ.get('PATH', '')}"}
    script = "set -euo pipefail\nset -x\n" + block.text
    if not (ROOT / ".venv" / "bin" / "activate").exists():  # tests run from another interpreter
        script = script.replace(". .venv/bin/activate\n", "")
    done = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"README block failed:\n{done.stderr[-4000:]}\n{done.stdout[-2000:]}"
    assert "Traceback" not in done.stderr
    if "--trace" in block.text:
        assert "trace: why each memory is here" in done.stdout and "total" in done.stdout
