import pytest

from graphmem.fusion import normalise_max, rank_fuse, rrf, zscore_fuse, zscores


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
