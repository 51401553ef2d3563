"""The facts the ingest benchmark imports, and the Hindsight 1.1 peer importing the same facts.

With the LoCoMo dev data and the peer runner beside the repository (``../shared/bench``), the
facts are the LoCoMo dev conversations as ``locomo_convert.py`` writes them: per bank, a
``facts.jsonl`` for tempr and a ``hindsight.zip`` (document-transfer archive) for Hindsight,
the same facts in both. Without them, synthetic facts (``bench/synthetic.py``) and no peer row.

The peer is benchmark tooling only (never part of the test suite): it runs if its venv is
installed (``hindsight_peer.sh install``); this module starts it, imports every bank, reads
the per-bank import times and stops it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "bench"
PEER = Path(os.environ.get("TEMPR_BENCH_PEER_DIR", SHARED / "peer"))
LOCOMO = Path(os.environ.get("TEMPR_BENCH_LOCOMO_DIR", SHARED / "locomo-dev"))
PEER_ENV = {
    "HS_ROOT": os.environ.get("HS_ROOT", str(Path(os.environ.get("TMPDIR", "/tmp")) / "tempr-peer" / "hindsight")),
    "PGPORT": os.environ.get("PGPORT", "55441"),
    "API_PORT": os.environ.get("API_PORT", "18891"),
}


def convert_locomo(out: Path) -> list[Path]:
    """The LoCoMo dev banks as tempr JSONL + Hindsight archives; [] when the data or converter is missing."""
    script = PEER / "locomo_convert.py"
    if not (script.exists() and LOCOMO.exists()):
        return []
    subprocess.run(
        [sys.executable, str(script), "convert", "--locomo-dir", str(LOCOMO), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    return sorted(p for p in out.iterdir() if (p / "facts.jsonl").exists() and (p / "hindsight.zip").exists())


def peer_installed() -> bool:
    venv = Path(os.environ.get("HS_VENV", Path(PEER_ENV["HS_ROOT"]) / "venv"))
    return (PEER / "hindsight_peer.sh").exists() and (venv / "bin" / "python").exists()


def _peer(*args: str, timeout: float = 900) -> str:
    done = subprocess.run(
        [str(PEER / "hindsight_peer.sh"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **PEER_ENV},
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"hindsight_peer.sh {' '.join(args)} failed: {done.stderr[-1500:]}")
    return done.stdout


_LOADED = re.compile(r"^(\S+) completed ([0-9.]+)s", re.MULTILINE)


def peer_import(out: Path, facts: int) -> dict[str, Any]:
    """Start the peer, import every bank of ``out`` (timed per bank by the runner), stop it.

    The runner polls the import's status once a second, so each bank's time is rounded up
    by up to a second; the rate is reported from the sum of the per-bank times.
    """
    _peer("start", timeout=600)
    try:
        started = time.perf_counter()
        text = _peer("load-all", str(out))
        wall = time.perf_counter() - started
    finally:
        _peer("stop", timeout=120)
    per_bank = {m.group(1): float(m.group(2)) for m in _LOADED.finditer(text)}
    seconds = sum(per_bank.values())
    return {
        "facts": facts,
        "seconds": round(seconds, 1),
        "wall_s": round(wall, 1),
        "facts_per_s": round(facts / seconds, 1) if seconds else 0.0,
        "banks": per_bank,
    }
