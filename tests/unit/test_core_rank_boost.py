"""Post-rerank strategy boosts in rank space (tempr.core.rank_boost)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tempr.core.rank_boost import promote, score_at_rank

scores_st = st.dictionaries(
    st.text(alphabet="abcdefgh", min_size=1, max_size=3), st.floats(0, 1, allow_nan=False), min_size=1, max_size=30
)


def test_score_at_rank_interpolates_between_neighbours() -> None:
    assert score_at_rank([1.0, 0.5, 0.0], 1) == 1.0
    assert score_at_rank([1.0, 0.5, 0.0], 1.5) == 0.75
    assert score_at_rank([1.0, 0.5, 0.0], 9) == 0.0


def test_rank_six_with_divisor_three_takes_rank_two_score() -> None:
    scores = {f"m{i}": 1.0 - i / 10 for i in range(1, 8)}  # m1 0.9 ... m7 0.3
    out = promote(scores, {"m6": 3.0})
    assert out["m6"] == scores["m2"]
    assert {k: v for k, v in out.items() if k != "m6"} == {k: v for k, v in scores.items() if k != "m6"}


@given(scores_st, st.data())
def test_promote_never_lowers_and_leaves_others_alone(scores: dict[str, float], data: st.DataObject) -> None:
    boosted = data.draw(st.sets(st.sampled_from(sorted(scores))))
    out = promote(scores, {k: 6.0 for k in boosted})
    for key, value in scores.items():
        if key in boosted:
            assert out[key] >= value
        else:
            assert out[key] == value
        assert 0.0 <= out[key] <= 1.0


@given(scores_st)
def test_no_divisors_changes_nothing(scores: dict[str, float]) -> None:
    assert promote(scores, {}) == scores
    assert promote(scores, {k: 1.0 for k in scores}) == scores
