"""The core's proximal operators (multilabel_core.proximal): each is the minimiser of its defining problem."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multilabel_core.proximal import group_soft_threshold, singular_value_threshold, soft_threshold
from multilabel_core_plugins.lieml import fpc


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), step=st.floats(0.05, 2.0))
def test_each_prox_minimises_its_problem(seed, step):
    W = np.random.default_rng(seed).standard_normal((3, 2))
    penalties = [
        (soft_threshold, lambda Z: np.abs(Z).sum()),
        (group_soft_threshold, lambda Z: np.linalg.norm(Z, axis=1).sum()),
        (lambda A, t: singular_value_threshold(A, t).matrix, lambda Z: np.linalg.svd(Z, compute_uv=False).sum()),
    ]
    for prox, penalty in penalties:
        P = prox(W, step)

        def objective(Z):
            return 0.5 * np.sum((Z - W) ** 2) + step * penalty(Z)

        # The objective is 1-strongly convex with minimiser P exactly when it grows by at least
        # 1/2 ||D||^2 in every direction D from P (here random ones, at several scales).
        rng = np.random.default_rng(seed + 1)
        for scale in (1e-4, 1e-2, 1.0):
            for _ in range(20):
                D = scale * rng.standard_normal(W.shape)
                assert objective(P + D) >= objective(P) + 0.5 * np.sum(D**2) - 1e-12 * (1 + abs(objective(P)))


def test_group_soft_threshold_drops_whole_rows():
    W = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    P = group_soft_threshold(W, 1.0)
    assert np.allclose(P[0], [3.0 * 0.8, 4.0 * 0.8]) and np.all(P[1:] == 0.0)
    with pytest.raises(ValueError, match="threshold"):
        soft_threshold(W, -1.0)


def test_fpc_shrinks_with_the_core_operator():
    assert fpc.singular_value_threshold is singular_value_threshold
