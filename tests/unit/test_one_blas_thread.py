"""The rank features run on one BLAS thread in every process (``scoring.one_blas_thread``), so an
answer's scores do not depend on which process computed it (2026-12-07: on an AMD EPYC, a float32
product differed in its last bits between 1 and 2 OpenBLAS threads)."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from tempr.recall.scoring import one_blas_thread


def _numpy_blas_threads() -> set[int]:
    """The thread count of the BLAS numpy itself calls (a test session may load others later, e.g.
    scipy's own OpenBLAS through scikit-learn; the rank features' products are numpy's)."""
    numpy_blas = {i["filepath"] for i in threadpool_info() if i["user_api"] == "blas" and "numpy" in i["filepath"]}
    numpy_blas = numpy_blas or {i["filepath"] for i in threadpool_info() if i["user_api"] == "blas"}
    return {int(i["num_threads"]) for i in threadpool_info() if i["filepath"] in numpy_blas}


def test_one_thread_inside_and_the_process_default_restored_after() -> None:
    with threadpool_limits(2, user_api="blas"):
        assert _numpy_blas_threads() == {2}
        with one_blas_thread():
            assert _numpy_blas_threads() == {1}
        assert _numpy_blas_threads() == {2}


def test_a_product_inside_equals_the_same_product_on_one_thread() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(12, 384)).astype(np.float32)
    b = rng.normal(size=(384, 4000)).astype(np.float32)
    with threadpool_limits(1, user_api="blas"):
        single = a @ b
    with threadpool_limits(2, user_api="blas"), one_blas_thread():
        inside = a @ b
    assert np.array_equal(single, inside)
