"""Recall worker processes run BLAS on one thread (``workers.app._one_blas_thread``)."""

from __future__ import annotations

from threadpoolctl import threadpool_info, threadpool_limits


def _blas_threads() -> set[int]:
    return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}


def test_a_recall_worker_process_limits_blas_to_one_thread(monkeypatch) -> None:
    import numpy as np

    from workers import app as worker_app

    np.ones((2, 2)) @ np.ones((2, 2))  # BLAS loaded
    before = threadpool_info()
    try:
        monkeypatch.setattr(worker_app, "_consumes", lambda _app, queue: queue == "ingest")
        worker_app._one_blas_thread()  # an ingest-only worker keeps the default
        assert _blas_threads() == {p["num_threads"] for p in before if p["user_api"] == "blas"}
        monkeypatch.setattr(worker_app, "_consumes", lambda _app, queue: queue == "fuse")
        worker_app._one_blas_thread()
        assert _blas_threads() == {1}
    finally:
        threadpool_limits({p["prefix"]: p["num_threads"] for p in before})
