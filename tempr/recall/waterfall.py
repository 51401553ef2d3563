"""The per-stage timings of a recall laid out as a waterfall: queue wait vs work, step by step.

``timings_ms`` (the response's flat dict) names waits ``queue.<step>`` and work ``<step>``; this
puts them on one time line from enqueue (0 ms) so a reader sees where the time went. Strategies
run side by side: each starts after its own queue wait, and the next step starts when the slowest
has finished (the ``strategies`` span). The in-process path has no queue waits. Pure: the CLI's
``--trace`` table uses it; the console (tempr/api/console/console.js) mirrors it in the browser.
"""

from __future__ import annotations

from dataclasses import dataclass

STRATEGIES = ("semantic", "keyword", "graph", "temporal")


@dataclass(frozen=True)
class Bar:
    step: str
    start_ms: float
    wait_ms: float
    work_ms: float

    @property
    def end_ms(self) -> float:
        return self.start_ms + self.wait_ms + self.work_ms


def waterfall(timings: dict[str, float]) -> tuple[list[Bar], float]:
    """The bars in time order and the total (the ``total`` entry, else the end of the last bar)."""
    t = {k: float(v) for k, v in timings.items() if isinstance(v, int | float)}
    bars: list[Bar] = []
    cursor = 0.0

    def step(name: str, wait_key: str, work_keys: tuple[str, ...]) -> None:
        nonlocal cursor
        if wait_key not in t and not any(k in t for k in work_keys):
            return
        bar = Bar(name, cursor, t.get(wait_key, 0.0), sum(t.get(k, 0.0) for k in work_keys))
        bars.append(bar)
        cursor = bar.end_ms

    step("start", "queue.start", ("cache_lookup", "analyse"))
    group_start = cursor
    for name in STRATEGIES:
        if f"strategy.{name}" in t:
            bars.append(
                Bar(f"strategy.{name}", group_start, t.get(f"queue.strategy.{name}", 0.0), t[f"strategy.{name}"])
            )
    if "strategies" in t:
        cursor = group_start + t["strategies"]
    for name in ("fuse", "rerank", "finish"):
        step(name, f"queue.{name}", (name,))
    total = t.get("total", max((b.end_ms for b in bars), default=0.0))
    return bars, total
