"""Start-up warm-up: load what the first query would otherwise pay for."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime

from tempr.temporal import _fallback
from tempr.temporal._analyser import analyse, normalise_languages

_PROBES = (
    "What did Alice do last spring?",
    "between March and June 2023",
    "before Alice joined Google",
    "hace 3 días",
    "上周",
    "지난주",
    "вчера",
)


def warm_up(languages: Sequence[str] | None = None) -> float:
    """Run a few queries and load dateparser's locales for the fallback; returns seconds.

    Call it once per worker process at start-up (it costs ~0.5-1 s, mostly
    importing dateparser); afterwards no query loads anything.
    """
    started = time.perf_counter()
    langs = normalise_languages(languages)
    ref = datetime(2024, 1, 1)
    for probe in _PROBES:
        analyse(probe, ref, languages=sorted(langs))
    _fallback.warm(langs)
    return time.perf_counter() - started
