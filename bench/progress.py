"""Progress bars (tqdm on stderr) and a phase logger, so stdout keeps only the tables."""

from __future__ import annotations

import sys
import time

from tqdm import tqdm

Bar = tqdm


def bar(total: int, desc: str, unit: str = "it") -> tqdm:
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, mininterval=1.0, leave=False)


_T0 = time.monotonic()


def log(message: str) -> None:
    print(f"[bench {time.monotonic() - _T0:7.1f}s] {message}", file=sys.stderr, flush=True)
