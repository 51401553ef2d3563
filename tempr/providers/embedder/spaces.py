"""Vector spaces: which embedders write comparable vectors, and which embedder writes a space.

A bank's vectors are only comparable with a query embedded the same way. The exact
all-MiniLM-L6-v2 (sentence-transformers on torch, or its ONNX export: identical vectors,
parity-tested) is one space; each quantised export moves vectors (cosine 0.990 to the exact
ones for the per-channel int8 model, 0.994 for the mixed one), so each is another. Every bank records the space it was first written in
(``banks.embedder``), and ingest and recall on that bank use an embedder of that space
whatever ``TEMPR_EMBEDDER`` says: the setting chooses the space of *new* banks, so changing
it never mixes vectors in a bank that already exists.
"""

from __future__ import annotations

from config.errors import ConfigError, ValidationError

EXACT = "all-MiniLM-L6-v2"
INT8 = "all-MiniLM-L6-v2/int8-per-channel"
INT8_MIXED = "all-MiniLM-L6-v2/int8-mixed3"
FAKE = "fake"
LEGACY = EXACT
"""The space of a bank written before banks recorded theirs (NULL): every such bank was written
by the exact model unless ``TEMPR_EMBEDDER=onnx-int8`` was set by hand, which was opt-in."""

_KIND_OF_SPACE = {EXACT: "onnx", INT8: "onnx-int8", INT8_MIXED: "onnx-int8-mixed", FAKE: "fake"}
_SPACE_OF_KIND = {
    "onnx": EXACT,
    "torch": EXACT,
    "minilm": EXACT,
    "onnx-int8": INT8,
    "onnx-int8-mixed": INT8_MIXED,
    "fake": FAKE,
}


def space_of(kind: str) -> str:
    """The space a ``TEMPR_EMBEDDER`` value writes."""
    try:
        return _SPACE_OF_KIND[kind]
    except KeyError:
        raise ConfigError(f"unknown embedder {kind!r}; expected one of {sorted(_SPACE_OF_KIND)}") from None


def kind_for(space: str | None) -> str:
    """The embedder (a ``TEMPR_EMBEDDER`` value) that writes ``space``; None is a legacy bank's."""
    try:
        return _KIND_OF_SPACE[space or LEGACY]
    except KeyError:
        raise ValidationError(
            f"a bank records vector space {space!r}, which this version of tempr cannot embed; "
            f"known spaces: {sorted(_KIND_OF_SPACE)}",
            field="embedder",
        ) from None
