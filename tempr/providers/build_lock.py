"""One builder at a time for files a model provider builds once per machine and caches.

``tempr services up`` starts several processes at once (the gateway and each worker's pool), and
on a new machine each finds the cached file missing: the ONNX export of the embedder, the learned
ranker's compiled trees. They take turns on a lock file in the cache folder, so one builds while
the others wait and then find the file; builders write to a temporary name and rename, so a
reader never sees half a file.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def build_lock(cache_dir: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``<cache_dir>/.build.lock``; the kernel drops it if the holder dies."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    with (cache_dir / ".build.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
