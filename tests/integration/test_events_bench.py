"""``graphmem bench api --listeners N`` end to end at a tiny size (issue 48): a real
``graphmem serve``, the write phase in rounds without listeners, with idle ones (another
namespace) and with ones receiving every write, and the table that reports them."""

from __future__ import annotations


def test_the_api_bench_writes_with_and_without_listeners() -> None:
    from graphmem.bench import api_load

    r = api_load.run_api_load(150, clients=2, seconds=0.5, max_requests=20,
                              progress=lambda *_: None, writers=1, per_writer=2,
                              searchers=1, stall=False, baseline=False, listeners=3)
    ls = r["listeners"]
    assert ls["listeners"] == 3 and [len(ls["rounds"][k]) for k in ls["rounds"]] == [3, 3, 3]
    for name in ("none", "idle", "receiving"):
        assert all(x["errors"] == 0 and x["requests"] > 0 for x in ls["rounds"][name])
    # idle listeners receive nothing; receiving ones every write's event (all three of them,
    # those the pool read before it closed)
    assert ls["idle"]["events_read"] == 0
    written = ls["receiving"]["requests"]
    assert 0 < ls["receiving"]["events_read"] <= 3 * written
    assert ls["idle_p50_over_none"] > 0 and ls["receiving_p95_over_none"] > 0
    text = api_load.table(r)
    assert "3 receiving every write" in text and "3 idle (another namespace)" in text
    assert "median of the rounds' ratios" in text
