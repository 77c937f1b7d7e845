"""``vectors.among`` is ``np.isin`` for a filter's codes (statuses, tiers)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from graphmem.store.ann.vectors import among


@given(arrays(np.int8, st.integers(0, 300), elements=st.integers(0, 6)),
       st.lists(st.integers(0, 6), max_size=5))
def test_among_is_isin(values: np.ndarray, codes: list[int]) -> None:
    got = among(values, codes)
    assert got.dtype == bool and got.shape == values.shape
    assert got.tolist() == np.isin(values, codes).tolist()
