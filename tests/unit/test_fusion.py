import pytest

from graphmem.rules.fusion import normalise_max, rank_fuse, rrf, zscore_fuse, zscores


def test_rrf_known_values() -> None:
    fused = rrf([["a", "b", "c"], ["b", "a"]], k=60)
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)


def test_rrf_weights_and_arity() -> None:
    fused = rrf([["a"], ["b"]], k=0, weights=[2.0, 1.0])
    assert fused == {"a": 2.0, "b": 1.0}
    with pytest.raises(ValueError):
        rrf([["a"]], weights=[1.0, 2.0])


def test_zscores_standardise_and_handle_constant() -> None:
    z = zscores({"a": 1.0, "b": 3.0}, ["a", "b", "c"])
    assert z["c"] < z["a"] < z["b"]
    assert sum(z.values()) == pytest.approx(0.0)
    assert zscores({"a": 2.0, "b": 2.0}, ["a", "b"]) == {"a": 0.0, "b": 0.0}


def test_zscore_fuse_prefers_agreement() -> None:
    sem = {"a": 0.9, "b": 0.5, "c": 0.1}
    kw = {"a": 5.0, "c": 1.0}
    fused = zscore_fuse([sem, kw], [0.5, 0.5], ["a", "b", "c"])
    assert max(fused, key=fused.__getitem__) == "a"
    only_sem = zscore_fuse([sem, kw], [1.0, 0.0], ["a", "b", "c"])
    assert only_sem["b"] > only_sem["c"]


def test_rank_fuse_ignores_zero_signal() -> None:
    fused = rank_fuse([{"a": 0.0, "b": 1.0}], [1.0], ["a", "b"], k=60)
    assert fused == {"a": 0.0, "b": pytest.approx(1 / 61)}


def test_normalise_max() -> None:
    assert normalise_max({"a": 2.0, "b": 1.0, "c": -1.0}) == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert normalise_max({"a": 0.0}) == {"a": 0.0}


def test_bm25_known_values_and_length_normalisation() -> None:
    import math

    from graphmem.rules.bm25 import bm25, idf

    docs = {"a": ["deploy", "fail"], "b": ["deploy", "tea", "tea", "tea"], "c": ["tea"]}
    got = bm25(["deploy", "fail"], docs, {"deploy": 2, "fail": 1}, 3, 7 / 3, k1=1.2, b=0.3)
    norm_a = 1.2 * (1 - 0.3 + 0.3 * 2 / (7 / 3))
    expected_a = (idf(3, 2) + idf(3, 1)) * 2.2 / (1 + norm_a)
    assert got["a"] == pytest.approx(expected_a)
    assert got["a"] > got["b"] > got["c"] == 0.0
    assert idf(3, 3) > 0 and idf(10, 1) == pytest.approx(math.log(1 + 9.5 / 1.5))
    # with b = 1 a longer document is penalised more than with b = 0
    long_doc = {"x": ["deploy"] + ["pad"] * 20, "y": ["deploy"]}
    b1 = bm25(["deploy"], long_doc, {"deploy": 2}, 10, 5.0, b=1.0)
    b0 = bm25(["deploy"], long_doc, {"deploy": 2}, 10, 5.0, b=0.0)
    assert b1["x"] < b1["y"] and b0["x"] == pytest.approx(b0["y"])


def test_leave_one_out_picks_on_the_others_and_reports_the_held_out() -> None:
    from graphmem.bench.tune import leave_one_out

    # config 1 is best on a and b but bad on c; config 0 is steady
    scores = {0: {"a": [0.5, 0.5], "b": [0.5], "c": [0.5]},
              1: {"a": [1.0, 1.0], "b": [1.0], "c": [0.0]}}
    r = leave_one_out(scores)
    assert r["folds"]["c"] == {"config": 1, "held_out_recall@10": 0.0}
    assert r["folds"]["a"]["config"] == 0  # b + c: 0.5 vs 0.5 tie -> the lower index
    assert r["folds"]["b"] == {"config": 1, "held_out_recall@10": 1.0}
    assert r["loo_recall@10"] == pytest.approx((0.5 + 0.5 + 1.0 + 0.0) / 4)
    assert r["best_overall"] == 1 and r["defaults_recall@10"] == 0.5
