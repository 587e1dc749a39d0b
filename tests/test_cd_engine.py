"""The coordinate-descent engine itself: stopping, shrinking, reset, seeding, threads, max_iter, Ctrl-C."""

import _thread
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp

from multilabel_core.validation import to_signs
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.solvers import ConvergenceWarning, _cd, linear_svm_cd


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=400, n_features=30, n_labels=3, random_state=0)
    X = sp.csr_matrix(np.where(np.abs(dataset.X) > 0.8, dataset.X, 0.0))
    return X, to_signs(dataset.Y)


def label_problem(X, y, C=1.0, squared=False, alpha=None):
    """One label's LinearSVMDual on CSR rows (hinge or squared hinge at cost C), with its alpha and w buffers."""
    rows = _cd.SparseRows(X.data, X.indices, X.indptr, X.shape[1], 0.0)
    alpha = np.zeros(X.shape[0]) if alpha is None else alpha
    upper, diagonal = (np.inf, 1.0 / (2.0 * C)) if squared else (C, 0.0)
    return _cd.LinearSVMDual(rows, np.ascontiguousarray(y), alpha, np.zeros(X.shape[1]), upper, diagonal), alpha


def test_report_of_a_converged_solve(data):
    X, Y = data
    problem, alpha = label_problem(X, Y[:, 0])
    report = _cd.solve_dual(problem, tol=1e-6, max_iter=100000, shrinking=True, seed=3)
    assert report["converged"] and report["kkt_violation"] <= 1e-6
    assert 0 < report["n_epochs"] < 100000 and report["n_updates"] > 0
    # Shrinking removed coordinates stuck at a bound, and they were restored before stopping.
    assert report["n_shrunk"] > 0 and report["n_resets"] >= 1 and report["min_active"] < X.shape[0]
    assert report["spread"] <= 1e-6 and report["dual_trace"] is None
    assert np.all((alpha >= 0.0) & (alpha <= 1.0))


def test_the_returned_point_meets_the_rule_not_only_the_last_pass(data):
    # Every |PG_i| at the returned alpha is within tol: kkt_violation is measured after the solve.
    X, Y = data
    for seed in range(5):
        problem, _ = label_problem(X, Y[:, 1], C=10.0, squared=True)
        report = _cd.solve_dual(problem, tol=1e-3, max_iter=100000, shrinking=True, seed=seed)
        assert report["converged"] and report["kkt_violation"] <= 1e-3


def test_a_start_at_the_optimum_takes_no_pass(data):
    X, Y = data
    problem, alpha = label_problem(X, Y[:, 2])
    _cd.solve_dual(problem, tol=1e-10, max_iter=1000000, shrinking=True, seed=0)
    warm, _ = label_problem(X, Y[:, 2], alpha=alpha.copy())
    report = _cd.solve_dual(warm, tol=1e-6, max_iter=10, shrinking=True, seed=0, record_dual=True)
    assert report["converged"] and report["n_epochs"] == 0 and report["dual_trace"] == []


def test_the_seed_fixes_the_path_and_other_seeds_reach_the_same_optimum(data):
    X, Y = data
    runs = {}
    for seed in (1, 1, 2):
        problem, alpha = label_problem(X, Y[:, 0])
        report = _cd.solve_dual(problem, tol=1e-8, max_iter=100000, shrinking=True, seed=seed)
        runs.setdefault(seed, []).append((alpha, report))
    (first, report_1), (again, report_2) = runs[1]
    # Exact: the same code on identical inputs and seed in one process.
    np.testing.assert_array_equal(first, again)
    assert report_1["n_updates"] == report_2["n_updates"]
    _, report_other = runs[2][0]
    assert report_other["n_updates"] != report_1["n_updates"]
    assert report_other["objective"] == pytest.approx(report_1["objective"], rel=1e-9)


def test_solves_in_threads_equal_serial_solves(data):
    # The engine keeps no global state and releases the GIL: concurrent solves are independent.
    # Exact: each thread runs the serial code on identical inputs in this process; its BLAS calls
    # (ddot, daxpy of length d) split their work by the process's BLAS thread count, not the caller's.
    X, Y = data

    def fit(seed):
        fit = linear_svm_cd(X, Y, 1.0, loss="squared_hinge", tol=1e-4, max_iter=100000, random_state=seed)
        return fit.solution.dual

    serial = [fit(seed) for seed in range(4)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        threaded = list(pool.map(fit, range(4)))
    for a, b in zip(serial, threaded):
        np.testing.assert_array_equal(a, b)


def test_max_iter_stops_with_a_convergence_warning(data):
    X, Y = data
    with pytest.warns(ConvergenceWarning, match=r"3 of 3 labels reached max_iter=2 epochs"):
        result = linear_svm_cd(X, Y, 1.0, tol=1e-12, max_iter=2, random_state=0)
    certificate = result.certificate
    assert not certificate.converged and certificate.n_iter == 2
    assert certificate.statistics["converged"] == [False] * 3
    assert certificate.kkt_violation > 1e-12 and certificate.gap >= 0.0


def test_ctrl_c_interrupts_a_long_solve(data, python_sigint_handler):
    X, Y = data
    problem, _ = label_problem(X, Y[:, 0], C=1e6, squared=True)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            # tol = 0 is never met: without the signal check this would run all its epochs (minutes).
            _cd.solve_dual(problem, tol=0.0, max_iter=10**7, shrinking=False, seed=0)
    finally:
        timer.cancel()


def test_the_bases_are_not_solvable():
    with pytest.raises(TypeError, match="subclass"):
        _cd.DualCoordinates()
    with pytest.raises(TypeError, match="DenseRows and SparseRows"):
        _cd.Rows()


@pytest.mark.parametrize("squared", [False, True])
def test_binary_rows_take_the_unit_path_with_the_same_result_bit_for_bit(data, squared):
    # Rows whose stored values are all 1 (word-presence features) skip the values in dot and axpy.
    # The same matrix with one explicit 0 stored at the end of a row takes the general path; the 0
    # lands in a partial sum as +0.0, so both solves must agree exactly, epoch for epoch.
    X, Y = data
    binary = X.copy()
    binary.data[:] = 1.0
    row = next(i for i in range(binary.shape[0]) if binary.indices[binary.indptr[i + 1] - 1] < binary.shape[1] - 1)
    dense = binary.toarray()
    padded = sp.csr_matrix(dense)
    indices = np.insert(padded.indices, padded.indptr[row + 1], binary.shape[1] - 1)
    values = np.insert(padded.data, padded.indptr[row + 1], 0.0)
    indptr = padded.indptr.copy()
    indptr[row + 1 :] += 1
    padded = sp.csr_matrix((values, indices, indptr), shape=binary.shape)
    assert padded.nnz == binary.nnz + 1 and np.array_equal(padded.toarray(), dense)
    reports = []
    for matrix, unit in ((binary, True), (padded, False)):
        assert _cd.SparseRows(matrix.data, matrix.indices, matrix.indptr, matrix.shape[1], 0.0).unit == unit
        problem, alpha = label_problem(matrix, Y[:, 0], C=10.0, squared=squared)
        report = _cd.solve_dual(problem, tol=1e-4, max_iter=100000, shrinking=True, seed=1)
        reports.append((alpha.copy(), report["n_epochs"], report["objective"]))
    (alpha_unit, epochs_unit, objective_unit), (alpha_general, epochs_general, objective_general) = reports
    assert np.array_equal(alpha_unit, alpha_general)
    assert epochs_unit == epochs_general and objective_unit == objective_general
