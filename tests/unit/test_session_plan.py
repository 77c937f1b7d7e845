from graphmem.engine.writes import plan_session


def test_append_adds_one_edge() -> None:
    plan = plan_session(["a", "b", "c"], [("a", "b")])
    assert plan.add == [("b", "c")]
    assert plan.remove == []
    assert plan.predecessor == {"c": "b"}


def test_insert_in_the_middle_splices_the_chain() -> None:
    plan = plan_session(["a", "x", "b"], [("a", "b")])
    assert sorted(plan.add) == [("a", "x"), ("x", "b")]
    assert plan.remove == [("a", "b")]
    assert plan.predecessor == {"x": "a", "b": "x"}


def test_removal_relinks() -> None:
    plan = plan_session(["a", "c"], [("a", "b"), ("b", "c")])
    assert plan.add == [("a", "c")]
    assert sorted(plan.remove) == [("a", "b"), ("b", "c")]
    assert plan.predecessor == {"c": "a"}


def test_unchanged_chain_is_a_no_op() -> None:
    plan = plan_session(["a", "b"], [("a", "b")])
    assert not plan.add and not plan.remove and not plan.predecessor
