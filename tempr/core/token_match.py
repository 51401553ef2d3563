"""Token-level match between a query and a memory: MaxSim over the embedder's own token vectors.

Why: a memory's one pooled vector averages its words, so "Nate won a big Valorant tournament"
sits about as close to "What video games does Nate play?" as any other Nate memory. Comparing
word by word (each query word's best match among the memory's words, averaged: ColBERT's
MaxSim) keeps the match of "games" with "Valorant tournament" that the average blurs. The token
vectors are the same MiniLM pass's last hidden states, so they cost no second model run; the
ranker reads the score as features (``tempr.core.rank_features``). Cross-validated on the LoCoMo
dev conversations it moved R@10 by 0 to +0.8 across model draws and by +0.4 through the workers,
most of it on multi-hop questions (BENCHMARKS.md, "Token match"). The same match with each query
word weighted by how few of the candidates match it (``idf_weights``) is four more features.

Only content tokens are kept (no special tokens, punctuation or stopwords; word pieces after
the first are kept, they carry rare words), each L2-normalised and stored as int8 (one byte per
dimension: the direction is what a cosine reads, so no scale is stored). Numbers and the names
of months and weekdays are not kept either: dates are the temporal features' to judge, and
word by word "March 8, 2024" matched any memory holding a number or a weekday ("flew TP1351 on
Tuesday") better than the one dated that day. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tempr.core.query_focus import CALENDAR
from tempr.core.rank_text import STOPWORDS

SPECIAL = frozenset({"[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"})
DIM = 384


def keep_word(token: str) -> bool:
    """A word or word piece that is neither a number nor a month or weekday."""
    if token in SPECIAL:
        return False
    word = token[2:] if token.startswith("##") else token
    return word.isalnum() and not word.isdigit() and word.lower() not in CALENDAR


def keep(token: str) -> bool:
    """Whether a WordPiece token is content: a word piece after the first, or a word that is not a stopword."""
    return keep_word(token) and (token.startswith("##") or token.lower() not in STOPWORDS)


def select(tokens: Sequence[str], hidden: np.ndarray) -> np.ndarray | None:
    """The content tokens' rows of ``hidden`` (one row per token, padding beyond ``tokens`` ignored);
    the words, stopwords included, when none is content ("Who is she?"); None for a text with no
    word (only dates, numbers or punctuation)."""
    rows = [i for i, t in enumerate(tokens) if keep(t)] or [i for i, t in enumerate(tokens) if keep_word(t)]
    if not rows:
        return None
    return np.asarray(hidden[rows], dtype=np.float32)


def keep_masks(vocab: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per token id of ``vocab`` (the tokenizer's pieces in id order): whether ``keep``, whether ``keep_word``."""
    return (
        np.fromiter((keep(t) for t in vocab), dtype=bool, count=len(vocab)),
        np.fromiter((keep_word(t) for t in vocab), dtype=bool, count=len(vocab)),
    )


def select_packed(ids: np.ndarray, hidden: np.ndarray, masks: tuple[np.ndarray, np.ndarray]) -> list[bytes | None]:
    """``pack(select(tokens, h))`` for every text of a batch at once, the same bytes: ``ids`` (texts ×
    positions) the token ids, ``hidden`` (texts × positions × dim) their states, ``masks`` from
    ``keep_masks``. Ingest packs every fact's tokens; text by text, the filter's Python loop over each
    token and the normalisation's small numpy calls took 60 ms of a 1,210-fact import's 1.35 s of
    embedding (BENCHMARKS.md, "Token vectors packed a batch at a time")."""
    content, words = masks
    chosen = content[ids]
    none = ~chosen.any(axis=1)
    if none.any():
        chosen[none] = words[ids[none]]
    counts = chosen.sum(axis=1)
    out: list[bytes | None] = [None] * len(ids)
    if not counts.any():
        return out
    v = np.asarray(hidden[chosen], dtype=np.float32)  # rows in text order, then position order
    v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    scale = 127.0 / np.maximum(np.abs(v).max(axis=1, keepdims=True), 1e-12)
    packed = np.clip(np.rint(v * scale), -127, 127).astype(np.int8)
    ends = np.cumsum(counts)
    for i, (n, end) in enumerate(zip(counts.tolist(), ends.tolist(), strict=True)):
        if n:
            out[i] = packed[end - n : end].tobytes()
    return out


def pack(vectors: np.ndarray | None) -> bytes | None:
    """Rows L2-normalised, then scaled so each row's largest component is 127, as int8 bytes."""
    if vectors is None or len(vectors) == 0:
        return None
    v = np.asarray(vectors, dtype=np.float32)
    v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    scale = 127.0 / np.maximum(np.abs(v).max(axis=1, keepdims=True), 1e-12)
    packed: bytes = np.clip(np.rint(v * scale), -127, 127).astype(np.int8).tobytes()
    return packed


def unpack(raw: bytes | None, dim: int = DIM) -> np.ndarray | None:
    """``pack``'s bytes back as unit rows (float32, shape (tokens, dim)); None stays None."""
    if not raw:
        return None
    if len(raw) % dim:
        raise ValueError(f"packed token vectors are a whole number of {dim}-byte rows")
    v = np.frombuffer(raw, dtype=np.int8).reshape(-1, dim).astype(np.float32)
    rows: np.ndarray = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    return rows


MATCHED = 0.6
"""A query token counts as matched by a candidate when its best cosine there reaches this (``idf_weights``)."""
MIN_WEIGHT = 0.05


def maxsim(query: np.ndarray | None, docs: Sequence[bytes | None], dim: int = DIM) -> np.ndarray:
    """Per doc (``pack``'s bytes): the mean over the query's tokens of each one's best cosine among
    the doc's tokens; NaN for a doc without token vectors (or when the query has none): the ranker
    reads that as missing."""
    return _best_many([query], docs, dim)[0][0]


def idf_weights(best: np.ndarray) -> np.ndarray:
    """One weight per query token from ``best`` (query tokens x docs: each token's best cosine in
    each doc): log((n + 1) / (df + 0.5)), where df counts the docs that match the token
    (``MATCHED``), floored at ``MIN_WEIGHT``. Why: among one query's candidates a token that every
    candidate matches (the person the question is about, a word of the bank's theme) tells them
    apart less than one only a few match, as IDF says of words; computed over the candidates, it
    needs no vocabulary or corpus statistics of token vectors."""
    n = best.shape[1]
    df = (best >= MATCHED).sum(axis=1)
    weights: np.ndarray = np.maximum(np.log((n + 1) / (df + 0.5)), MIN_WEIGHT)
    return weights


def _best_many(
    queries: Sequence[np.ndarray | None], docs: Sequence[bytes | None], dim: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each query over the same docs: (``maxsim``, its ``idf_weights``-weighted mean), the docs
    read once: their int8 rows are not normalised one by one (the cost of ``unpack`` over some
    3,000 rows was most of the stage); each similarity is divided by its doc row's length instead,
    and all queries share one matrix product (a few hundred candidates of a dozen tokens each)."""
    out = [(np.full(len(docs), np.nan), np.full(len(docs), np.nan)) for _ in queries]
    present = [i for i, d in enumerate(docs) if d]
    asked = [(j, q) for j, q in enumerate(queries) if q is not None and len(q)]
    if not present or not asked:
        return out
    raw = [docs[i] or b"" for i in present]
    joined = b"".join(raw)
    if len(joined) % dim:
        raise ValueError(f"packed token vectors are a whole number of {dim}-byte rows")
    rows = np.frombuffer(joined, dtype=np.int8).reshape(-1, dim).astype(np.float32)
    lengths = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    stacked = np.concatenate([q for _, q in asked])
    sims = (stacked @ rows.T) / np.maximum(lengths, 1e-12)  # (all query tokens, all doc tokens)
    starts: np.ndarray = np.cumsum([0] + [len(r) // dim for r in raw[:-1]])
    best = np.maximum.reduceat(sims, starts, axis=1)  # (all query tokens, present docs)
    at = 0
    for j, q in asked:
        block = best[at : at + len(q)]
        weights = idf_weights(block)
        out[j][0][present] = block.mean(axis=0)
        out[j][1][present] = weights @ block / weights.sum()
        at += len(q)
    return out


def columns(
    query: np.ndarray | None, focus: np.ndarray | None, docs: Sequence[bytes | None], dim: int = DIM
) -> np.ndarray:
    """The ranker's ``TOKEN_FEATURES``, one row per doc: ``maxsim`` of the query, its gap to the
    best doc, the same for the focus query (None: the query is its own focus, as for
    ``focus_both``), then both again weighted by ``idf_weights``. All NaN when nothing can be
    compared."""
    if focus is None:
        plain = by_focus = _best_many([query], docs, dim)[0]
    else:
        plain, by_focus = _best_many([query, focus], docs, dim)
    out = np.full((len(docs), 8), np.nan)
    for col, values in ((0, plain[0]), (2, by_focus[0]), (4, plain[1]), (6, by_focus[1])):
        if not np.isnan(values).all():
            out[:, col] = values
            out[:, col + 1] = values - np.nanmax(values)
    return out
