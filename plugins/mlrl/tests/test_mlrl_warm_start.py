"""Warm starts along a grid of lambdas: the rescaled alphas of the previous fit are a feasible start.

``alpha_ / lam`` is the previous fit's alphas rescaled to the new box 1/(n lam); in floating
point it can exceed the box by an ulp, which SMO refused ("alpha must lie in the box").  On
standardised emotions this happened for n = 317 and 319 (not 316 or 318) from lam = 1e-5 to
1e-4, and on generated data for n = 58.
"""

import numpy as np
import pytest

from multilabel_core.datasets import load_dataset, make_correlated_multilabel
from multilabel_core_plugins.mlrl import MLRL


def _warm_then_cold(X, Y, first, second):
    warm = MLRL(lam=first, warm_start=True).fit(X, Y)
    overshoot = int(np.sum(warm.alpha_ / second > 1.0 / (X.shape[0] * second)))
    warm.set_params(lam=second).fit(X, Y)
    return overshoot, warm, MLRL(lam=second).fit(X, Y)


def _assert_same_optimum(warm, cold):
    # Objective (6) of each fit lies within its own joint gap of the optimum (module docstring
    # of multilabel_core.solvers.alternating), so the two agree to the sum of their gaps.
    slack = sum(model.joint_gap_history_[-1] * model.objective_history_[-1] for model in (warm, cold))
    assert abs(warm.objective_history_[-1] - cold.objective_history_[-1]) <= slack


def test_rescaled_alphas_above_the_new_box_are_a_valid_start():
    dataset = make_correlated_multilabel(n_samples=58, n_features=4, n_labels=3, random_state=4)
    overshoot, warm, cold = _warm_then_cold(dataset.X, dataset.Y, 1e-5, 1e-4)
    assert overshoot > 0  # the case the test is about: some rescaled alpha exceeds the new box
    assert np.all(warm.alpha_ >= 0.0) and np.all(warm.alpha_ <= 1.0 / 58)
    _assert_same_optimum(warm, cold)


@pytest.mark.parametrize("n", [317, 319])
def test_emotions_odd_sizes_warm_start_from_1e_5_to_1e_4(datasets_dir, n):
    dataset = load_dataset(datasets_dir / "emotions.arff")
    X, Y = np.asarray(dataset.X, dtype=np.float64)[:n], np.asarray(dataset.Y)[:n]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    overshoot, warm, cold = _warm_then_cold(X, Y, 1e-5, 1e-4)
    assert overshoot > 0
    _assert_same_optimum(warm, cold)
