"""The three multiplicative boosts of combined scoring: recency, temporal proximity, proof.

::

    final = ce x (1 + 0.2 (recency - 0.5)) x (1 + 0.2 (temporal - 0.5)) x (1 + 0.1 (proof - 0.5))

Each signal is in [0, 1] with 0.5 neutral, so each boost is centred on 1.0 and its
alpha caps the swing (+-10 %, +-10 %, +-5 %; at most +27 % / -23 % together).
Multiplicative rather than additive so a secondary signal moves a score in
proportion to its relevance: a barely relevant but recent memory cannot leapfrog a
highly relevant old one.

All clock values are injected (``now`` is the query timestamp), and naive datetimes
are read as UTC so mixing naive and aware values never raises.
"""

from __future__ import annotations

import math
from datetime import datetime

from tempr.core.timeutil import as_utc
from tempr.core.types import TimeWindow

NEUTRAL = 0.5
DEFAULT_ALPHAS: tuple[float, float, float] = (0.2, 0.2, 0.1)
"""Alphas for (recency, temporal proximity, proof count), as in the seed."""
RECENCY_WINDOW_DAYS = 365.0
RECENCY_FLOOR = 0.1
"""An old memory is penalised, never zeroed: a 3-year-old fact can still be the answer."""
SECONDS_PER_DAY = 86400.0


def clamp(value: float, low: float, high: float) -> float:
    """``value`` limited to ``[low, high]``."""
    return max(low, min(high, value))


def days_between(a: datetime, b: datetime) -> float:
    """``a - b`` in (fractional) days, timezone-safe."""
    return (as_utc(a) - as_utc(b)).total_seconds() / SECONDS_PER_DAY


def boost(signal: float, alpha: float) -> float:
    """``1 + alpha (signal - 0.5)``: 1.0 at the neutral signal, ``1 +- alpha/2`` at the ends."""
    return 1.0 + alpha * (signal - NEUTRAL)


def recency_signal(occurred: datetime | None, now: datetime) -> float:
    """Linear decay over a year: ``clamp(1 - days_ago / 365, 0.1, 1)``.

    Undated memories are neutral (0.5): no evidence either way. A date after
    ``now`` counts as brand new (1.0) rather than extrapolating past the top.
    """
    if occurred is None:
        return NEUTRAL
    days_ago = days_between(now, occurred)
    return clamp(1.0 - days_ago / RECENCY_WINDOW_DAYS, RECENCY_FLOOR, 1.0)


def temporal_proximity_signal(date: datetime | None, window: TimeWindow | None) -> float:
    """How close ``date`` is to the queried window's centre: ``1 - min(d / (days/2), 1)``.

    * No window (the query names no time): 0.5 for everyone, i.e. no effect.
    * Undated memory under a temporal query: 0.5 as well. Penalising it (0.0)
      would punish missing metadata rather than a wrong date; a neutral value lets
      the cross-encoder decide. (The reference gives 0.5 here too.)
    * The reference point is ``window.centre``, which is the anchor for open-ended
      windows ("before Alice joined Google"): closeness to the anchor event is what
      such a query asks about. The half-width is half the window's length
      (``window.days / 2``, at least half a day), so a memory at the centre scores
      1.0, one at a closed window's edge 0.0, and one beyond it 0.0. For an open
      window, a memory on the far side of the anchor (outside the window) is 0.0 too.
    """
    if window is None or date is None:
        return NEUTRAL
    if window.open_side and not window.start <= as_utc(date) <= window.end:
        return 0.0  # the wrong side of the anchor: "before X" must not favour what came after X
    half_width = window.days / 2.0
    distance = abs(days_between(date, window.centre))
    return 1.0 - min(distance / half_width, 1.0)


def proof_signal(proof_count: int) -> float:
    """Evidence strength of an observation: ``clamp(0.5 + ln(count) / 10, 0, 1)``.

    Logarithmic so the first few corroborating sources matter and the signal
    saturates at ~148 sources. A count below 1 (not a consolidated observation,
    or missing) is neutral, which also keeps ``ln`` defined.
    """
    if proof_count < 1:
        return NEUTRAL
    return clamp(NEUTRAL + math.log(proof_count) / 10.0, 0.0, 1.0)


def _check_unit(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:  # also rejects NaN
        raise ValueError(f"{name} must be in [0, 1], got {value}")


def combined_score(
    ce: float,
    *,
    recency: float,
    temporal: float,
    proof: float,
    alphas: tuple[float, float, float] = DEFAULT_ALPHAS,
) -> tuple[float, dict[str, float]]:
    """The final score and its parts (for the trace), from normalised inputs in [0, 1].

    Out-of-range inputs raise ValueError: they mean an upstream normalisation bug,
    and clamping here would hide it. Component keys follow the reference trace's
    ``score_components`` names.
    """
    for name, value in (("ce", ce), ("recency", recency), ("temporal", temporal), ("proof", proof)):
        _check_unit(name, value)
    recency_alpha, temporal_alpha, proof_alpha = alphas
    recency_boost = boost(recency, recency_alpha)
    temporal_boost = boost(temporal, temporal_alpha)
    proof_boost = boost(proof, proof_alpha)
    final = ce * recency_boost * temporal_boost * proof_boost
    components = {
        "cross_encoder_score_normalized": ce,
        "recency": recency,
        "temporal": temporal,
        "proof_norm": proof,
        "recency_boost": recency_boost,
        "temporal_boost": temporal_boost,
        "proof_boost": proof_boost,
        "combined_score": final,
    }
    return final, components
