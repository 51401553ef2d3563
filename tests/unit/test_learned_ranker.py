"""The learned ranker's input/output contract (``tempr.providers.reranker.learned``)."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from tempr.core.rank_features import FEATURE_NAMES
from tempr.providers.reranker import make_ranker
from tempr.providers.reranker.learned import DEFAULT_MODEL, LearnedRanker


def row(**values: float) -> list[float]:
    out = [0.0] * len(FEATURE_NAMES)
    out[FEATURE_NAMES.index("ce")] = math.nan
    for name, value in values.items():
        out[FEATURE_NAMES.index(name)] = value
    return out


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LambdaRank model on two features, in the opposite order to FEATURE_NAMES: relevance = lex_fact."""
    import lightgbm
    import numpy as np

    rng = random.Random(3)
    x, y, groups = [], [], []
    for _ in range(60):
        for _ in range(10):
            lex, cos = rng.random(), rng.random()
            x.append([lex, cos])
            y.append(1 if lex > 0.8 else 0)
        groups.append(10)
    params = {"objective": "lambdarank", "verbosity": -1, "min_data_in_leaf": 5, "num_threads": 1}
    data = lightgbm.Dataset(np.asarray(x), label=y, group=groups, feature_name=["lex_fact", "cos_fact"])
    path = tmp_path_factory.mktemp("ranker") / "tiny.txt"
    lightgbm.train(params, data, num_boost_round=20).save_model(str(path))
    return path


def test_rows_are_matched_to_the_model_by_feature_name(tiny_model: Path) -> None:
    ranker = LearnedRanker(tiny_model)
    assert ranker.name == "learned:tiny"
    assert ranker.features == ["lex_fact", "cos_fact"]
    assert not ranker.uses_cross_encoder
    scores = ranker.score_rows([row(lex_fact=0.95, cos_fact=0.1), row(lex_fact=0.1, cos_fact=0.95)])
    assert len(scores) == 2 and all(isinstance(s, float) for s in scores)
    assert scores[0] > scores[1]  # it read lex_fact, wherever FEATURE_NAMES puts it
    assert ranker.score_rows([]) == []


def test_a_model_with_unknown_features_is_refused(tmp_path: Path, tiny_model: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text(tiny_model.read_text().replace("lex_fact", "not_a_feature"))
    with pytest.raises(ValueError, match="not_a_feature"):
        LearnedRanker(bad).features  # noqa: B018


def test_the_shipped_model_reads_known_features_and_scores_every_row() -> None:
    assert DEFAULT_MODEL.exists(), "tempr/data/ranker.txt must ship (retrain: tempr ranker train)"
    ranker = LearnedRanker()
    assert set(ranker.features) <= set(FEATURE_NAMES) and "cos_fact" in ranker.features
    rows = [row(cos_fact=c, rr_semantic=1.0 / (i + 1)) for i, c in enumerate((0.9, 0.5, 0.1))]
    scores = ranker.score_rows(rows)
    assert len(scores) == 3 and all(math.isfinite(s) for s in scores)
    assert ranker.score_rows(rows) == scores  # deterministic


def test_profiles_pick_the_ranker() -> None:
    assert make_ranker("seed") is None
    ranker = make_ranker("default")
    assert isinstance(ranker, LearnedRanker) and ranker.path == DEFAULT_MODEL


def test_an_array_scores_like_the_same_rows_as_lists(tiny_model: Path) -> None:
    import numpy as np

    rows = [row(lex_fact=x / 10, cos_fact=1 - x / 10) for x in range(10)]
    for ranker in (LearnedRanker(tiny_model), LearnedRanker()):
        from_lists = ranker.score_rows(rows)
        assert ranker.score_rows(np.asarray(rows)) == from_lists
        assert all(type(s) is float for s in from_lists)
        assert ranker.score_rows(np.empty((0, len(FEATURE_NAMES)))) == []


def test_an_ensemble_file_scores_the_mean_of_its_members(tmp_path: Path, tiny_model: Path) -> None:
    import lightgbm
    import numpy as np

    from bench.ranker_train import Ensemble
    from tempr.providers.reranker.learned import MEMBER_SEPARATOR

    rng = random.Random(5)  # a second member on the same features: relevance = cos_fact
    x = [[rng.random(), rng.random()] for _ in range(600)]
    data = lightgbm.Dataset(
        np.asarray(x), label=[1 if c > 0.8 else 0 for _, c in x], group=[10] * 60, feature_name=["lex_fact", "cos_fact"]
    )
    params = {"objective": "lambdarank", "verbosity": -1, "min_data_in_leaf": 5, "num_threads": 1}
    other = lightgbm.train(params, data, num_boost_round=20)
    other_path = tmp_path / "other.txt"
    other.save_model(str(other_path))
    path = tmp_path / "ensemble.txt"
    Ensemble([lightgbm.Booster(model_file=str(tiny_model)), other]).save_model(str(path))
    assert path.read_text().count(MEMBER_SEPARATOR) == 1

    rows = [row(lex_fact=0.95, cos_fact=0.1), row(lex_fact=0.1, cos_fact=0.95), row(lex_fact=0.5, cos_fact=0.5)]
    first, second = LearnedRanker(tiny_model).score_rows(rows), LearnedRanker(other_path).score_rows(rows)
    assert first[0] > first[1] and second[1] > second[0]  # two members that disagree
    mean = [(a + b) / 2 for a, b in zip(first, second, strict=True)]
    assert LearnedRanker(path).score_rows(rows) == pytest.approx(mean)


def test_an_ensemble_whose_members_read_different_features_is_refused(tmp_path: Path, tiny_model: Path) -> None:
    from tempr.providers.reranker.learned import MEMBER_SEPARATOR

    text = tiny_model.read_text()
    bad = tmp_path / "mixed.txt"
    bad.write_text(text + MEMBER_SEPARATOR + text.replace("cos_fact", "lex_chunk"))
    with pytest.raises(ValueError, match="different features"):
        LearnedRanker(bad).features  # noqa: B018


def test_a_model_file_with_a_linear_member_scores_the_blend(tmp_path: Path, tiny_model: Path) -> None:
    import numpy as np

    from tempr.core.linear_rank import LinearModel, blend
    from tempr.providers.reranker.learned import linear_section

    trees = LearnedRanker(tiny_model)
    linear = LinearModel(("lex_fact", "cos_fact"), (0.5, 0.5), (0.2, 0.2), (1.0, -3.0), (0.0, 0.0))
    path = tmp_path / "with_linear.txt"
    path.write_text(tiny_model.read_text() + linear_section(linear, 0.8))
    rows = [row(lex_fact=x / 10, cos_fact=(7 * x % 10) / 10) for x in range(10)]
    matrix = np.asarray(rows)[:, [FEATURE_NAMES.index(n) for n in trees.features]]
    expected = blend(np.asarray(trees.score_rows(rows)), linear.decision(matrix), 0.8)
    assert LearnedRanker(path).score_rows(rows) == pytest.approx(expected.tolist())
    assert LearnedRanker(path).features == trees.features


def test_a_linear_member_on_other_features_or_unreadable_is_refused(tmp_path: Path, tiny_model: Path) -> None:
    from tempr.core.linear_rank import LinearModel
    from tempr.providers.reranker.learned import LINEAR_MARK, linear_section

    other = LinearModel(("cos_fact", "lex_fact"), (0.0, 0.0), (1.0, 1.0), (1.0, 1.0), (0.0, 0.0))
    bad = tmp_path / "other.txt"
    bad.write_text(tiny_model.read_text() + linear_section(other, 1.0))
    with pytest.raises(ValueError, match="other features"):
        LearnedRanker(bad).features  # noqa: B018
    broken = tmp_path / "broken.txt"
    broken.write_text(tiny_model.read_text() + LINEAR_MARK + "1.0\n{not json\n")
    with pytest.raises(ValueError, match="unreadable"):
        LearnedRanker(broken).features  # noqa: B018


# --- the trees compiled to machine code (tempr.providers.reranker.compiled) ------------------------


def _split_points(ranker: LearnedRanker) -> dict[str, list[float]]:
    """Every split threshold of the ranker's trees, per feature: rows built on them test ``<=``."""
    out: dict[str, list[float]] = {}
    names = ranker.features

    def walk(node: dict) -> None:  # type: ignore[type-arg]
        if "split_feature" in node:
            out.setdefault(names[node["split_feature"]], []).append(float(node["threshold"]))
            walk(node["left_child"])
            walk(node["right_child"])

    for booster in ranker._load():
        for tree in booster.dump_model()["tree_info"]:
            walk(tree["tree_structure"])
    return out


ZERO_BAND = 1.0000000180025095e-35
"""LightGBM counts |x| <= 1e-35 (as a float32: this double) as zero where a split treats zero as missing; lleaves only 0.0 itself.
No feature takes such a value (cosines, their gaps, shares and counts), so the rows below leave the
band out (its splits' thresholds, +-1e-35, become 0.0: zero itself is compared)."""


def _awkward_rows(ranker: LearnedRanker, n: int, seed: int) -> list[list[float]]:
    """Rows whose values sit on split thresholds, just beside them, on zero, missing (NaN) or anywhere."""
    rng = random.Random(seed)
    points = _split_points(ranker)
    rows = []
    for _ in range(n):
        values = {}
        for name in ranker.features:
            pick = rng.random()
            if pick < 0.15:
                values[name] = math.nan
            elif pick < 0.7 and points.get(name):
                t = rng.choice(points[name])
                values[name] = rng.choice((t, math.nextafter(t, -math.inf), math.nextafter(t, math.inf)))
            elif pick < 0.8:
                values[name] = 0.0
            else:
                values[name] = rng.uniform(-2.0, 2.0)
            if 0.0 < abs(values[name]) <= ZERO_BAND:
                values[name] = 0.0
        rows.append(row(**values))
    return rows


@pytest.mark.parametrize("which", ["tiny", "shipped"])
def test_compiled_trees_score_every_row_as_lightgbm_does(which: str, tiny_model: Path, tmp_path: Path) -> None:
    path = tiny_model if which == "tiny" else DEFAULT_MODEL
    plain = LearnedRanker(path)
    compiled = LearnedRanker(path, compiled_dir=tmp_path)
    rows = _awkward_rows(plain, 400, seed=11)
    assert compiled.score_rows(rows) == pytest.approx(plain.score_rows(rows), abs=1e-9, rel=0)
    assert compiled._compiled is not None  # the compiled path scored, not a fallback
    assert len(list(tmp_path.glob("ranker-trees-*.o"))) == len(plain._load())


def test_compiled_code_is_built_once_and_loaded_after(
    tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lleaves.compiler

    rows = _awkward_rows(LearnedRanker(tiny_model), 50, seed=3)
    first = LearnedRanker(tiny_model, compiled_dir=tmp_path).score_rows(rows)
    built = sorted(tmp_path.glob("ranker-trees-*.o"))
    stamps = [p.stat().st_mtime_ns for p in built]

    def no_compiling(*_: object, **__: object) -> None:
        raise AssertionError("compiled again although the object code is cached")

    monkeypatch.setattr(lleaves.compiler, "compile_to_module", no_compiling)
    again = LearnedRanker(tiny_model, compiled_dir=tmp_path)
    assert again.score_rows(rows) == first and again._compiled is not None
    assert sorted(tmp_path.glob("ranker-trees-*.o")) == built and [p.stat().st_mtime_ns for p in built] == stamps


def test_other_trees_get_their_own_object_code(tiny_model: Path, tmp_path: Path) -> None:
    from tempr.providers.reranker.compiled import cache_key

    text = tiny_model.read_text()
    other = text.replace("learning_rate: 0.1", "learning_rate: 0.10000001")
    assert other != text and cache_key(other) != cache_key(text)


def test_a_machine_that_cannot_compile_scores_with_lightgbm(
    tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from tempr.providers.reranker import compiled

    def broken(*_: object) -> None:
        raise OSError("no LLVM here")

    monkeypatch.setattr(compiled, "compile_member", broken)
    rows = _awkward_rows(LearnedRanker(tiny_model), 30, seed=4)
    ranker = LearnedRanker(tiny_model, compiled_dir=tmp_path)
    with caplog.at_level("WARNING"):
        scores = ranker.score_rows(rows)
    assert ranker._compiled is None and scores == LearnedRanker(tiny_model).score_rows(rows)
    assert "could not be compiled (OSError: no LLVM here); LightGBM predicts instead" in caplog.text


def test_processes_compiling_at_once_build_one_file_each_can_read(tiny_model: Path, tmp_path: Path) -> None:
    import multiprocessing

    text = tiny_model.read_text()
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.starmap(_compile_and_score, [(text, str(tmp_path))] * 2)
    assert results[0] == results[1]
    assert len(list(tmp_path.glob("ranker-trees-*.o"))) == 1
    assert not [p for p in tmp_path.iterdir() if p.is_dir()]  # no temporary folder left behind


def _compile_and_score(text: str, folder: str) -> list[float]:
    import numpy as np

    from tempr.providers.reranker.compiled import compile_member

    trees = compile_member(text, Path(folder))
    return trees.predict(np.linspace(0.0, 1.0, 40).reshape(20, 2)).tolist()
