"""Settings are checked when they load, and every answer-changing setting is in the cache key."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from config.errors import ConfigError
from config.settings import Settings, get_settings, load_settings
from tempr.cli.main import main
from tempr.jobs.cache import settings_fingerprint

ROOT = Path(__file__).resolve().parents[2]
# Files on the recall path: every setting they read must either change the cache key or be
# listed here with the reason it cannot change an answer.
RECALL_PATH = [
    *sorted((ROOT / "tempr" / "recall").glob("*.py")),
    *sorted((ROOT / "tempr" / "store").glob("recall*.py")),
]
NOT_ANSWER = {
    "embed_batch_size": "batching only",
    "reranker_batch_size": "batching only",
    "reranker_device": "where the model runs",
}


def test_a_bad_number_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPR_RECALL_TIMEOUT_S", "abc")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert info.value.field == "TEMPR_RECALL_TIMEOUT_S"
    assert "'abc'" in str(info.value)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("TEMPR_TEMPORAL_LINK_TOP_K", "-1"),
        ("TEMPR_SEMANTIC_LINK_TOP_K", "-3"),
        ("TEMPR_SEMANTIC_LINK_THRESHOLD", "1.5"),
        ("TEMPR_TEMPORAL_LINK_WINDOW_HOURS", "0"),
    ],
)
def test_a_link_setting_out_of_range_is_refused_at_load(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    """Ingest read a negative k as "no links" and a cosine threshold above 1 as "never": refused instead."""
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert info.value.field == variable


def test_a_bad_strategy_boost_is_refused_at_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPR_RECALL_STRATEGY_BOOSTS", "grpah:high")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert info.value.field == "TEMPR_RECALL_STRATEGY_BOOSTS"
    assert "grpah" in str(info.value)


def test_boost_levels_take_mid_and_the_reference_medium(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPR_RECALL_STRATEGY_BOOSTS", "graph:mid,semantic:medium")
    assert load_settings().recall_strategy_boosts == "graph:mid,semantic:medium"


def test_the_cli_prints_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TEMPR_RECALL_TIMEOUT_S", "abc")
    get_settings.cache_clear()
    try:
        code = main(["services", "status"])
    finally:
        get_settings.cache_clear()
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "TEMPR_RECALL_TIMEOUT_S" in err


def _changed(name: str, value: Any) -> Any:
    """Another valid value for a setting of this type."""
    field = Settings.model_fields[name]
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value / 2 if isinstance(value, float) else value + 1
    if isinstance(value, list):
        return value[:1]
    if name == "recall_strategy_boosts":
        return "graph:high"
    literal = getattr(field.annotation, "__args__", None)
    if literal and all(isinstance(a, str) for a in literal):
        return next(a for a in literal if a != value)
    return f"{value}-other"


@pytest.mark.parametrize("name", Settings.answer_settings())
def test_every_answer_setting_changes_the_key(name: str) -> None:
    base = Settings()
    other = base.model_copy(update={name: _changed(name, getattr(base, name))})
    assert getattr(other, name) != getattr(base, name)
    assert settings_fingerprint(other) != settings_fingerprint(base)


def test_temporal_languages_is_part_of_the_key() -> None:
    base = Settings()
    assert settings_fingerprint(base) != settings_fingerprint(base.model_copy(update={"temporal_languages": ["en"]}))


def test_every_setting_the_recall_path_reads_is_in_the_key_or_explained() -> None:
    names = set(Settings.model_fields)
    read: set[str] = set()
    for path in RECALL_PATH:
        for match in re.finditer(r"\b(?:settings|s)\.([a-z_]+)\b", path.read_text(encoding="utf-8")):
            if match.group(1) in names:
                read.add(match.group(1))
    assert read, "the scan found no settings at all"
    missing = read - set(Settings.answer_settings()) - set(NOT_ANSWER)
    assert not missing, f"settings read on the recall path but not in the cache key: {sorted(missing)}"
