"""BENCHMARKS.md section replacement and table formatting (bench.report), scale fits (bench.scale)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bench import report
from bench.scale import crossing, fit

DOC = """# title

intro text

<!-- bench:temporal:start -->
temporal body
<!-- bench:temporal:end -->

<!-- bench:quality:start -->
old quality
<!-- bench:quality:end -->

footer
"""


def test_replace_section_changes_only_its_own_block() -> None:
    out = report.replace_section(DOC, "quality", "new quality\n\nmore")
    assert "new quality\n\nmore" in out and "old quality" not in out
    assert out.startswith("# title\n\nintro text\n\n<!-- bench:temporal:start -->\ntemporal body\n")
    assert out.endswith("<!-- bench:quality:end -->\n\nfooter\n")
    assert report.read_section(out, "temporal") == "temporal body"


def test_replace_section_appends_a_missing_section_and_is_idempotent() -> None:
    once = report.replace_section(DOC, "latency", "lat")
    assert once.startswith(DOC) and once.endswith("<!-- bench:latency:start -->\nlat\n<!-- bench:latency:end -->\n")
    assert report.replace_section(once, "latency", "lat") == once


def test_names_do_not_collide() -> None:
    out = report.replace_section(DOC, "quality-extra", "x")
    assert report.read_section(out, "quality") == "old quality"
    assert report.read_section(out, "quality-extra") == "x"


def test_write_section_creates_the_file_with_the_header_and_keeps_others(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    report.write_section("a", "first", path)
    report.write_section("b", "second", path)
    report.write_section("a", "third", path)
    text = path.read_text()
    assert text.startswith("# tempr benchmarks")
    assert "CC BY-NC 4.0" in text
    assert report.read_section(text, "a") == "third"
    assert report.read_section(text, "b") == "second"
    assert text.index("bench:a:start") < text.index("bench:b:start")


def test_table_and_fmt() -> None:
    assert report.table(["x", "y"], [["a", 1], ["b", 2]]) == "| x | y |\n|:---|---:|\n| a | 1 |\n| b | 2 |"
    assert report.fmt(1234.567, 1) == "1,234.6"
    assert report.fmt(float("nan")) == "–"
    assert report.fmt(None) == "–"
    assert report.fmt(12000) == "12,000"


def test_machine_line_names_cores_and_ram() -> None:
    line = report.machine_line()
    assert "cores" in line and "GiB RAM" in line


def test_power_law_fit_and_crossing() -> None:
    value, b = fit({10_000: 10.0, 100_000: 100.0}, 1_000_000)
    assert b == pytest.approx(1.0) and value == pytest.approx(1000.0)
    value, b = fit({1_000: 5.0, 10_000: 10.0, 100_000: 20.0}, 1_000_000)  # the two largest sizes count
    assert b == pytest.approx(math.log10(2)) and value == pytest.approx(40.0)
    assert crossing({10_000: 10.0, 100_000: 100.0}, 1000.0) == pytest.approx(1_000_000)
    assert crossing({10_000: 10.0, 100_000: 9.0}, 1000.0) is None
    value, b = fit({10_000: 0.0, 100_000: 0.01}, 1_000_000)  # negligible stages are not fitted
    assert b != b and value == 0.01


def test_ensure_sections_adds_missing_placeholders_in_order_and_keeps_existing(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    path.write_text(DOC)
    report.ensure_sections(["summary", "quality", "latency"], path)
    text = path.read_text()
    assert report.read_section(text, "quality") == "old quality"
    assert text.index("bench:summary:start") < text.index("bench:latency:start")
    assert "not generated yet" in report.read_section(text, "summary")
    before = path.read_text()
    report.ensure_sections(["summary"], path)
    assert path.read_text() == before


SCALE = """<!-- bench:scale:start -->
## Scale: latency and memory against bank size

Measured at 10,000, 100,000, 1,000,000 facts (synthetic banks, real embeddings); the 10,000,000 column is extrapolated.
<!-- bench:scale:end -->
"""


def test_a_scale_run_of_fewer_sizes_would_drop_the_recorded_ones() -> None:
    from bench.scale import recorded_sizes, sizes_it_would_drop

    assert recorded_sizes(SCALE) == {10_000, 100_000, 1_000_000}
    assert sizes_it_would_drop(SCALE, (10_000, 100_000)) == [1_000_000]  # `tempr bench all`: kept, not written
    assert sizes_it_would_drop(SCALE, (10_000, 100_000, 1_000_000)) == []
    assert sizes_it_would_drop("# no scale section yet\n", (10_000,)) == []
