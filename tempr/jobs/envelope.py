"""The job envelope: what every step of one recall carries about the *job* (not the query)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class JobEnvelope(BaseModel):
    """Job id, bank, absolute deadline and enqueue time (unix seconds), callback URL, cache key."""

    model_config = ConfigDict(extra="forbid")

    job_id: str
    bank_id: str | None = None
    deadline: float
    enqueued_at: float
    callback_url: str | None = None
    cache_key: str | None = None
