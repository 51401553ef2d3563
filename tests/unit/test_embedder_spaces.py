"""Vector spaces: which embedder writes which space, and how a bank's space picks the embedder."""

from __future__ import annotations

from typing import Any

import pytest

from config.errors import ValidationError
from config.settings import Settings
from tempr.ingest.pipeline import IngestDeps
from tempr.providers.embedder import spaces
from tempr.providers.embedder.fake import FakeEmbedder
from tempr.providers.entities import NoEntities
from tempr.recall.context import RecallContext


class _Other(FakeEmbedder):
    space = spaces.INT8


def test_each_embedder_kind_writes_one_space_and_the_exact_ones_share_it() -> None:
    assert {spaces.space_of(k) for k in ("onnx", "torch", "minilm")} == {spaces.EXACT}
    assert spaces.space_of("onnx-int8") == spaces.INT8 != spaces.EXACT
    assert spaces.space_of("onnx-int8-mixed") == spaces.INT8_MIXED not in (spaces.INT8, spaces.EXACT)
    assert spaces.space_of("fake") == FakeEmbedder.space == spaces.FAKE
    for kind in ("onnx", "onnx-int8", "onnx-int8-mixed", "fake"):
        assert spaces.space_of(spaces.kind_for(spaces.space_of(kind))) == spaces.space_of(kind)


def test_a_legacy_bank_reads_as_the_exact_space_and_an_unknown_space_is_a_clear_error() -> None:
    assert spaces.kind_for(None) == "onnx"
    with pytest.raises(ValidationError, match="cannot embed"):
        spaces.kind_for("some-other-model")


def _deps(resolver: Any = None) -> IngestDeps:
    return IngestDeps(
        engine=None, embedder=FakeEmbedder(), extractor=NoEntities(), settings=Settings(), embedders=resolver
    )  # type: ignore[arg-type]


def test_ingest_embeds_a_bank_in_its_own_space() -> None:
    other = _Other()
    deps = _deps(lambda space: other)
    assert deps.embedder_for(None) is deps.embedder  # a new bank: the configured embedder
    assert deps.embedder_for(spaces.FAKE) is deps.embedder
    assert deps.embedder_for(spaces.INT8) is other
    with pytest.raises(ValidationError, match="holds vectors of"):
        _deps().embedder_for(spaces.INT8)  # no way to embed that space: refused, never mixed


def test_recall_embeds_the_query_in_the_banks_space() -> None:
    other = _Other()
    asked: list[str] = []

    def resolver(space: str) -> Any:
        asked.append(space)
        return other

    ctx = RecallContext(engine=None, embedder=FakeEmbedder(), settings=Settings(), embedders=resolver)  # type: ignore[arg-type]
    assert ctx.for_space(spaces.FAKE) is ctx
    assert ctx.for_space(spaces.INT8).embedder is other and asked == [spaces.INT8]
    no_resolver = RecallContext(engine=None, embedder=FakeEmbedder(), settings=Settings())  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="holds vectors of"):
        no_resolver.for_space(spaces.INT8)
    later = RecallContext(engine=None, embedder=None, settings=Settings())  # type: ignore[arg-type]
    assert later.for_space(spaces.INT8) is later  # the steps after analysis never embed


def test_a_recall_context_without_a_bank_embeds_with_the_configured_embedder() -> None:
    """No space means "the bank is not known here", not "a legacy bank": with a quantised export
    configured, a plan made from such a context must embed as that export (a benchmark that called
    ``analyse`` directly once embedded its questions with the exact model against int8 facts)."""
    from types import SimpleNamespace

    from workers.resources import recall_context

    configured, other = FakeEmbedder(), _Other()
    asked: list[str | None] = []

    def embedder_for(space: str | None) -> Any:
        asked.append(space)
        return configured if space == configured.space else other

    res = SimpleNamespace(
        engine=None, embedder=configured, embedder_for=embedder_for, settings=Settings(), ranker=None, unit_cache=None
    )
    assert recall_context(resources=res).embedder is configured and asked == []  # type: ignore[arg-type]
    assert recall_context(resources=res, space=spaces.INT8).embedder is other  # type: ignore[arg-type]
    assert recall_context(resources=res, embedder=False).embedder is None  # type: ignore[arg-type]
