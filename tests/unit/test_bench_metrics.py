"""Evidence recall@k, dia_id parsing and percentiles (bench.metrics)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.metrics import evidence_ids, median, percentile, recall_at_k, split_dia_ids


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("D1:3", ["D1:3"]),
        ("D8:6; D9:17", ["D8:6", "D9:17"]),
        ("D", []),
        ("D:11:26", []),
        ("D15:3,D15:5", ["D15:3", "D15:5"]),
        (["D2:1", "D2:2 D3:4"], ["D2:1", "D2:2", "D3:4"]),
        (None, []),
        (7, []),
    ],
)
def test_split_dia_ids_keeps_only_well_formed_ids(raw: object, expected: list[str]) -> None:
    assert split_dia_ids(raw) == expected


def test_evidence_ids_dedupes_in_order() -> None:
    assert evidence_ids(["D1:2", "D1:2; D3:4", "D"]) == ["D1:2", "D3:4"]


def test_recall_at_k_counts_evidence_covered_by_top_k() -> None:
    ranked = [["D1:1"], ["D2:2", "D2:3"], ["D9:9"], ["D3:3"]]
    evidence = ["D2:3", "D3:3"]
    assert recall_at_k(ranked, evidence, 1) == 0.0
    assert recall_at_k(ranked, evidence, 2) == 0.5
    assert recall_at_k(ranked, evidence, 4) == 1.0
    assert recall_at_k(ranked, evidence, 50) == 1.0  # k beyond the list: everything returned counts


def test_recall_at_k_duplicates_in_results_do_not_count_twice() -> None:
    assert recall_at_k([["D1:1"], ["D1:1"]], ["D1:1", "D2:2"], 2) == 0.5


def test_recall_at_k_refuses_questions_without_evidence() -> None:
    with pytest.raises(ValueError):
        recall_at_k([["D1:1"]], [], 5)


@given(
    st.lists(
        st.lists(st.sampled_from([f"D{i}:{j}" for i in range(1, 4) for j in range(1, 4)]), max_size=3), max_size=20
    ),
    st.sets(st.sampled_from([f"D{i}:{j}" for i in range(1, 4) for j in range(1, 4)]), min_size=1),
)
def test_recall_at_k_is_a_fraction_and_monotone_in_k(ranked: list[list[str]], evidence: set[str]) -> None:
    values = [recall_at_k(ranked, evidence, k) for k in (1, 5, 10, 25, 50)]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert values == sorted(values)


def test_percentile_interpolates_like_numpy() -> None:
    data = [10.0, 20.0, 30.0, 40.0]
    assert percentile(data, 50) == 25.0
    assert percentile(data, 0) == 10.0
    assert percentile(data, 100) == 40.0
    assert percentile(data, 95) == pytest.approx(38.5)
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert percentile([], 50) != percentile([], 50)  # NaN for no data
