"""The job layer: everything about a recall *job* as opposed to the recall maths.

    records.py        job records in Redis (status, result/error, deliveries, idempotency keys)
    cache.py          the recall result cache (key derivation, get/set)
    redis_client.py   this process's Redis client for both, with its breaker
    keys.py           every Redis key tempr writes
    webhooks.py       signing, backoff
    callback_guard.py which callback URLs may be called, and the pinned address to connect to
    envelope.py       the typed job envelope every recall step carries
    outcome.py        how a job ends, exactly once: ``succeed_job`` / ``fail_job``
    status.py         ``job_status``: the record, reconciled with Celery's view

Nothing here imports ``workers`` or ``tasks``: the Celery app and metrics are passed in.
"""
