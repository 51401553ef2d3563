"""Pure metric helpers: evidence recall@k and latency percentiles."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

DIA_ID = re.compile(r"^D\d+:\d+$")
KS = (5, 10, 25, 50)


def split_dia_ids(value: object) -> list[str]:
    """Well-formed ``D<session>:<turn>`` ids from an evidence entry or a metadata value.

    LoCoMo has a few malformed entries (``"D8:6; D9:17"``, a bare ``"D"``, ``"D:11:26"``):
    split on ``;``, ``,`` and whitespace, and drop whatever does not match.
    """
    if isinstance(value, (list, tuple)):
        return [i for v in value for i in split_dia_ids(v)]
    if not isinstance(value, str):
        return []
    return [p for p in re.split(r"[;,\s]+", value) if DIA_ID.match(p)]


def evidence_ids(evidence: Iterable[object]) -> list[str]:
    return list(dict.fromkeys(split_dia_ids(list(evidence))))


def recall_at_k(ranked_dia_ids: Sequence[Sequence[str]], evidence: Iterable[str], k: int) -> float:
    """Fraction of the evidence ids covered by the top-k results (each result may cite several turns).

    ``ranked_dia_ids[r]`` are the dia_ids of the result at rank r+1. Evidence must be non-empty.
    """
    wanted = set(evidence)
    if not wanted:
        raise ValueError("recall@k is undefined for a question with no evidence")
    found = {d for ids in ranked_dia_ids[:k] for d in ids}
    return len(wanted & found) / len(wanted)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default), q in [0, 100]."""
    if not values:
        return float("nan")
    data = sorted(values)
    pos = (len(data) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)
