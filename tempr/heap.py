"""Keep CPython's full collections off the request path of long-lived processes.

Once a worker or the gateway has loaded its models, tables and modules it holds a few hundred
thousand objects that live as long as the process. CPython's generation-2 collection walks all of
them whenever enough new objects have survived: measured in one process answering recalls on a
10,000-fact bank, about once every 20 recalls and about 100 ms each, which made most of the p95
(BENCHMARKS.md, "Full collections off the request path"). ``gc.freeze()`` after warm-up moves what
exists then into the permanent generation, which no collection scans. Objects made later are
collected as before, so the garbage cycles of requests are still freed.
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger(__name__)


def freeze_warm_heap(enabled: bool, where: str) -> int:
    """Collect once, then freeze every object tracked now; the number frozen so far (0 when off).

    Called at the end of a process's warm-up, and in a prefork parent before it forks, so that
    children neither rescan nor dirty (copy-on-write) the pages of what they inherited."""
    if not enabled:
        return 0
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.info("%s: %d warm objects frozen out of the garbage collector", where, frozen)
    return frozen
