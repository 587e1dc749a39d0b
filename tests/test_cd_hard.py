"""Dual CD where the epochs alone are slow: more free coordinates than rank(X), large C (face steps).

docs/solvers/cd.md, "Hard problems": with the squared hinge the dual is strongly convex only
through D = 1/(2C) in the directions that leave w unchanged, so an epoch contracts the error
there by about exp(-D / ||x_i||^2); the face steps solve the face in the weight dimension.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core.certificate import GAP_RTOL
from multilabel_core.plugins import make_method
from multilabel_core.solvers import _cd, box_kernel_cd, linear_svm_cd
from multilabel_core.testing.checks import assert_matches_reference
from multilabel_core.testing.reference import solve_box_qp_reference, strongly_convex_distance


@st.composite
def hard_problems(draw):
    """(X, signs, C, fit_intercept): n well above d, standardised columns, a few heavy rows, large C.

    The labels follow a noisy linear rule with a drawn share of positives (few to most), so that
    many rows are inside the margin at the optimum: the free face outnumbers the rank of X.
    """
    n = draw(st.integers(20, 80))
    d = draw(st.integers(1, 6))
    L = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    random = np.random.default_rng(seed)
    X = random.standard_normal((n, d))
    heavy = random.random(n) < 0.05
    X[heavy] *= draw(st.sampled_from([1.0, 5.0, 20.0]))
    X = (X - X.mean(axis=0)) / np.maximum(X.std(axis=0), 1e-12)
    scores = X @ random.standard_normal((d, L)) + draw(st.floats(0.0, 2.0)) * random.standard_normal((n, L))
    shares = random.uniform(0.05, 0.95, size=L)
    thresholds = np.array([np.quantile(scores[:, l], 1.0 - shares[l]) for l in range(L)])
    signs = np.where(scores > thresholds, 1.0, -1.0)
    signs[0], signs[1] = 1.0, -1.0  # both classes in every label
    sparse = draw(st.booleans())
    return (sp.csr_matrix(X) if sparse else X), signs, draw(st.sampled_from([1.0, 10.0, 100.0])), draw(st.booleans())


def fit(problem, **options):
    X, signs, C, fit_intercept = problem
    settings = {"tol": 1e-3, "max_iter": 10000, "random_state": 0} | options
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an unconverged fit is checked through its certificate
        return linear_svm_cd(X, signs, C, loss="squared_hinge", fit_intercept=fit_intercept, **settings)


def label_gaps(certificate):
    primal, dual = np.array(certificate.statistics["primal"]), np.array(certificate.statistics["dual"])
    return (primal - dual) / np.maximum(1.0, np.abs(primal))


@given(hard_problems(), st.booleans())
def test_the_certificate_is_honest_label_by_label(problem, face_steps):
    result = fit(problem, face_steps=face_steps)
    certificate = result.certificate
    converged = np.array(certificate.statistics["converged"]) & np.array(certificate.statistics["within_gap_rtol"])
    gaps = label_gaps(certificate)
    # Weak duality per label: the primal at w(alpha) is never below the dual at alpha.
    assert np.all(gaps >= -1e-9), gaps.min()
    assert np.all(gaps[converged] <= GAP_RTOL), gaps[converged].max()
    assert certificate.converged == bool(converged.all())
    if certificate.converged:
        assert certificate.kkt_violation <= 1e-3
    if not face_steps:
        assert certificate.statistics["n_face_steps"] == [0] * problem[1].shape[1]


@given(hard_problems())
def test_face_steps_reach_the_reference_qp(problem):
    X, signs, C, fit_intercept = problem
    result = fit(problem, tol=1e-8, max_iter=100000)
    if not result.certificate.converged:
        return  # reported as such (the test above); no optimum to compare
    Xa = X.toarray() if sp.issparse(X) else X
    Xa = np.hstack([Xa, np.ones((len(Xa), 1))]) if fit_intercept else Xa
    for l in range(signs.shape[1]):
        y = signs[:, l]
        Q = np.outer(y, y) * (Xa @ Xa.T) + np.eye(len(y)) / (2.0 * C)
        reference = solve_box_qp_reference(Q, -np.ones(len(y)), 0.0, np.inf)
        # D > 0: the dual is strictly convex and alpha unique.
        assert_matches_reference(
            result.solution.dual[:, l],
            -result.certificate.statistics["dual"][l],
            reference.x,
            reference.objective,
            rtol_objective=1e-6,
            atol_objective=1e-9,
            atol_alpha=1e-4 * C,
        )


@given(hard_problems())
def test_face_steps_on_and_off_give_the_same_model(problem):
    results = [fit(problem, tol=1e-6, max_iter=100000, face_steps=face_steps) for face_steps in (True, False)]
    # The primal is 1-strongly convex in (w, bias weight): each solve's w is within sqrt(2 gap) of
    # the minimiser, converged or not.
    radius = sum(strongly_convex_distance(result.certificate.gap) for result in results)
    first, second = (result.solution for result in results)
    np.testing.assert_allclose(first.coef, second.coef, atol=radius + 1e-9)
    np.testing.assert_allclose(first.intercept, second.intercept, atol=radius + 1e-9)


@given(hard_problems())
def test_face_steps_never_decrease_the_dual(problem):
    certificate = fit(problem, tol=1e-6, record_dual=True).certificate
    for trace in certificate.statistics["dual_trace"]:
        steps = np.diff(np.concatenate([[0.0], trace]))  # alpha = 0 has dual objective 0
        assert np.all(steps >= -1e-12 * max(1.0, np.abs(trace).max())), steps.min()


def standardised_problem(n=300, d=8, seed=0):
    random = np.random.default_rng(seed)
    X = random.standard_normal((n, d))
    signs = np.where(X @ random.standard_normal(d) + random.standard_normal(n) > 0.5, 1.0, -1.0)
    return X, signs[:, None]


def test_face_steps_are_taken_and_save_epochs():
    X, signs = standardised_problem()
    on, off = (fit((X, signs, 10.0, True), face_steps=face_steps) for face_steps in (True, False))
    assert on.certificate.converged
    assert on.certificate.statistics["n_face_steps"][0] > 0
    assert on.certificate.statistics["n_epochs"][0] < off.certificate.statistics["n_epochs"][0]


def test_no_face_steps_for_the_hinge_or_a_kernel():
    # The hinge's dual has D = 0: its face is not strictly convex, and no step is offered; the
    # kernel variant offers none either.
    X, signs = standardised_problem()
    result = linear_svm_cd(X, signs, 1.0, loss="hinge", fit_intercept=True, tol=1e-3, max_iter=100000, random_state=0)
    assert result.certificate.converged and result.certificate.statistics["n_face_steps"] == [0]
    kernel = box_kernel_cd(X @ X.T, signs, 10.0, loss="squared_hinge", tol=1e-3, max_iter=100000, random_state=0)
    assert kernel.certificate.converged and kernel.certificate.statistics["n_face_steps"] == [0]


def test_face_steps_off_in_the_engine_is_the_epochs_alone():
    X, signs = standardised_problem(n=100, d=3)
    rows = _cd.DenseRows(X, 1.0)
    reports = []
    for face_steps in (False, True):
        problem = _cd.LinearSVMDual(rows, np.ascontiguousarray(signs[:, 0]), np.zeros(100), np.zeros(4), np.inf, 0.05)
        reports.append(_cd.solve_dual(problem, tol=1e-6, max_iter=100000, shrinking=True, seed=0, face_steps=face_steps))
    assert reports[0]["n_face_steps"] == 0 and reports[1]["n_face_steps"] > 0
    assert all(report["converged"] for report in reports)
    assert reports[1]["objective"] == pytest.approx(reports[0]["objective"], rel=1e-9)


def test_face_steps_refuse_a_non_boolean():
    X, signs = standardised_problem(n=20, d=2)
    with pytest.raises(ValueError, match="face_steps"):
        linear_svm_cd(X, signs, 1.0, face_steps=1)


def test_binary_relevance_converges_on_cal500_at_c_1(datasets_dir):
    # The problem: 400 rows of cal500 standardised on themselves, 174 labels that vary on
    # them; before the face steps 22 labels stopped at max_iter = 10000 epochs.
    from multilabel_core.datasets import load_dataset
    from multilabel_core.experiments.preprocessing import Standardizer

    dataset = load_dataset("cal500", str(datasets_dir))
    X = dataset.X.toarray() if sp.issparse(dataset.X) else np.asarray(dataset.X)
    Y = dataset.Y.toarray() if sp.issparse(dataset.Y) else np.asarray(dataset.Y)
    X, Y = np.asarray(X[:400], dtype=np.float64), np.asarray(Y[:400])
    Y = Y[:, Y.min(axis=0) != Y.max(axis=0)]
    X = Standardizer().fit(X).transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ConvergenceWarning
        model = make_method("br", C=1.0).fit(X, Y)
    certificate = model.certificate_
    assert Y.shape[1] == 174
    assert certificate.converged
    assert all(certificate.statistics["converged"])
    assert np.all(label_gaps(certificate) <= GAP_RTOL)
    assert certificate.kkt_violation <= 1e-3


def sparse_wide_problem(n=300, d=400, seed=0):
    """Sparse rows with more features than rows (enron's shape, small): the face step takes the CG route."""
    random = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.03, format="csr", random_state=random, data_rvs=random.standard_normal)
    X.sort_indices()
    signs = np.where(X @ random.standard_normal(d) + 0.5 * random.standard_normal(n) > 0.2, 1.0, -1.0)
    signs[0], signs[1] = 1.0, -1.0
    return X, signs


def solve_face(rows, signs, C, face_solver, face_steps=True, tol=1e-8):
    """The LinearSVMDual (its counters), the engine's report and alpha."""
    alpha = np.zeros(rows.n_rows)
    problem = _cd.LinearSVMDual(rows, signs, alpha, np.zeros(rows.dimension), np.inf, 1.0 / (2.0 * C),
                                face_solver=face_solver)
    report = _cd.solve_dual(problem, tol=tol, max_iter=100000, shrinking=True, seed=3, face_steps=face_steps)
    return problem, report, alpha


def test_cg_face_steps_reach_the_reference_qp():
    # The matrix-free route (conjugate gradients on the face's system, docs/solvers/cd.md, "Hard
    # problems") reaches the optimum the Cholesky route and the epochs alone reach, on CSR and
    # dense rows.
    X, signs = sparse_wide_problem(n=120, d=200)
    C = 100.0
    Xa = np.hstack([X.toarray(), np.ones((X.shape[0], 1))])
    Q = np.outer(signs, signs) * (Xa @ Xa.T) + np.eye(len(signs)) / (2.0 * C)
    reference = solve_box_qp_reference(Q, -np.ones(len(signs)), 0.0, np.inf)
    objectives = []
    for rows in (_cd.SparseRows(X.data, X.indices, X.indptr, X.shape[1], 1.0),
                 _cd.DenseRows(np.ascontiguousarray(X.toarray()), 1.0)):
        for face_solver, face_steps in (("cg", True), ("cholesky", True), ("auto", False)):
            problem, report, alpha = solve_face(rows, signs, C, face_solver, face_steps)
            assert report["converged"] and report["kkt_violation"] <= 1e-8
            if face_solver == "cg":
                assert report["n_face_steps"] > 0 and problem.n_cg_solves > 0 and problem.n_cholesky_solves == 0
            assert_matches_reference(alpha, report["objective"], reference.x, reference.objective,
                                     rtol_objective=1e-9, atol_objective=1e-9, atol_alpha=1e-4)
            objectives.append(report["objective"])
    assert objectives == pytest.approx([objectives[0]] * len(objectives), rel=1e-10)


def test_cg_is_the_route_by_price_on_wide_sparse_rows_and_deterministic():
    X, signs = sparse_wide_problem(seed=1)
    rows = _cd.SparseRows(X.data, X.indices, X.indptr, X.shape[1], 1.0)
    problem, report, alpha = solve_face(rows, signs, 100.0, "auto", tol=1e-3)
    # 401 weights and some 12 stored entries a row: the factor costs far more than 100 CG iterations.
    assert report["converged"] and problem.n_cg_solves > 0 and problem.n_cholesky_solves == 0
    _, second, alpha_again = solve_face(rows, signs, 100.0, "auto", tol=1e-3)
    assert np.array_equal(alpha, alpha_again)
    assert second["n_face_steps"] == report["n_face_steps"] and second["n_epochs"] == report["n_epochs"]
    # Through the public solver: bitwise the same model twice, and the same optimum as the epochs alone.
    results = [fit((X, signs[:, None], 100.0, True), tol=1e-6) for _ in range(2)] + [
        fit((X, signs[:, None], 100.0, True), tol=1e-6, face_steps=False)]
    assert results[0].certificate.statistics["n_face_steps"][0] > 0
    assert np.array_equal(results[0].solution.coef, results[1].solution.coef)
    assert np.array_equal(results[0].solution.intercept, results[1].solution.intercept)
    radius = sum(strongly_convex_distance(result.certificate.gap) for result in (results[0], results[2]))
    np.testing.assert_allclose(results[0].solution.coef, results[2].solution.coef, atol=radius + 1e-9)


def test_cholesky_stays_the_route_on_small_dense_rows():
    # cal500's shape (standardised, few weights): the factor is cheaper than the CG iterations' worst case.
    X, signs = standardised_problem()
    problem, report, _ = solve_face(_cd.DenseRows(X, 1.0), np.ascontiguousarray(signs[:, 0]), 10.0, "auto", tol=1e-3)
    assert report["n_face_steps"] > 0 and problem.n_cholesky_solves > 0 and problem.n_cg_solves == 0


def test_face_solver_refuses_an_unknown_route():
    X, signs = standardised_problem(n=20, d=2)
    with pytest.raises(ValueError, match="face_solver"):
        _cd.LinearSVMDual(_cd.DenseRows(X, 1.0), np.ascontiguousarray(signs[:, 0]), np.zeros(20), np.zeros(3),
                          np.inf, 0.05, face_solver="lu")
