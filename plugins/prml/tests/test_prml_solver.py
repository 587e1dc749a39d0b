"""The sub-problems and the alternation of You, Xu, Wang, Xu & Tao, *Privileged Multi-label Learning*.

* The D-step (eq. 10, dual 11) is ``svmplus_cd`` with the embedding A = W and the privileged label
  features of eq. 3 (restricted to a label pool): optimal against the testing kit's reference QP of its
  explicit dual, with a certificate whose gap and primal infeasibility are within what the tolerance
  promises.
* Theorem 1: the solution (M, w~) of each sub-problem is unique, whatever the coordinate order or the
  warm start -- alpha and beta themselves need not be (only alpha and alpha + beta enter M and w~).
* Algorithm 2: every block step (W-step, D-step) decreases objective (5).
* The paper's Remark: PrBR is problem (5) with W = I, i.e. the D-step at A = I.
"""

import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from multilabel_core_plugins.prml import PrBR, PrivilegedLabels, PrML

from multilabel_core.solvers import ConvergenceWarning
from multilabel_core.testing.strategies import feature_matrices, sign_matrices
from multilabel_core_plugins.prml.svmplus import svmplus_cd
from multilabel_core_plugins.prml.testing import assert_svmplus_matches_reference, svmplus_dual_matrices

TIGHT = {"tol": 1e-9, "max_iter": 50_000}
# A projected gradient <= tol puts the dual within O(tol) of its optimum, and the strongly convex primal
# (M, w~) within O(sqrt(tol)) of the unique solution (Theorem 1).
SOLUTION_TOL = 10.0 * np.sqrt(TIGHT["tol"])


@st.composite
def d_steps(draw):
    """Keyword arguments of the D-step (eq. 10): rows x_j, the labels as privileged features, a pool, A = W."""
    n, n_labels = draw(st.integers(3, 7)), draw(st.integers(2, 3))
    Y = draw(sign_matrices(n, n_labels))
    K = draw(st.one_of(st.none(), st.integers(1, n_labels - 1)))
    k = draw(st.integers(1, 3))
    return {
        "X": draw(feature_matrices(n, st.integers(1, 3), sparse=None, magnitude=3.0)),
        "X_priv": Y, "Y": Y, "C": draw(st.floats(0.1, 5.0)), "gamma": draw(st.floats(0.2, 5.0)),
        "embedding": draw(hnp.arrays(np.float64, (k, n_labels), elements=st.floats(-2.0, 2.0))),
        "privileged_mask": PrivilegedLabels(n_privileged=K).pool(Y), "fit_intercept": True,
    }


def solved(problem, **options):
    """A solve at ``options``' tolerance (tight by default); draws where CD does not reach it are discarded."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = svmplus_cd(**problem, **{**TIGHT, **options})
    assume(fit.certificate.converged)
    return fit


def _eta(fit):
    return np.concatenate([fit.solution.dual.ravel(), fit.solution.model_state["beta"].ravel()])


def _solution(fit):
    fitted = fit.solution.model_state
    return {"coef": fit.solution.coef, "intercept": fit.solution.intercept, "D": fitted["D"],
            "D_intercept": fitted["D_intercept"], "W_tilde": fitted["W_tilde"],
            "intercept_tilde": fitted["intercept_tilde"]}


def _assert_same_solution(first, second, tol):
    for name, expected in _solution(second).items():
        np.testing.assert_allclose(_solution(first)[name], expected, atol=tol * max(1.0, np.abs(expected).max()),
                                   err_msg=name)


# -- the D-step's certificate ---------------------------------------------------------------


@given(d_steps())
def test_the_d_step_matches_the_reference_qp_of_dual_11(problem):
    fit = solved(problem, random_state=0)
    H, _, _ = svmplus_dual_matrices(**problem)
    value = assert_svmplus_matches_reference(fit, problem, kkt_tol=10 * TIGHT["tol"] * max(1.0, np.abs(H).max()))
    assert fit.certificate.dual == pytest.approx(-value, rel=1e-8, abs=1e-8)


@given(d_steps(), st.sampled_from([1e-2, 1e-4, 1e-6]))
def test_the_d_step_certificate_is_within_its_tolerance(problem, tol):
    """Converged at tol: every projected gradient is within tol, so the point (D, w~) violates no constraint by
    more than tol and the gap sum eta G (complementarity) is at most tol ||eta||_1 in absolute value."""
    fit = solved(problem, tol=tol, random_state=1)
    certificate = fit.certificate
    assert certificate.kkt_violation <= tol
    assert certificate.statistics["primal_infeasibility"] <= tol
    assert abs(certificate.gap) <= tol * np.abs(_eta(fit)).sum() + 1e-9 * max(1.0, abs(certificate.primal))
    assert certificate.primal - certificate.dual == pytest.approx(certificate.gap, rel=1e-9, abs=1e-9)


# -- Theorem 1 ------------------------------------------------------------------------------


@given(d_steps(), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_theorem_1_other_coordinate_orders_give_the_same_solution(problem, seed, other):
    _assert_same_solution(solved(problem, random_state=seed), solved(problem, random_state=other), SOLUTION_TOL)


@given(d_steps(), st.integers(0, 2**32 - 1))
def test_theorem_1_warm_starts_give_the_same_solution(problem, seed):
    rng = np.random.default_rng(seed)
    shape = problem["Y"].shape
    cold = solved(problem, random_state=0)
    warm = solved(problem, random_state=0, alpha0=rng.uniform(0.0, 2 * problem["C"], shape),
                  beta0=rng.uniform(0.0, 2 * problem["C"], shape))
    _assert_same_solution(warm, cold, SOLUTION_TOL)


def test_theorem_1_holds_where_the_duals_differ():
    """Duplicated privileged rows make (alpha, beta) non-unique: alpha + beta may shift between the copies
    and beta between the pairs, yet M (from alpha) and w~ (from alpha + beta) are unique."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((12, 3))
    Y = np.where(X @ rng.standard_normal((3, 3)) > 0, 1.0, -1.0)
    X, Y = np.vstack([X, X]), np.vstack([Y, Y])  # each example twice
    problem = {"X": X, "X_priv": Y, "Y": Y, "C": 1.0, "gamma": 0.5, "embedding": rng.standard_normal((2, 3)),
               "privileged_mask": PrivilegedLabels().pool(Y), "fit_intercept": True}
    fits = [svmplus_cd(**problem, **TIGHT, random_state=seed) for seed in range(4)]
    assert all(fit.certificate.converged for fit in fits)
    # The orders do reach other dual points here ...
    assert max(np.abs(fit.solution.dual - fits[0].solution.dual).max() for fit in fits[1:]) > 0.1
    for fit in fits[1:]:  # ... and the same solution.
        _assert_same_solution(fit, fits[0], SOLUTION_TOL)


# -- Algorithm 2 ----------------------------------------------------------------------------


def _data(seed, n=40, d=4, n_labels=3):
    """Linearly separable labels: with noisy ones the optimum of (5) is often the trivial w = 0, every slack
    1 (the correcting functions are linear in y~, so they cannot follow the margins of single examples)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, (X @ rng.standard_normal((d, n_labels)) > 0).astype(int)


def test_objective_5_never_increases_across_block_steps():
    """Each block step minimises (5) over its block (W, w~ or D, w~) from the previous point, which is
    feasible for it; the values are the sub-solves' primals at feasible points within a relative gap cd_tol
    of their blocks' optima, so a value may exceed the previous one by cd_tol relative to it at most.

    Dual CD from the random start: the draw (seed 7, C = 10, k = L) is one on which (5) leaves its start: on
    most draws the first W-step from a random D lands on the trivial point w = 0, every slack 1 (value
    C n L + L/2), a fixed point of the alternation (docs/methods/prml.md, *Initial D*)."""
    X, Y = _data(7)
    cd_tol = 1e-3
    model = PrML(C=10.0, rank=3, cd_tol=cd_tol, cd_max_iter=50_000, tol=1e-8, max_iter=30, sub_solver="cd",
                 init="random").fit(X, Y)
    blocks = model.block_objective_history_
    assert len(blocks) == 2 * len(model.objective_history_) >= 6
    assert blocks[-1] < 0.6 * blocks[0]
    assert all(c.converged for c in model.d_step_certificates_ + model.w_step_certificates_)
    slack = cd_tol * np.abs(blocks).max()
    assert np.all(np.diff(blocks) <= slack), np.diff(blocks)
    assert np.all(np.diff(model.objective_history_) <= slack)
    # The round's objective is the D-step's value.
    np.testing.assert_allclose(model.objective_history_, blocks[1::2], rtol=1e-12)


def test_a_w_step_at_the_trivial_point_ends_the_alternation_there():
    """With noisy labels the optimum of the W-step is w = 0 with every slack 1: the correcting functions are
    linear in y~, so examples sharing a privileged vector share a slack, which must cover the worst hinge
    among them.  Then the D-step sees W = 0 and returns D = 0, and the alternation cannot move: the value is
    C n L + L/2 (w~ = its bias 1 per label)."""
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((40, 4)), (rng.random((40, 3)) < 0.5).astype(int)
    model = PrML(C=1.0, rank=3, cd_tol=1e-6, cd_max_iter=50_000).fit(X, Y)
    n, L = Y.shape
    np.testing.assert_allclose(model.objective_history_[-1], 1.0 * n * L + L / 2, rtol=1e-5)
    assert np.abs(model.coef_).max() < 1e-3


# -- the Remark: PrBR ----------------------------------------------------------------------


@pytest.mark.parametrize("seed, n_privileged", [(0, None), (3, 1)])
def test_prbr_is_the_d_step_at_w_equal_to_the_identity(seed, n_privileged):
    X, Y = _data(seed)
    S = np.where(Y > 0, 1.0, -1.0)
    cd_tol, C, gamma2 = 1e-8, 0.7, 0.5
    prbr = PrBR(C=C, gamma2=gamma2, n_privileged=n_privileged, cd_tol=cd_tol, cd_max_iter=50_000).fit(X, Y)
    pool = PrivilegedLabels(n_privileged=n_privileged).pool(S)
    np.testing.assert_array_equal(prbr.privileged_pool_, pool)
    d_step = svmplus_cd(X, S, S, C, gamma2, embedding=np.eye(3), privileged_mask=pool, fit_intercept=True,
                        tol=cd_tol, max_iter=50_000, random_state=1)
    assert d_step.certificate.converged and prbr.certificate_[-1].converged
    tol = 10.0 * np.sqrt(cd_tol)
    for mine, theirs in ((prbr.coef_, d_step.solution.coef), (prbr.intercept_, d_step.solution.intercept),
                         (prbr.privileged_weights_, d_step.solution.model_state["W_tilde"]),
                         (prbr.privileged_intercept_, d_step.solution.model_state["intercept_tilde"]),
                         (prbr.dictionary_, d_step.solution.model_state["D"])):
        np.testing.assert_allclose(mine, theirs, atol=tol * max(1.0, np.abs(theirs).max()))
    np.testing.assert_array_equal(prbr.label_weights_, np.eye(3))
