"""Leave-one-conversation-out training of the learned ranker on small made-up samples (no database)."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from bench.ranker_cli import seed_spread
from bench.ranker_data import Sample
from bench.ranker_train import loco
from tempr.core.rank_features import RankCandidate, RankQuery

NOW = datetime(2024, 1, 1, tzinfo=UTC)


def _samples() -> list[Sample]:
    """Three conversations; in every question the evidence is the candidate with the highest cosine."""
    rng = random.Random(3)
    out = []
    for conv in ("a", "b", "c"):
        for q in range(12):
            cands, ids = [], []
            hit = rng.randrange(10)
            for i in range(10):
                cos = 0.9 if i == hit else rng.uniform(0.1, 0.6)
                cands.append(RankCandidate(id=f"{conv}{q}-{i}", text=f"fact {i} about things", cos_fact=cos))
                ids.append([f"D{q}:{i}"])
            out.append(Sample(conv, 4, (f"D{q}:{hit}",), RankQuery(text="what about things", now=NOW), cands, ids, ids))
    return out


def misleading_window_samples() -> list[Sample]:
    """``_samples`` where only the window tells the evidence apart, and backwards: every distractor
    inside the query's window, the evidence outside, all cosines alike."""
    from dataclasses import replace

    from tempr.core.types import TimeWindow

    window = TimeWindow(start=datetime(2023, 6, 1, tzinfo=UTC), end=datetime(2023, 6, 2, tzinfo=UTC))
    inside, outside = datetime(2023, 6, 1, 12, tzinfo=UTC), datetime(2022, 1, 1, tzinfo=UTC)
    out = []
    for s in _samples():
        hit = s.dia_ids.index([s.evidence[0]])
        cands = [replace(c, occurred=outside if i == hit else inside, cos_fact=0.5) for i, c in enumerate(s.candidates)]
        out.append(replace(s, query=replace(s.query, windows=(window,)), candidates=cands))
    return out


def test_each_conversation_is_ranked_by_a_model_that_never_saw_it() -> None:
    samples = _samples()
    folds = loco(samples, seed=1)
    assert sorted(folds) == ["a", "b", "c"]
    assert all(len(r) == 12 for r in folds.values())
    firsts = [
        r[0] == s.dia_ids[max(range(10), key=lambda i: s.candidates[i].cos_fact)]
        for held in folds
        for s, r in zip([x for x in samples if x.conversation == held], folds[held], strict=True)
    ]
    assert sum(firsts) >= 30  # the cosine rule is learnable from the other conversations


def test_seed_spread_prints_each_seed_and_the_mean(capsys: pytest.CaptureFixture[str]) -> None:
    seed_spread(_samples(), 2)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["seed", "seed", "mean"]
    assert "±" in lines[-1] and "2 seeds" in lines[-1]


def test_questions_that_name_someone_are_also_trained_as_if_they_named_nobody() -> None:
    from dataclasses import replace

    from bench.ranker_train import with_unnamed_copies

    plain, named = _samples()[:2]
    named = replace(named, candidates=[replace(c, cos_focus=0.2, cos_focus_chunk=0.1) for c in named.candidates])
    out = with_unnamed_copies([plain, named])
    assert out[:2] == [plain, named]  # the originals untouched, first
    assert len(out) == 3  # a question naming nobody is not copied
    copy = out[2]
    assert copy.dia_ids == named.dia_ids and copy.evidence == named.evidence
    assert all(c.cos_focus is None and c.cos_focus_chunk is None for c in copy.candidates)
    assert all(c.cos_focus == 0.2 for c in named.candidates)


def test_every_fourth_question_is_also_trained_without_its_token_vectors() -> None:
    from dataclasses import replace

    from bench.ranker_train import TOKENLESS_EVERY, with_tokenless_copies

    samples = [
        replace(
            s, query=replace(s.query, tokens=None), candidates=[replace(c, tokens=b"\x01" * 384) for c in s.candidates]
        )
        for s in _samples()[:9]
    ]
    out = with_tokenless_copies(samples)
    assert out[: len(samples)] == samples and TOKENLESS_EVERY == 4
    copies = out[len(samples) :]
    assert [c.dia_ids for c in copies] == [samples[i].dia_ids for i in (0, 4, 8)]
    assert all(c.tokens is None for copy in copies for c in copy.candidates)
    assert all(c.tokens is not None for s in samples for c in s.candidates)  # the originals keep theirs


def test_no_model_ranks_a_memory_lower_for_being_inside_the_query_window() -> None:
    """Trained where only the window tells the evidence apart, and backwards (every distractor
    inside it, the evidence outside, all cosines alike), the model still only gains with
    ``in_window`` and ``temporal_proximity`` (``MONOTONE``)."""
    import numpy as np

    from bench.ranker_train import USED_FEATURES, fit_one, sample_rows

    samples = misleading_window_samples()
    model = fit_one(samples, USED_FEATURES, 60, seed=1)
    rows = np.asarray([r for s in samples for r in sample_rows(s, USED_FEATURES)], dtype=np.float64)
    for name in ("in_window", "temporal_proximity"):
        col = USED_FEATURES.index(name)
        low, high = rows.copy(), rows.copy()
        low[:, col], high[:, col] = 0.0, 1.0
        assert (model.predict(high) >= model.predict(low) - 1e-12).all(), name
