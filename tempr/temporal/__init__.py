"""Query-time temporal analysis: which time windows (and which event anchors) a
recall query refers to.

    >>> from datetime import datetime
    >>> from tempr.temporal import analyse
    >>> a = analyse("What did Alice do last spring?", datetime(2024, 6, 15))
    >>> a.windows[0].start.date(), a.windows[0].end.date(), a.windows[0].granularity
    (datetime.date(2024, 3, 1), datetime.date(2024, 5, 31), 'season')

Pure: no I/O, no database, no models. Windows are timezone-aware UTC with both
ends inclusive (``end`` is the start of the next unit minus 1 µs). See
docs/temporal.md for what is understood and what deliberately is not.
"""

from tempr.temporal._analyser import SUPPORTED_LANGUAGES, analyse
from tempr.temporal._combine import HORIZON_YEARS
from tempr.temporal._rules_relative import RECENT_DAYS
from tempr.temporal._warmup import warm_up
from tempr.temporal.windows import bucket_count, window_from_anchor

__all__ = [
    "HORIZON_YEARS",
    "RECENT_DAYS",
    "SUPPORTED_LANGUAGES",
    "analyse",
    "bucket_count",
    "warm_up",
    "window_from_anchor",
]
