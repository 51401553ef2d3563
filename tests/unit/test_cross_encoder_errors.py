"""A cross-encoder that cannot load is a clear setting error, found before any pool starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.errors import ConfigError
from tempr.cli.cmd_services import _check_cross_encoder
from tempr.providers.reranker import cross_encoder
from tempr.providers.reranker.cross_encoder import CrossEncoderReranker, model_error


def test_model_error_names_a_missing_folder_a_file_and_an_uncached_name(tmp_path: Path) -> None:
    assert model_error(str(tmp_path)) is None  # a folder is tried (the loader says what is wrong in it)
    (tmp_path / "weights.bin").write_bytes(b"")
    assert "is a file" in (model_error(str(tmp_path / "weights.bin")) or "")
    assert "no folder" in (model_error(str(tmp_path / "missing")) or "")
    assert "local Hugging Face cache" in (model_error("someone/not-a-cached-model") or "")


def test_services_up_refuses_a_model_that_cannot_load(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        _check_cross_encoder(str(tmp_path / "missing"))
    assert info.value.field == "TEMPR_RERANKER_MODEL"


def test_a_model_that_cannot_load_raises_a_config_error_once_then_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[int] = []

    def broken(self: CrossEncoderReranker) -> object:
        builds.append(1)
        raise OSError("Error no file named model.safetensors found in directory")

    monkeypatch.setattr(cross_encoder.CrossEncoderReranker, "_build", broken)
    reranker = CrossEncoderReranker(str(tmp_path), device="cpu")  # a folder, so the loader is tried
    for _ in range(2):
        with pytest.raises(ConfigError) as info:
            reranker.score_pairs([("q", "p")])
        assert info.value.field == "TEMPR_RERANKER_MODEL" and "model.safetensors" in str(info.value)
    assert builds == [1], "a model that failed to load is not loaded again on every recall"
