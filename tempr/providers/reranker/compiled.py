"""The learned ranker's trees compiled to machine code: LightGBM's scores, about five times faster.

LightGBM's ``Booster.predict`` walks each tree through generic node arrays. For the shipped model
(three members of 200 trees) and a LoCoMo recall's 266 candidates that took 4.3 ms of the rank
stage's 12 ms; lleaves (LightGBM's text model compiled through LLVM into one native function per
member, with LightGBM's missing-value rules) scores the same rows in 0.8 ms, equal to LightGBM's
to 1e-14 (BENCHMARKS.md, "The rank stage: compiled trees and memoised tokens"). Compiling takes
about two seconds a member, so the object code is cached in the model folder
(``TEMPR_MODEL_CACHE_DIR``), keyed by the member's text, the compiler's versions and this machine's
CPU (code built for one CPU may use instructions another lacks); a process that finds it loads it
in milliseconds. A process holding the compiled ranker is about 44 MB larger (RSS), 29 MB of it
llvmlite's library pages, shared between processes, and 14 MB its own.

One difference, which no feature meets: where a split treats zero as missing, LightGBM counts any
value within 1e-35 of zero as zero, lleaves only 0.0 itself; the ranker's features (cosines, their
gaps, shares and counts) are never that small without being 0.0.

``TEMPR_RANKER_RUNTIME=lightgbm`` keeps LightGBM's own predict; a machine where compiling fails
falls back to it with one warning (``compile_members`` returns None).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from tempr.providers.build_lock import build_lock

log = logging.getLogger(__name__)

COMPILE_VERSION = 1
"""Bump when the compile options below change, so cached object code is rebuilt."""


class CompiledTrees:
    """One member's trees as a native function: ``predict`` is ``Booster.predict`` (raw scores)."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def predict(self, matrix: np.ndarray) -> np.ndarray:
        # One thread: a recall is one small batch, and each worker process has its own core share.
        return np.asarray(self._model.predict(np.ascontiguousarray(matrix, dtype=np.float64), n_jobs=1))


def cache_key(member: str) -> str:
    """What the object code depends on: the trees, the compiler's versions, the CPU it runs on."""
    import llvmlite
    import llvmlite.binding as llvm

    host = f"{llvm.get_host_cpu_name()}|{llvm.get_host_cpu_features().flatten()}"
    versions = f"{COMPILE_VERSION}|{metadata.version('lleaves')}|{llvmlite.__version__}"
    return hashlib.sha256(f"{versions}|{host}|{member}".encode()).hexdigest()[:16]


def compile_member(member: str, cache_dir: Path) -> CompiledTrees:
    """One member (LightGBM's text format) compiled, or loaded from the cache folder."""
    import lleaves

    target = cache_dir / f"ranker-trees-{cache_key(member)}.o"
    with tempfile.TemporaryDirectory(dir=_made(cache_dir)) as tmp:
        source = Path(tmp) / "member.txt"  # lleaves reads a model file
        source.write_text(member, encoding="utf-8")
        model = lleaves.Model(model_file=str(source))
        if not target.exists():
            with build_lock(cache_dir):
                if not target.exists():  # not built by another process while this one waited
                    built = Path(tmp) / "member.o"
                    model.compile(cache=str(built))
                    os.replace(built, target)
                    return CompiledTrees(model)
        model.compile(cache=str(target))
    return CompiledTrees(model)


def compile_members(members: Sequence[str], cache_dir: Path) -> list[CompiledTrees] | None:
    """Every member compiled; None (LightGBM predicts instead) where the compiler cannot run here."""
    try:
        return [compile_member(m, cache_dir) for m in members]
    except Exception as exc:  # noqa: BLE001 - any failure of the optional fast path means LightGBM's own
        log.warning(
            "the ranker's trees could not be compiled (%s: %s); LightGBM predicts instead", type(exc).__name__, exc
        )
        return None


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder
