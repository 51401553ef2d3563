"""The peer benchmark's CPU per recall, split by process (issue 12 asks where a recall's CPU goes)."""

from __future__ import annotations

from bench.peer_latency import cpu_rows
from bench.stack_procs import cpu_by_process


def test_cpu_is_summed_per_role_and_a_process_born_in_the_slice_counts_in_full() -> None:
    roles = {1: "gateway", 2: "analyse parent", 3: "analyse children", 4: "analyse children"}
    before = {1: 10.0, 2: 5.0, 3: 1.0}
    after = {1: 10.5, 2: 5.25, 3: 2.0, 4: 0.5, 9: 0.125}  # 4 was born during the slice; 9 has no role
    assert cpu_by_process(before, after, roles) == {
        "gateway": 0.5,
        "analyse parent": 0.25,
        "analyse children": 1.5,
        "other": 0.125,
    }


def test_the_rows_put_the_largest_process_first_and_leave_out_idle_ones() -> None:
    throughput = {
        "tempr": {"cpu_ms_by_process": {"redis": 3.0, "analyse children": 18.0, "retrieve parent": 0.01}},
        "hindsight": {"cpu_ms_by_process": {"server": 40.0}},
    }
    assert cpu_rows(throughput) == [
        ["tempr", "analyse children", "18.0"],
        ["tempr", "redis", "3.0"],
        ["hindsight", "server", "40.0"],
    ]
