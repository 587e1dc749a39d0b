"""The pairwise label-ranking dual (Gu, Li & Han, *Correlated Multi-Label Feature Selection*, Algorithm 1) on the
CD engine: optimal against a reference QP, monotone, deterministic, warm-startable, equivariant.

The reference is the dual (20) written out densely, g(alpha) = 1/2 alpha^T H alpha - 1^T alpha with
H_pq = (e_k - e_l)^T R^-1 (e_k' - e_l') z_i^T z_i' over pairs p = (i, k, l), q = (i', k', l'),
solved by the testing kit's active-set QP solver.

CD's linear rate has no bound on degenerate draws (nearly parallel rows with opposite pairs make
coordinates almost collinear; plain CD on the explicit QP behaves the same), so the properties that
need the optimum keep the draws where a tight solve converged (:func:`solved`); the others (monotone
dual, certificate signs) hold on every draw.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from multilabel_core.validation import to_signs
from multilabel_core.losses import PairwiseRankingHinge, ranking_pairs
from multilabel_core.solvers import ConvergenceWarning
from multilabel_core.solvers.kit import as_rows, solve_dual
from multilabel_core_plugins.ranking._cd_ranking import RankingDual
from multilabel_core_plugins.ranking.engine import coupling_inverse, ranking_cd
from multilabel_core.testing.checks import assert_dual_ascent, assert_duality_gap, assert_kkt, assert_matches_reference
from multilabel_core.testing.reference import solve_box_qp_reference
from multilabel_core.testing.strategies import label_covariances, label_matrices, multilabel_problems

TIGHT = {"tol": 1e-9, "max_iter": 50_000}


def solved(problem, **options):
    """A tight solve of ``problem``; draws on which CD does not reach it are discarded."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = ranking_cd(**problem, **TIGHT, **options)
    assume(result.certificate.converged)
    return result


@st.composite
def ranking_problems(draw, *, weighted=True):
    """Keyword arguments of :func:`ranking_cd` for a tiny problem (dense or sparse, degenerate rows allowed)."""
    X, Y = draw(multilabel_problems(
        n_samples=st.integers(3, 8), n_features=st.integers(1, 4), n_labels=st.integers(2, 4), sparse=None,
        both_classes=False, degenerate=True, magnitude=3.0,
    ))
    mu = draw(st.sampled_from([0.0, 0.1, 1.0, 10.0]))
    D = draw(label_covariances(n_labels=Y.shape[1]))
    if draw(st.booleans()):
        D = np.diag(np.diagonal(D))  # a diagonal R^-1: the variant's two-row step
    R_inv = coupling_inverse(D, mu)
    weights = None
    if weighted and draw(st.booleans()):
        # Weights far below 1 make rows nearly parallel to the bias feature: CD's linear rate
        # then degrades without bound, so keep them away from 0 (0 itself drops the feature).
        entries = st.one_of(st.just(0.0), st.floats(0.25, 2.0))
        weights = draw(hnp.arrays(np.float64, X.shape[1], elements=entries).filter(lambda w: w.any()))
    return {
        "X": X, "Y": Y, "C": draw(st.floats(0.05, 20.0)), "R_inv": R_inv, "feature_weights": weights,
        "fit_intercept": draw(st.booleans()),
    }


def rows_z(problem):
    """The dense rows z_i of ``problem`` (re-weighted, with the constant feature when fitting a bias)."""
    X = problem["X"]
    Z = X.toarray() if sp.issparse(X) else np.array(X)
    if problem["feature_weights"] is not None:
        Z = Z * np.sqrt(problem["feature_weights"])
    if problem["fit_intercept"]:
        Z = np.hstack([Z, np.ones((Z.shape[0], 1))])
    return Z


def explicit_dual(problem):
    """H and the box of the dual (20) for ``problem``, from the dense re-weighted rows."""
    Y, Z = problem["Y"], rows_z(problem)
    rows, k, l = ranking_pairs(Y)
    E = np.zeros((rows.size, Y.shape[1]))
    E[np.arange(rows.size), k] = 1.0
    E[np.arange(rows.size), l] = -1.0
    H = (E @ problem["R_inv"] @ E.T) * (Z[rows] @ Z[rows].T)
    sizes = Y.sum(axis=1) * (Y.shape[1] - Y.sum(axis=1))
    return H, problem["C"] / sizes[rows]


def dual_value(H, alpha):
    return 0.5 * alpha @ H @ alpha - alpha.sum()


@given(ranking_problems())
def test_matches_reference_qp_with_kkt_and_gap(problem):
    result = solved(problem, random_state=0)
    H, upper = explicit_dual(problem)
    reference = solve_box_qp_reference(H, -np.ones(upper.size), 0.0, upper)
    value = dual_value(H, result.solution.dual)
    assert_matches_reference(result.solution.dual, value, reference.x, reference.objective, rtol_objective=1e-6,
                             atol_objective=1e-9, atol_alpha=None)
    assert result.certificate.dual == pytest.approx(-value, rel=1e-9, abs=1e-9)
    assert_kkt(result.solution.dual, H @ result.solution.dual - 1.0, None, upper, tol=1e-7, equality=False)
    assert_duality_gap(result.certificate, rtol=1e-6, atol=1e-9)
    assert result.certificate.kkt_violation <= 1e-7


@given(ranking_problems(weighted=False), st.sampled_from([0.0, 0.5, 5.0]), st.data())
def test_primal_is_eq6_with_R_equal_I_plus_mu_D_inverse(problem, mu, data):
    """The certificate's primal is (6) evaluated independently: R^-1 enters the dual, R = I + mu D^-1 the primal."""
    D = data.draw(label_covariances(n_labels=problem["Y"].shape[1]))
    problem["R_inv"] = coupling_inverse(D, mu)
    result = solved(problem, random_state=0)
    W, intercept = result.solution.coef, result.solution.intercept
    W_full = np.vstack([W, intercept]) if problem["fit_intercept"] else W
    regulariser = 0.5 * np.sum(W_full**2) + 0.5 * mu * np.trace(W_full @ np.linalg.inv(D) @ W_full.T)
    scores = np.asarray(problem["X"] @ W) + intercept
    loss = PairwiseRankingHinge().value(to_signs(problem["Y"]), scores)
    assert result.certificate.primal == pytest.approx(regulariser + problem["C"] * loss, rel=1e-8, abs=1e-9)
    np.testing.assert_allclose(result.solution.model_state["weight_gram"], W_full.T @ W_full, rtol=1e-8, atol=1e-12)


@given(ranking_problems(), st.data())
def test_mu_zero_is_the_plain_ranking_svm(problem, data):
    """R^-1 = (I + 0 D^-1)^-1 = I: the same solution as no coupling, the Elisseeff-Weston ranking SVM (eq. 1)."""
    D = data.draw(label_covariances(n_labels=problem["Y"].shape[1]))
    coupled = solved(dict(problem, R_inv=coupling_inverse(D, 0.0)), random_state=0)
    plain = solved(dict(problem, R_inv=None), random_state=0)
    W = plain.solution.coef
    np.testing.assert_allclose(coupled.solution.coef, W, atol=1e-5 * max(1.0, np.abs(W).max()))
    # Both primals lie in [optimum, optimum + own gap] (weak duality): they differ by at most the larger gap,
    # not by a fixed 1e-8 (a hypothesis example had 3e-9 between two certified solves of one problem).
    a, b = coupled.certificate, plain.certificate
    assert abs(a.primal - b.primal) <= max(a.gap, b.gap) + 1e-12 * max(1.0, abs(b.primal))


def test_coupling_inverse_is_the_inverse_of_R():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((4, 4))
    D = A @ A.T + 0.1 * np.eye(4)
    R_inv = coupling_inverse(D, 2.5)
    np.testing.assert_allclose(R_inv, np.linalg.inv(np.eye(4) + 2.5 * np.linalg.inv(D)), atol=1e-12)
    assert np.array_equal(R_inv, R_inv.T)  # exact: it returns (A + A.T) / 2, and IEEE addition commutes
    np.testing.assert_allclose(coupling_inverse(D, 0.0), np.eye(4), atol=1e-12)


@pytest.mark.filterwarnings("ignore::multilabel_core.solvers.ConvergenceWarning")  # a short run on purpose
@given(ranking_problems())
def test_dual_never_decreases_across_epochs(problem):
    result = ranking_cd(**problem, tol=1e-6, max_iter=2000, random_state=1, record_dual=True)
    assert_dual_ascent(result.certificate)


@given(ranking_problems(), st.integers(0, 2**32 - 1))
def test_shrinking_on_and_off_give_the_same_solution(problem, seed):
    on = solved(problem, shrinking=True, random_state=seed)
    off = solved(problem, shrinking=False, random_state=seed)
    assert off.certificate.statistics["n_shrunk"] == 0
    assert on.certificate.dual == pytest.approx(off.certificate.dual, rel=1e-8, abs=1e-9)
    W = off.solution.coef
    np.testing.assert_allclose(on.solution.coef, W, atol=1e-5 * max(1.0, np.abs(W).max()))


@given(ranking_problems())
def test_warm_start_from_the_optimum_stops_after_one_pass(problem):
    first = solved(problem, random_state=0)
    again = ranking_cd(**problem, tol=1e-6, random_state=1, alpha0=first.solution.dual)
    assert again.certificate.converged and again.certificate.n_iter <= 1
    assert again.certificate.dual >= first.certificate.dual - 1e-12 * max(1.0, abs(first.certificate.dual))


@given(ranking_problems(), st.randoms(use_true_random=False))
def test_row_and_label_permutations_permute_the_solution(problem, random):
    n, n_labels = problem["Y"].shape
    rows = np.array(random.sample(range(n), n))
    labels = np.array(random.sample(range(n_labels), n_labels))
    base = solved(problem, random_state=0)
    permuted = dict(problem, X=problem["X"][rows], Y=problem["Y"][rows][:, labels],
                    R_inv=problem["R_inv"][np.ix_(labels, labels)])
    other = solved(permuted, random_state=5)
    scale = max(1.0, np.abs(base.solution.coef).max())
    np.testing.assert_allclose(other.solution.coef, base.solution.coef[:, labels], atol=1e-5 * scale)
    np.testing.assert_allclose(other.solution.intercept, base.solution.intercept[labels], atol=1e-5 * scale)
    assert other.certificate.primal == pytest.approx(base.certificate.primal, rel=1e-7, abs=1e-9)


@given(ranking_problems(weighted=False),
       hnp.arrays(np.float64, 4, elements=st.one_of(st.just(0.0), st.floats(0.25, 3.0))))
def test_feature_weights_reweight_the_features(problem, draw_weights):
    """Weights s solve the problem on the rows sqrt(s) o x_i (X never copied per subset)."""
    d = problem["X"].shape[1]
    weights = draw_weights[:d] if draw_weights[:d].any() else np.ones(d)
    weighted = solved(dict(problem, feature_weights=weights), random_state=0)
    X = problem["X"]
    scaled = X @ sp.diags(np.sqrt(weights)) if sp.issparse(X) else X * np.sqrt(weights)
    plain = solved(dict(problem, X=scaled), random_state=0)
    W = plain.solution.coef
    scale = max(1.0, np.abs(W).max())
    np.testing.assert_allclose(weighted.solution.coef, np.sqrt(weights)[:, None] * W, atol=1e-5 * scale)
    assert np.all(weighted.solution.coef[weights == 0.0] == 0.0)
    assert weighted.certificate.primal == pytest.approx(plain.certificate.primal, rel=1e-7, abs=1e-9)


@given(ranking_problems(), label_matrices(n_samples=3, n_labels=1))
def test_rows_with_empty_or_full_label_sets_change_nothing(problem, full):
    X, Y = problem["X"], problem["Y"]
    extra_Y = np.repeat(full, Y.shape[1], axis=1)  # each extra row: all labels or none
    extra_X = np.full((3, X.shape[1]), 7.0)
    stacked = sp.vstack([X, sp.csr_matrix(extra_X)]).tocsr() if sp.issparse(X) else np.vstack([X, extra_X])
    base = solved(problem, random_state=0)
    more = solved(dict(problem, X=stacked, Y=np.vstack([Y, extra_Y])), random_state=0)
    assert more.certificate.statistics["n_pairs"] == base.certificate.statistics["n_pairs"]
    assert more.certificate.statistics["rows_without_pairs"] == base.certificate.statistics["rows_without_pairs"] + 3
    W = base.solution.coef
    np.testing.assert_allclose(more.solution.coef, W, atol=1e-5 * max(1.0, np.abs(W).max()))
    assert np.all(more.solution.model_state["beta"][-3:] == 0.0)


@given(label_matrices(n_samples=st.integers(1, 8), n_labels=st.integers(1, 5), both_classes=False))
def test_pairs_are_the_relevant_times_irrelevant_labels_of_each_row(Y):
    rows, k, l = ranking_pairs(Y)
    expected = [(i, a, b) for i in range(Y.shape[0]) for a in range(Y.shape[1]) for b in range(Y.shape[1])
                if Y[i, a] == 1 and Y[i, b] == 0]
    assert list(zip(rows.tolist(), k.tolist(), l.tolist())) == expected
    assert rows.dtype == k.dtype == l.dtype == np.intp


def test_sparse_input_equals_dense_and_the_beta_of_eq8():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((40, 6)) * (rng.random((40, 6)) < 0.4)
    Y = (rng.random((40, 5)) < 0.35).astype(int)
    dense = ranking_cd(X, Y, C=2.0, **TIGHT, random_state=0)
    sparse = ranking_cd(sp.csc_matrix(X), Y, C=2.0, **TIGHT, random_state=0)
    np.testing.assert_allclose(sparse.solution.coef, dense.solution.coef, atol=1e-7)
    beta = np.zeros(Y.shape)
    pair_row, pair_k, pair_l = dense.solution.model_state["pairs"]
    np.add.at(beta, (pair_row, pair_k), dense.solution.dual)
    np.add.at(beta, (pair_row, pair_l), -dense.solution.dual)
    np.testing.assert_allclose(dense.solution.model_state["beta"], beta, atol=1e-15)
    # R = I: W = U = X^T beta (eq. 10)
    np.testing.assert_allclose(dense.solution.coef, X.T @ dense.solution.model_state["beta"], atol=1e-9)


def test_max_iter_warns_and_reports_not_converged():
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((30, 4)), (rng.random((30, 4)) < 0.5).astype(int)
    with pytest.warns(ConvergenceWarning, match="ranking_cd did not converge"):
        result = ranking_cd(X, Y, C=100.0, tol=1e-12, max_iter=1, random_state=0)
    assert not result.certificate.converged and result.certificate.n_iter == 1
    assert result.certificate.gap >= 0.0


def test_same_seed_same_run():
    rng = np.random.default_rng(1)
    X, Y = rng.standard_normal((25, 3)), (rng.random((25, 4)) < 0.5).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = ranking_cd(X, Y, tol=1e-6, random_state=11)
        second = ranking_cd(X, Y, tol=1e-6, random_state=11)
    # Exact: the same code on identical inputs and seed in one process.
    np.testing.assert_array_equal(first.solution.dual, second.solution.dual)
    assert first.certificate.n_iter == second.certificate.n_iter


def test_visits_count_each_epochs_pairs():
    """n_visits is the epochs' work: every pair once per epoch, less the pairs shrinking dropped."""
    rng = np.random.default_rng(2)
    X, Y = rng.standard_normal((40, 5)), (rng.random((40, 4)) < 0.4).astype(int)
    with pytest.warns(ConvergenceWarning):
        full = ranking_cd(X, Y, C=10.0, tol=1e-12, max_iter=5, shrinking=False, random_state=0)
    counts = full.certificate.statistics
    assert counts["n_visits"] == 5 * counts["n_pairs"] and counts["n_shrunk"] == 0
    shrunk = ranking_cd(X, Y, C=10.0, tol=1e-3, random_state=0).certificate
    counts = shrunk.statistics
    assert counts["n_shrunk"] > 0
    assert counts["n_updates"] <= counts["n_visits"]
    assert counts["n_visits"] + counts["n_shrunk"] <= shrunk.n_iter * counts["n_pairs"]


@given(ranking_problems())
def test_steps_keep_u_and_w_equal_to_their_sums_over_alpha(problem):
    """update (eq. 27) keeps U = sum_i beta_i z_i^T and W = R^-1 U exact: one epoch, stopped before any refresh."""
    Y, Z, R_inv = problem["Y"], rows_z(problem), problem["R_inv"]
    pair_row, pair_k, pair_l = ranking_pairs(Y)
    sizes = Y.sum(axis=1) * (Y.shape[1] - Y.sum(axis=1))
    alpha, U, W = np.zeros(pair_row.size), np.zeros((Y.shape[1], Z.shape[1])), np.zeros((Y.shape[1], Z.shape[1]))
    dual = RankingDual(as_rows(Z, 0.0), pair_row, pair_k, pair_l, problem["C"] / np.maximum(sizes, 1), R_inv, alpha,
                       U, W)
    solve_dual(dual, tol=0.0, max_iter=1, shrinking=False, seed=0)
    beta = np.zeros(Y.shape)
    np.add.at(beta, (pair_row, pair_k), alpha)
    np.add.at(beta, (pair_row, pair_l), -alpha)
    scale = max(1.0, np.abs(Z.T @ beta).max())
    np.testing.assert_allclose(U, beta.T @ Z, atol=1e-10 * scale)
    np.testing.assert_allclose(W, R_inv @ beta.T @ Z, atol=1e-10 * scale)
