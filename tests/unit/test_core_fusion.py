"""RRF fusion and rank-space strategy boosts (seed: "Stage 1: Reciprocal Rank Fusion")."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tempr.core.fusion import (
    BOOST_DIVISORS,
    cut_candidates,
    parse_strategy_boosts,
    rrf_fuse,
    rrf_score,
)
from tempr.core.types import FusedCandidate, Hit, Strategy, StrategyResult

NAMES = [s.value for s in Strategy]


def result(strategy: str, ids: list[str], error: str | None = None) -> StrategyResult:
    hits = tuple(Hit(i, 1.0 / (n + 1)) for n, i in enumerate(ids))
    return StrategyResult(Strategy(strategy), hits, error=error)


@st.composite
def strategy_results(draw: st.DrawFn) -> list[StrategyResult]:
    chosen = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=4))
    out = []
    for name in chosen:
        ids = draw(st.lists(st.sampled_from([f"m{i}" for i in range(12)]), max_size=15))
        scores = draw(st.lists(st.floats(-50, 50), min_size=len(ids), max_size=len(ids)))
        error = draw(st.sampled_from([None, None, None, "timeout"]))
        out.append(StrategyResult(Strategy(name), tuple(map(Hit, ids, scores)), error=error))
    return out


def oracle_ranks(results: list[StrategyResult]) -> dict[str, dict[str, int]]:
    """Independent rank bookkeeping: first 1-indexed position per strategy."""
    ranks: dict[str, dict[str, int]] = {}
    for r in results:
        if r.error is None:
            for pos, hit in enumerate(r.hits, start=1):
                ranks.setdefault(hit.id, {}).setdefault(r.strategy.value, pos)
    return ranks


# --- seed worked examples ---------------------------------------------------


def test_seed_example_semantic_1_keyword_5() -> None:
    fused = rrf_fuse(
        [
            result("semantic", ["f"] + [f"s{i}" for i in range(4)]),
            result("keyword", [f"k{i}" for i in range(4)] + ["f"]),
        ]
    )
    top = fused[0]
    assert top.id == "f"
    assert top.ranks == {"semantic": 1, "keyword": 5}
    assert top.rrf_score == pytest.approx(1 / 61 + 1 / 65)
    assert round(top.rrf_score, 4) == 0.0318


def test_seed_example_semantic_only() -> None:
    fused = rrf_fuse([result("semantic", ["a"])])
    assert round(fused[0].rrf_score, 4) == 0.0164


# --- properties ---------------------------------------------------------------


@given(strategy_results())
def test_ids_are_union_of_non_error_inputs_without_duplicates(
    results: list[StrategyResult],
) -> None:
    ids = [c.id for c in rrf_fuse(results)]
    assert len(ids) == len(set(ids))
    assert set(ids) == {h.id for r in results if r.error is None for h in r.hits}


@given(strategy_results(), st.integers(0, 200))
def test_score_is_sum_of_reciprocal_ranks(results: list[StrategyResult], k: int) -> None:
    expected = oracle_ranks(results)
    for cand in rrf_fuse(results, k=k):
        assert cand.ranks == expected[cand.id]
        assert cand.rrf_score == pytest.approx(sum(1 / (k + r) for r in expected[cand.id].values()))


@given(strategy_results())
def test_scores_map_holds_each_strategys_raw_score_at_best_rank(
    results: list[StrategyResult],
) -> None:
    by_name = {r.strategy.value: r for r in results}
    for cand in rrf_fuse(results):
        for name, rank in cand.ranks.items():
            assert cand.scores[name] == by_name[name].hits[rank - 1].score


@given(strategy_results(), st.randoms(use_true_random=False))
def test_invariant_to_arrival_order(results: list[StrategyResult], rnd: object) -> None:
    shuffled = list(results)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert rrf_fuse(shuffled) == rrf_fuse(results)


def test_float_sums_are_bitwise_identical_for_every_arrival_order() -> None:
    # 1/61 + 1/61 + 1/62 rounds differently depending on the addition order.
    arms = [result("semantic", ["x"]), result("keyword", ["x"]), result("graph", ["g", "x"])]
    scores = {next(c.rrf_score for c in rrf_fuse(list(order)) if c.id == "x") for order in itertools.permutations(arms)}
    assert len(scores) == 1


@given(strategy_results())
def test_sorted_by_score_then_best_rank_then_id(results: list[StrategyResult]) -> None:
    keys = [(-c.rrf_score, min(c.ranks.values()), c.id) for c in rrf_fuse(results)]
    assert keys == sorted(keys)


@given(strategy_results())
def test_empty_boosts_change_nothing(results: list[StrategyResult]) -> None:
    plain = rrf_fuse(results)
    assert rrf_fuse(results, boosts={}) == plain
    assert rrf_fuse(results, boosts=None) == plain


@given(
    strategy_results(),
    st.sampled_from(NAMES),
    st.sampled_from(list(BOOST_DIVISORS)),
    st.integers(0, 20),
)
def test_boost_only_promotes_the_boosted_strategy(
    results: list[StrategyResult], boosted: str, level: str, cap: int
) -> None:
    plain = rrf_fuse(results)
    boosted_list = rrf_fuse(results, boosts={boosted: level})
    before = {c.id: c for c in plain}
    after = {c.id: c for c in boosted_list}
    position = {c.id: i for i, c in enumerate(boosted_list)}
    for cid, cand in after.items():
        assert cand.ranks == before[cid].ranks  # ranks stay the real, unboosted ones
        if boosted in cand.ranks:
            assert cand.rrf_score > before[cid].rrf_score
        else:
            assert cand.rrf_score == before[cid].rrf_score
    # An item of the boosted arm never falls behind an item of another arm it led.
    for i, hi in enumerate(plain):
        for lo in plain[i + 1 :]:
            if boosted in hi.ranks and boosted not in lo.ranks:
                assert position[hi.id] < position[lo.id]

    def arm_count(fused: list[FusedCandidate]) -> int:
        return sum(boosted in c.ranks for c in cut_candidates(fused, cap))

    assert arm_count(boosted_list) >= arm_count(plain)


@pytest.mark.parametrize(("level", "divisor"), [("low", 1.5), ("mid", 3.0), ("medium", 3.0), ("high", 6.0)])
def test_boost_divides_rank_before_the_contribution(level: str, divisor: float) -> None:
    ids = [f"g{i}" for i in range(1, 31)]
    g30 = next(c for c in rrf_fuse([result("graph", ids)], boosts={"graph": level}) if c.id == "g30")
    assert g30.rrf_score == pytest.approx(1 / (60 + 30 / divisor))
    assert g30.ranks == {"graph": 30}  # the real rank is reported
    assert rrf_score(g30.ranks) == pytest.approx(1 / 90)  # the unboosted score is recoverable


def test_boost_reaches_deeper_into_favoured_arm() -> None:
    semantic = result("semantic", [f"s{i}" for i in range(10)])
    graph = result("graph", [f"g{i}" for i in range(10)])
    plain_top = {c.id for c in cut_candidates(rrf_fuse([semantic, graph]), 10)}
    boosted_top = {c.id for c in cut_candidates(rrf_fuse([semantic, graph], boosts={"graph": "high"}), 10)}
    assert sum(i.startswith("g") for i in boosted_top) > sum(i.startswith("g") for i in plain_top)
    assert "s0" in boosted_top  # the other arm's top hit survives


def test_error_result_counts_as_empty() -> None:
    fused = rrf_fuse([result("semantic", ["a"]), result("keyword", ["a", "b"], error="boom")])
    assert [(c.id, c.ranks) for c in fused] == [("a", {"semantic": 1})]


def test_duplicate_id_keeps_best_rank() -> None:
    fused = rrf_fuse([StrategyResult(Strategy.KEYWORD, (Hit("a", 9.0), Hit("b", 5.0), Hit("a", 1.0)))])
    a = next(c for c in fused if c.id == "a")
    assert a.ranks == {"keyword": 1}
    assert a.scores == {"keyword": 9.0}
    assert a.rrf_score == pytest.approx(1 / 61)


def test_equal_scores_tie_break_on_best_rank_before_id() -> None:
    # k=0: "z" at ranks 3 and 6 scores 1/3 + 1/6 = 1/2, "a" at 4 and 4 scores 1/4 + 1/4 = 1/2.
    semantic = result("semantic", ["s1", "s2", "z", "a"])
    keyword = result("keyword", ["k1", "k2", "k3", "a", "k5", "z"])
    fused = rrf_fuse([semantic, keyword], k=0)
    z, a = (next(c for c in fused if c.id == i) for i in ("z", "a"))
    assert z.rrf_score == a.rrf_score == 0.5
    tied = [c.id for c in fused if c.id in {"a", "z"}]
    assert tied == ["z", "a"]  # best single rank 3 beats 4, although "a" < "z"


def test_equal_scores_and_ranks_tie_break_on_id() -> None:
    fused = rrf_fuse([result("semantic", ["q"]), result("keyword", ["p"])])
    assert [c.id for c in fused] == ["p", "q"]


def test_bad_inputs_rejected() -> None:
    with pytest.raises(ValueError, match="semantic"):
        rrf_fuse([result("semantic", ["a"]), result("semantic", ["b"])])
    with pytest.raises(ValueError, match="huge"):
        rrf_fuse([result("semantic", ["a"])], boosts={"semantic": "huge"})
    with pytest.raises(ValueError, match="vector"):
        rrf_fuse([result("semantic", ["a"])], boosts={"vector": "high"})


@given(st.lists(st.integers(0, 5), max_size=8), st.integers(0, 10))
def test_cut_keeps_the_top_n(ids: list[int], n: int) -> None:
    fused = rrf_fuse([result("semantic", [f"m{i}" for i in ids])])
    assert cut_candidates(fused, n) == fused[:n]
    with pytest.raises(ValueError):
        cut_candidates(fused, -1)


# --- parsing ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("graph:high,semantic:low", {"graph": "high", "semantic": "low"}),  # seed example
        (" Graph : HIGH , ,bm25:medium,", {"graph": "high", "keyword": "mid"}),  # bm25 and medium aliases
        ("temporal", {"temporal": "mid"}),  # missing level
        ("", {}),
        (" , ", {}),
    ],
)
def test_parse_examples(spec: str, expected: dict[str, str]) -> None:
    assert parse_strategy_boosts(spec) == expected


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ("graph:extreme", "graph:extreme"),
        ("vector:high", "vector:high"),
        ("semantic:low,sql", "sql"),
        ("graph:low,graph:high", "twice"),
    ],
)
def test_parse_errors_name_the_bad_part(spec: str, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        parse_strategy_boosts(spec)


@given(st.dictionaries(st.sampled_from(NAMES), st.sampled_from(list(BOOST_DIVISORS))))
def test_parse_round_trips(boosts: dict[str, str]) -> None:
    spec = ",".join(f"{s}:{lv}" for s, lv in boosts.items())
    assert parse_strategy_boosts(spec) == boosts


def test_rank_zero_is_rejected() -> None:
    with pytest.raises(ValueError):
        rrf_score({"semantic": 0})
    assert math.isclose(rrf_score({}), 0.0)
