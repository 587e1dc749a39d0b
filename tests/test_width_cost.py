"""Methods whose cost followed the declared width now work on the columns that hold values.

MLFS and CMLFS (the cutting plane over feature subsets, Gu, Li & Han, CIKM 2011, problem (6))
and LIEML's label enhancement (Tao, Xu & Geng, eq. 6) solve on the columns of X holding a
value and map the solution back; an empty column changes neither problem (the modules'
"Empty columns" paragraphs).  The properties: a fit on X with empty columns inserted is a fit
of the same problem -- the certified bounds of the two fits bracket one optimum -- with zero
weight, zero feature weight and no subset on the empty columns; the stacked objective of the
held columns, with the declared width in its weights, is the full one's on every Z whose
empty rows are zero.  Whether every registered method's cost follows the stored entries is
the fuzz matrix's wide case (tests/test_fuzz_matrix.py); the commands' width limit is
tests/test_commands_memory.py's.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from multilabel_core_plugins.lieml.enhancement import enhance_labels, stacked_objective
from multilabel_core_plugins.ranking.cutting_plane import used_columns

from multilabel_core import ConvergenceWarning, make_method
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.testing.fuzz import wide_problem, wide_sparse
from multilabel_core.validation import to_signs


def narrow_problem(n_features: int, seed: int):
    data = make_correlated_multilabel(30, n_features, 3, random_state=seed)
    return np.asarray(data.X, dtype=np.float64), np.asarray(data.Y)


def spread(X, width: int, positions: np.ndarray):
    """X's columns at ``positions`` of a CSR of ``width`` columns, every other column empty."""
    n, held = X.shape
    return sp.csr_matrix((X.ravel(), np.tile(positions, n), np.arange(0, n * held + 1, held)), shape=(n, width))


@st.composite
def placements(draw, held: int):
    width = draw(st.integers(held + 1, 400))
    positions = np.sort(np.array(draw(st.lists(st.integers(0, width - 1), min_size=held, max_size=held, unique=True))))
    return width, positions


def brackets(estimator):
    """The certified [dual, primal] of a fit's last certificate."""
    certificate = estimator.certificate_[-1] if isinstance(estimator.certificate_, list) else estimator.certificate_
    assert certificate.converged, certificate
    return float(certificate.dual), float(certificate.primal)


def test_used_columns_are_read_from_the_stored_entries():
    X = sp.csr_matrix((np.array([1.0, 0.0, 2.0]), np.array([5, 2, 9]), np.array([0, 2, 3])), shape=(2, 10**7))
    assert used_columns(X).tolist() == [5, 9]  # the explicit zero at column 2 holds nothing
    assert used_columns(X.tocsc()).tolist() == [5, 9]
    assert used_columns(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, -2.0]])).tolist() == [1, 2]
    assert used_columns(sp.csr_matrix((3, 8))).tolist() == [0]  # one column kept: a solve needs one


@pytest.mark.parametrize("method", ["mlfs", "cmlfs"])
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_cutting_plane_on_a_wide_x_solves_the_narrow_problem(method, data):
    seed = data.draw(st.integers(0, 3))
    X, Y = narrow_problem(15, seed)
    width, positions = data.draw(placements(15))
    narrow = make_method(method, tol=1e-4).fit(sp.csr_matrix(X), Y)
    wide = make_method(method, tol=1e-4).fit(spread(X, width, positions), Y)
    # Both certify bounds on one optimum: the intervals [lower, upper] must meet.
    (low_n, up_n), (low_w, up_w) = brackets(narrow), brackets(wide)
    assert max(low_n, low_w) <= min(up_n, up_w) + 1e-12 * max(1.0, abs(up_n)), ((low_n, up_n), (low_w, up_w))
    empty = np.setdiff1d(np.arange(width), positions)
    assert wide.coef_.shape == (width, 3) and not wide.coef_[empty].any()
    assert not wide.subsets_[:, empty].any() and not wide.feature_weights_[empty].any()
    assert set(wide.selected_features_) <= set(positions)
    m = min(wide.n_features, positions.size)
    assert wide.feature_weights_.sum() == pytest.approx(m, rel=1e-9)
    assert wide.n_features_in_ == width and wide.decision_function(spread(X, width, positions)).shape == (30, 3)


def test_fewer_held_columns_than_the_subset_size_keep_every_held_column():
    """m = 10 over 5 held columns: the relaxed optimum puts s = 1 on each (F does not increase in s)."""
    X, Y = narrow_problem(5, 0)
    positions = np.array([3, 40, 41, 90, 199])
    wide = make_method("mlfs", n_features=10).fit(spread(X, 200, positions), Y)
    assert np.array_equal(np.flatnonzero(wide.feature_weights_), positions)
    np.testing.assert_allclose(wide.feature_weights_[positions], 1.0, rtol=0, atol=1e-12)
    narrow = make_method("mlfs", n_features=10).fit(sp.csr_matrix(X), Y)
    (low_n, up_n), (low_w, up_w) = brackets(narrow), brackets(wide)
    assert max(low_n, low_w) <= min(up_n, up_w) + 1e-12 * max(1.0, abs(up_n))


@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_the_stacked_objective_of_the_held_columns_is_the_full_one(data):
    """f, its gradient and its conjugate (eq. 6-7) on Z with zero rows at the empty columns."""
    seed = data.draw(st.integers(0, 10**6))
    rng = np.random.default_rng(seed)
    held, width, n, t = 4, data.draw(st.integers(5, 60)), 7, 3
    positions = np.sort(rng.choice(width, held, replace=False))
    X = rng.normal(size=(n, held))
    full_X = np.zeros((n, width))
    full_X[:, positions] = X
    S = np.where(rng.random((n, t)) < 0.5, -1.0, 1.0)
    lam = float(rng.uniform(0.1, 10))
    Z0_h, value_h, grad_h, conj_h, step_h = stacked_objective(X, S, lam, n_features=width)
    Z0_f, value_f, grad_f, conj_f, step_f = stacked_objective(full_X, S, lam)
    rows = np.concatenate([np.arange(t), t + positions, [t + width]])  # the full Z's rows the held Z keeps
    np.testing.assert_array_equal(Z0_f[rows], Z0_h)
    assert not np.delete(Z0_f, rows, axis=0).any() and step_h == step_f
    Z_h = Z0_h + rng.normal(size=Z0_h.shape)
    Z_f = np.zeros_like(Z0_f)
    Z_f[rows] = Z_h
    # The same terms, summed over the same nonzero entries: rounding of those sums only.
    assert value_h(Z_h) == pytest.approx(value_f(Z_f), rel=1e-13)
    G_f = grad_f(Z_f)
    np.testing.assert_allclose(G_f[rows], grad_h(Z_h), rtol=1e-14, atol=0)
    assert not np.delete(G_f, rows, axis=0).any()
    M_h = -0.5 * grad_h(Z_h)  # inside the label part's domain: |y m| <= label weight
    M_f = np.zeros_like(Z0_f)
    M_f[rows] = M_h
    assert conj_h(M_h) == pytest.approx(conj_f(M_f), rel=1e-12)


def test_label_enhancement_of_a_wide_x_is_that_of_its_held_columns():
    """U of the stacked matrix with the empty rows (computed in full, 200 columns) and without them."""
    from multilabel_core_plugins.lieml.fpc import fixed_point_continuation

    X, Y = narrow_problem(15, 1)
    positions = np.sort(np.random.default_rng(3).choice(200, 15, replace=False))
    full_X = spread(X, 200, positions).toarray()
    Z0, value, gradient, conjugate, step = stacked_objective(full_X, to_signs(Y), 1.0)
    full = fixed_point_continuation(
        Z0, value, gradient, step=step, mu_min=1e-5, eta_mu=0.25, stage_tol=1e-5, max_iter=20000,
        fixed_rows=[Z0.shape[0] - 1], f_conjugate=conjugate, svt="auto", accelerate=True, warn=False,
    )  # fmt: skip
    held = enhance_labels(spread(X, 200, positions), Y)
    assert full.certificate.converged and held.certificate.converged
    # One objective, T1: each certificate brackets its optimum.
    lows = (full.certificate.dual, held.certificate.dual)
    ups = (full.certificate.primal, held.certificate.primal)
    assert max(lows) <= min(ups) + 1e-12 * max(1.0, abs(min(ups)))
    assert held.rank == full.solution.model_state["rank"] and held.labels.shape == (30, 3)


def test_lieml_on_a_wide_x_enhances_as_the_full_stacked_matrix():
    """LIEML's fit on 2000 columns (15 held): its enhancement certifies T1 of the full Z, empty rows included.

    T1 weighs the features by 1/(d n) with the declared d (eq. 6), so the held columns alone
    would be another problem: the comparison is with the full stacked matrix, solved as is.
    """
    from multilabel_core_plugins.lieml.fpc import fixed_point_continuation

    X_wide, Y = wide_problem(2000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fitted = make_method("lieml").fit(X_wide, Y)
    Z0, value, gradient, conjugate, step = stacked_objective(X_wide.toarray(), to_signs(Y), fitted.lam)
    full = fixed_point_continuation(
        Z0, value, gradient, step=step, mu_min=fitted.mu_min, eta_mu=fitted.eta_mu, stage_tol=fitted.stage_tol,
        max_iter=fitted.fpc_max_iter, fixed_rows=[Z0.shape[0] - 1], f_conjugate=conjugate, svt="auto", accelerate=True,
        warn=False,
    )  # fmt: skip
    a, b = fitted.enhancement_.certificate, full.certificate
    assert a.converged and b.converged
    assert max(a.dual, b.dual) <= min(a.primal, b.primal) + 1e-12 * max(1.0, abs(a.primal))
    assert fitted.n_features_in_ == 2000 and fitted.rank_ == full.solution.model_state["rank"]


def test_the_wide_case_is_the_red_team_shape():
    X, Y = wide_problem()
    assert X.shape == (30, 10**6) and X.nnz == 450 and Y.shape == (30, 3)
    assert X[:, -1].nnz > 0 and used_columns(X).size == 15
    assert sp.issparse(wide_sparse(np.ones((2, 3)), 10)) and wide_sparse(np.ones((2, 3)), 10).indices.tolist() == [0, 4, 9] * 2
