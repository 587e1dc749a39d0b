"""Per-label linear SVM dual by coordinate descent: optimal, certified, LIBLINEAR's solution, dense = CSR."""

import functools
import warnings

import attrs
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given
from hypothesis import strategies as st

from multilabel_core import ComposedEstimator
from multilabel_core.validation import to_signs
from multilabel_core.base import CapabilityError
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.solvers import CDSolver, ConvergenceWarning, linear_svm_cd
from multilabel_core.testing.checks import assert_duality_gap, assert_kkt, assert_matches_reference, check_solver
from multilabel_core.testing.reference import linear_svm_primal, solve_box_qp_reference, strongly_convex_distance
from multilabel_core.testing.strategies import multilabel_problems

LOSSES = ("hinge", "squared_hinge")
TIGHT = {"tol": 1e-8, "max_iter": 1000000}
#: check_solver's tolerance on the projected gradients, and the duality gap it implies: with
#: |PG_i| <= tol, each hinge term of the gap is at most 2 C tol (squared hinge: C tol^2), so
#: gap <= 2 n C L tol <= 2 * 12 * 10 * 3 * tol on the drawn problems.  Not tighter: on nearly
#: collinear drawn rows (K = [[1 + 4e-6, 1], [1, 1]]) CD contracts by 1 - 1e-6 per epoch.
CHECKED = {"tol": 1e-6, "max_iter": 100000}
GAP_TOL = 2 * 12 * 10 * 3 * CHECKED["tol"]

#: Small problems (duplicate rows, one-class labels, rank-deficient X included), dense or sparse,
#: with a loss, a cost and whether to fit the (regularised) intercept.
svm_problems = st.tuples(
    multilabel_problems(sparse=None, n_labels=st.integers(1, 3), both_classes=False, degenerate=True),
    st.sampled_from(LOSSES),
    st.sampled_from([0.1, 1.0, 10.0]),
    st.booleans(),
)


def augmented(X, fit_intercept):
    """X_a = [X, 1] (dense): the rows the dual sees."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    return np.hstack([X, np.ones((len(X), 1))]) if fit_intercept else X


def dual_matrices(X, y, C, loss, fit_intercept):
    """Q + D, the upper bound U and the diagonal D_ii of the dual (2) of one label, formed densely."""
    Xa = augmented(X, fit_intercept)
    diagonal = 1.0 / (2.0 * C) if loss == "squared_hinge" else 0.0
    Q = np.outer(y, y) * (Xa @ Xa.T) + diagonal * np.eye(len(y))
    return Q, (np.inf if loss == "squared_hinge" else C)


def dual_gradient(problem, alpha):
    """G = (Q + D) alpha - 1 for every label, from the data (independent of the solver's w)."""
    (X, Y), loss, C, fit_intercept = problem
    signs = to_signs(Y)
    columns = [dual_matrices(X, signs[:, l], C, loss, fit_intercept)[0] @ alpha[:, l] - 1.0 for l in range(Y.shape[1])]
    return np.column_stack(columns)


def solve(problem, *, random_state, warm_start=None, **options):
    (X, Y), loss, C, fit_intercept = problem
    result = linear_svm_cd(
        X,
        to_signs(Y),
        C,
        loss=loss,
        fit_intercept=fit_intercept,
        random_state=random_state,
        alpha0=warm_start,
        **(TIGHT | options),
    )
    # A drawn problem CD cannot solve within the epoch budget (nearly duplicate rows with opposite
    # labels contract by 1 - 1e-9 per epoch) says so in its certificate (tests/test_cd_engine.py::
    # test_max_iter_stops_with_a_convergence_warning) and carries no optimum to check here.
    assume(result.certificate.converged)
    return result.solution.dual, result.certificate


def test_kkt_gap_determinism_and_warm_start():
    # Property 1 (KKT), 2 (gap), determinism and 6 (warm start at the optimum: one pass), on drawn problems.
    check_solver(
        functools.partial(solve, **CHECKED),
        svm_problems,
        gradient=dual_gradient,
        upper=lambda problem: np.inf if problem[1] == "squared_hinge" else problem[2],
        equality=False,
        kkt_tol=CHECKED["tol"],
        gap_tol=GAP_TOL,
    )


@given(svm_problems)
def test_equals_the_reference_qp(problem):
    (X, Y), loss, C, fit_intercept = problem
    alpha, certificate = solve(problem, random_state=0)
    signs = to_signs(Y)
    for l in range(Y.shape[1]):
        Q, upper = dual_matrices(X, signs[:, l], C, loss, fit_intercept)
        reference = solve_box_qp_reference(Q, -np.ones(len(Q)), 0.0, upper)
        # With the squared hinge, D > 0 makes the dual strictly convex: alpha is unique.
        assert_matches_reference(
            alpha[:, l],
            -certificate.statistics["dual"][l],
            reference.x,
            reference.objective,
            rtol_objective=1e-6,
            atol_objective=1e-9,
            atol_alpha=1e-4 * max(1.0, C) if loss == "squared_hinge" else None,
        )


@given(svm_problems)
def test_the_dual_objective_never_decreases_across_epochs(problem):
    _, certificate = solve(problem, random_state=0, tol=1e-6, record_dual=True)
    for trace in certificate.statistics["dual_trace"]:
        steps = np.diff(np.concatenate([[0.0], trace]))  # alpha = 0 has dual objective 0
        assert np.all(steps >= -1e-12 * max(1.0, np.abs(trace).max())), steps.min()


@given(svm_problems)
def test_shrinking_on_and_off_give_the_same_solution(problem):
    (X, Y), loss, C, fit_intercept = problem
    results = [
        linear_svm_cd(
            X, to_signs(Y), C, loss=loss, fit_intercept=fit_intercept, shrinking=shrinking, random_state=0, **TIGHT
        )
        for shrinking in (True, False)
    ]
    # The primal is 1-strongly convex in (w, bias weight): w is unique even where alpha is not, and
    # each solve's is within sqrt(2 gap) of it -- also on drawn problems CD leaves at max_iter.
    first, second = (result.solution for result in results)
    radius = sum(strongly_convex_distance(result.certificate.gap) for result in results)
    np.testing.assert_allclose(first.coef, second.coef, atol=radius + 1e-9)
    np.testing.assert_allclose(first.intercept, second.intercept, atol=radius + 1e-9)
    assert results[1].certificate.statistics["n_shrunk"] == [0] * Y.shape[1]


@given(multilabel_problems(sparse=False), st.sampled_from(LOSSES), st.sampled_from([0.1, 1.0, 10.0]), st.booleans())
def test_dense_and_csr_give_the_same_solution(data, loss, C, fit_intercept):
    X, Y = data
    X = np.where(np.abs(X) > 2.0, X, 0.0)
    dense, sparse = (
        linear_svm_cd(rows, to_signs(Y), C, loss=loss, fit_intercept=fit_intercept, random_state=0, **TIGHT)
        for rows in (X, sp.csr_matrix(X))
    )
    # Each primal is within its gap of the one optimum; the rows are summed in another order, so
    # the paths (and where |PG| <= tol stops them) differ.
    radius = sum(strongly_convex_distance(fit.certificate.gap) for fit in (dense, sparse))
    np.testing.assert_allclose(sparse.solution.coef, dense.solution.coef, atol=radius + 1e-9)
    gaps = max(dense.certificate.gap, sparse.certificate.gap, 0.0)
    assert abs(sparse.certificate.primal - dense.certificate.primal) <= gaps + 1e-12 * dense.certificate.primal


def test_a_csr_matrix_with_duplicate_entries_is_summed():
    X = sp.csr_matrix((np.array([1.0, 2.0, -1.0]), np.array([0, 0, 1]), np.array([0, 2, 3])), shape=(2, 2))
    Y = np.array([[1.0], [-1.0]])
    result = linear_svm_cd(X, Y, 1.0, **TIGHT)
    reference = linear_svm_cd(X.toarray(), Y, 1.0, **TIGHT)
    np.testing.assert_allclose(result.solution.coef, reference.solution.coef, atol=1e-9)


def liblinear_hinge(X, signs, C, *, with_convergence=False):
    """Per label, LinearSVC(loss='hinge', dual=True, fit_intercept=False) at a tight tolerance, and its primal.

    Seeded: LIBLINEAR visits the coordinates in a random order, and whether it meets tol within
    max_iter depends on that order (unseeded, on the global numpy state, so on test order).
    ``with_convergence`` also returns which labels it finished.
    """
    svm = pytest.importorskip("sklearn.svm")
    primal, converged = [], []
    for l in range(signs.shape[1]):
        reference = svm.LinearSVC(
            loss="hinge", dual=True, fit_intercept=False, C=C, tol=1e-8, max_iter=100000, random_state=0
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # LIBLINEAR's max_iter on degenerate drawn data: judged below
            reference.fit(X, signs[:, l])
        primal.append(linear_svm_primal(X, signs[:, l], C, reference.coef_[0], loss="hinge")[0])
        converged.append(reference.n_iter_ < reference.max_iter)
    return (np.array(primal), np.array(converged)) if with_convergence else np.array(primal)


@pytest.mark.parametrize("C", [0.01, 1.0, 10.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_primal_equals_liblinear_hinge(C, sparse):
    # Property 8: the primal objective of LinearSVC(loss='hinge', dual=True, fit_intercept=False).
    data = make_correlated_multilabel(n_samples=120, n_features=8, n_labels=4, random_state=7)
    X = sp.csr_matrix(np.where(np.abs(data.X) > 0.5, data.X, 0.0)) if sparse else data.X
    signs = to_signs(data.Y)
    result = linear_svm_cd(X, signs, C, loss="hinge", random_state=0, **TIGHT)
    ours = np.array(result.certificate.statistics["primal"])
    reference, finished = liblinear_hinge(X, signs, C, with_convergence=True)
    assert finished.any()
    # Where LIBLINEAR met its tolerance its primal is the optimum's; where it ran out of
    # iterations its primal only bounds the optimum from above, and the certified CD is no worse.
    np.testing.assert_allclose(ours[finished], reference[finished], rtol=1e-4)
    assert np.all(ours[~finished] <= reference[~finished] * (1.0 + 1e-4))


@given(multilabel_problems(sparse=None), st.sampled_from([0.1, 1.0]))
def test_primal_never_worse_than_liblinear_hinge(data, C):
    # On drawn (often degenerate) problems LIBLINEAR may stop early; the certified CD solution is never worse,
    # and LIBLINEAR's primal respects CD's dual bound (weak duality).
    X, Y = data
    signs = to_signs(Y)
    result = linear_svm_cd(X, signs, C, loss="hinge", random_state=0, **TIGHT)
    reference = liblinear_hinge(X, signs, C)
    ours, dual = np.array(result.certificate.statistics["primal"]), np.array(result.certificate.statistics["dual"])
    assert np.all(ours <= reference * (1.0 + 1e-4) + 1e-12)
    assert np.all(reference >= dual - 1e-9 * np.maximum(1.0, np.abs(dual)))


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_equals_liblinear_with_the_intercept_feature(loss, C):
    svm = pytest.importorskip("sklearn.svm")
    data = make_correlated_multilabel(n_samples=80, n_features=6, n_labels=3, random_state=1)
    X, signs = data.X, to_signs(data.Y)
    result = linear_svm_cd(X, signs, C, loss=loss, fit_intercept=True, intercept_scaling=2.0, random_state=0, **TIGHT)
    for l in range(signs.shape[1]):
        reference = svm.LinearSVC(
            loss=loss, dual=True, C=C, fit_intercept=True, intercept_scaling=2.0, tol=1e-10, max_iter=1000000
        ).fit(X, signs[:, l])
        # intercept = scaling * v, with v the regularised weight of the constant feature.
        coef, intercept = reference.coef_[0], reference.intercept_[0]
        expected, _ = linear_svm_primal(X, signs[:, l], C, coef, intercept, loss=loss, bias_weight=intercept / 2.0)
        np.testing.assert_allclose(result.certificate.statistics["primal"][l], expected, rtol=1e-6)
        np.testing.assert_allclose(
            result.solution.intercept[l], reference.intercept_[0], atol=1e-4 * max(1.0, abs(expected))
        )


def test_same_random_state_same_path_and_certificate_fields():
    data = make_correlated_multilabel(n_samples=100, n_features=8, n_labels=4, random_state=2)
    X, signs = sp.csr_matrix(np.where(np.abs(data.X) > 0.5, data.X, 0.0)), to_signs(data.Y)
    # Exact: the same code on identical inputs and seed in one process.
    first, second = (linear_svm_cd(X, signs, 1.0, tol=1e-4, random_state=7) for _ in range(2))
    np.testing.assert_array_equal(first.solution.dual, second.solution.dual)
    assert first.certificate.statistics["n_epochs"] == second.certificate.statistics["n_epochs"]
    certificate = first.certificate
    assert certificate.solver == "linear_svm_cd" and certificate.converged
    assert certificate.n_iter == max(certificate.statistics["n_epochs"])
    assert certificate.primal == pytest.approx(sum(certificate.statistics["primal"]))
    assert certificate.dual == pytest.approx(sum(certificate.statistics["dual"]))
    assert all(len(values) == 4 for values in certificate.statistics.values())
    assert certificate.kkt_violation <= 1e-4
    assert_duality_gap(certificate, rtol=1e-4, atol=1e-9)
    solution = first.solution
    assert solution.coef.shape == (8, 4) and solution.dual.shape == (100, 4) and solution.intercept.shape == (4,)
    np.testing.assert_array_equal(solution.dual_coef, solution.dual * signs)


@pytest.mark.parametrize("loss", LOSSES)
def test_per_label_costs_equal_one_solve_per_label(loss):
    data = make_correlated_multilabel(n_samples=60, n_features=5, n_labels=3, random_state=8)
    X, signs, costs = data.X, to_signs(data.Y), np.array([0.1, 1.0, 10.0])
    together = linear_svm_cd(X, signs, costs, loss=loss, fit_intercept=True, random_state=0, **TIGHT)
    for l, cost in enumerate(costs):
        alone = linear_svm_cd(X, signs[:, [l]], cost, loss=loss, fit_intercept=True, random_state=0, **TIGHT)
        # The primal is strongly convex: w is unique, and the per-label solves are the same problem.
        np.testing.assert_allclose(together.solution.coef[:, l], alone.solution.coef[:, 0], atol=1e-6 * max(1.0, cost))
        np.testing.assert_allclose(together.certificate.statistics["primal"][l], alone.certificate.primal, rtol=1e-8)
        assert together.solution.dual[:, l].max() <= (np.inf if loss == "squared_hinge" else cost)


# -- the solver component ---------------------------------------------------------------


def test_cd_solver_in_a_composed_estimator_matches_lbfgs():
    data = make_correlated_multilabel(n_samples=150, n_features=10, n_labels=4, random_state=3)
    cd = ComposedEstimator(solver=CDSolver(tol=1e-8)).fit(data.X, data.Y)
    lbfgs = ComposedEstimator(solver="lbfgs", tol=1e-8).fit(data.X, data.Y)
    np.testing.assert_allclose(cd.coef_, lbfgs.coef_, atol=1e-5)
    np.testing.assert_allclose(cd.intercept_, lbfgs.intercept_, atol=1e-5)
    assert cd.certificate_.solver == "CDSolver" and cd.certificate_.gap < 1e-8
    with pytest.warns(ConvergenceWarning, match="max_iter=5"):
        certificate = ComposedEstimator(solver="cd", tol=1e-3, max_iter=5).fit(data.X, data.Y).certificate_
    assert certificate.n_iter == 5 and not certificate.converged


def test_cd_solver_warm_start_from_its_own_solution():
    from multilabel_core.base import Problem
    from multilabel_core.kernels import LinearKernel
    from multilabel_core.losses import Hinge
    from multilabel_core.regularizers import Frobenius
    from multilabel_core.relations import Independent

    data = make_correlated_multilabel(n_samples=80, n_features=5, n_labels=3, random_state=4)
    problem = Problem(data.X, to_signs(data.Y), Hinge(), Frobenius(), Independent(), LinearKernel(), C=1.0)
    solver = CDSolver(tol=1e-10, max_iter=1000000)
    solution = solver.solve(problem).solution
    certificate = CDSolver(tol=1e-6).solve(problem, warm_start=solution).certificate
    assert certificate.n_iter <= 1 and certificate.converged
    with pytest.raises(ValueError, match="dual coefficients"):
        solver.solve(problem, warm_start=type(solution)(coef=solution.coef, intercept=solution.intercept))


def test_cd_solver_warm_starts_from_a_solution_rescaled_to_another_cost():
    # ComposedEstimator's grid warm start scales dual_coef by C_new / C_old: alpha at the bound C_old
    # then lands on C_new only up to round-off (0.3 * (0.7 / 0.3) > 0.7), which must not refuse the start.
    from multilabel_core.base import Problem
    from multilabel_core.kernels import LinearKernel
    from multilabel_core.losses import Hinge
    from multilabel_core.regularizers import Frobenius
    from multilabel_core.relations import Independent

    data = make_correlated_multilabel(n_samples=100, n_features=6, n_labels=3, random_state=0)
    problem = Problem(data.X, to_signs(data.Y), Hinge(), Frobenius(), Independent(), LinearKernel(), C=0.3)
    solution = CDSolver(tol=1e-8).solve(problem).solution
    ratio = 0.7 / 0.3
    assert np.any(solution.dual * ratio > 0.7)  # the round-off this test is about
    rescaled = type(solution)(coef=None, intercept=solution.intercept, dual_coef=ratio * solution.dual_coef)
    fit = CDSolver(tol=1e-8).solve(attrs.evolve(problem, C=0.7), warm_start=rescaled)
    assert fit.converged and fit.solution.dual.max() <= 0.7
    reference = CDSolver(tol=1e-8).solve(attrs.evolve(problem, C=0.7))
    np.testing.assert_allclose(fit.solution.coef, reference.solution.coef, atol=1e-6)
    with pytest.raises(ValueError, match="leaves label .* dual box"):
        CDSolver().solve(problem, warm_start=rescaled)  # alpha up to 0.7 is no point of C = 0.3


@pytest.mark.parametrize(
    "parts, message",
    [
        ({"loss": "logistic"}, "requires loss.dual_box, which Logistic does not provide"),
        ({"regularizer": "nuclear_norm"}, "requires regularizer.label_gram, which NuclearNorm does not provide"),
        ({"relation": "learned_covariance"}, "CDSolver solves for a fixed label relation, but LearnedCovariance is learned"),
    ],
)
def test_cd_solver_refuses_problems_it_cannot_solve(parts, message):
    data = make_correlated_multilabel(n_samples=40, n_features=4, n_labels=2, random_state=5)
    with pytest.raises(CapabilityError, match=message):
        ComposedEstimator(solver="cd", **parts).fit(data.X, data.Y)


def test_cd_solver_settings_are_validated():
    for bad in ({"tol": 0.0}, {"max_iter": 0}, {"shrinking": "yes"}, {"intercept_scaling": -1.0}, {"random_state": -1}):
        with pytest.raises((ValueError, TypeError)):
            CDSolver(**bad)


def test_kkt_check_catches_a_perturbed_solution():
    # The KKT check used above is not vacuous: moving one free variable breaks it.
    data = make_correlated_multilabel(n_samples=30, n_features=4, n_labels=2, random_state=6)
    problem = ((data.X, data.Y), "hinge", 1.0, False)
    alpha, _ = solve(problem, random_state=0)
    free = np.argwhere((alpha > 1e-6) & (alpha < 1.0 - 1e-6))[0]
    alpha[tuple(free)] += 1e-3
    with pytest.raises(AssertionError):
        assert_kkt(alpha, dual_gradient(problem, alpha), None, 1.0, tol=1e-7, equality=False)
