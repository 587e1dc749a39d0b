"""Label threads inside one fit (multilabel_core.parallel): how many, and results equal to one thread's.

Every threaded path is checked against ``n_jobs=1`` with exact equality: each label's solve is
the same computation on whichever thread runs it (its seed drawn before any label runs, its
data its own, nothing summed across threads), so the bits agree, not just the values.
"""

from __future__ import annotations

import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core import make_method
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.kernels import RBFKernel
from multilabel_core.parallel import (
    WithinBudget,
    available_cores,
    cancelled,
    effective_threads,
    map_threads,
    raise_if_cancelled,
    thread_budget,
    worker_threads,
)
from multilabel_core.solvers import KernelSource, box_kernel_cd, linear_svm_cd, smo_solve
from multilabel_core.solvers.smo import SMOSolver

# -- how many threads ---------------------------------------------------------------


def test_positive_n_jobs_is_itself_capped_by_the_tasks():
    assert effective_threads(3) == 3
    assert effective_threads(3, n_tasks=2) == 2
    assert effective_threads(5, n_tasks=0) == 1


def test_negative_n_jobs_counts_back_from_the_cores():
    cores = available_cores()
    assert effective_threads(-1) == cores
    assert effective_threads(-2) == max(1, cores - 1)
    assert effective_threads(-(cores + 5)) == 1


def test_none_is_the_budget_of_the_enclosing_task(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert effective_threads(None) == available_cores()
    with thread_budget(1):
        assert effective_threads(None) == 1
        assert effective_threads(4) == 4  # an explicit count is the user's
        with thread_budget(2):
            assert effective_threads(None) == min(2, available_cores())
        assert effective_threads(None) == 1
    assert effective_threads(None) == available_cores()


def test_none_honours_omp_num_threads_outside_a_budget(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert effective_threads(None) == 1
    with thread_budget(available_cores()):
        assert effective_threads(None) == available_cores()  # the runner's budget is the statement that counts
    monkeypatch.setenv("OMP_NUM_THREADS", "not a number")
    assert effective_threads(None) == available_cores()


@pytest.mark.parametrize("bad", [0, 1.5, "2", True])
def test_bad_n_jobs_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="n_jobs must be a nonzero int"):
        effective_threads(bad)


def test_bad_budget_is_refused():
    with pytest.raises(ValueError, match="thread budget"):
        with thread_budget(0):
            pass


def test_worker_threads_keep_workers_times_threads_within_the_cores():
    assert worker_threads(2, cores=8) == 4
    assert worker_threads(16, cores=8) == 1
    assert all(n * worker_threads(n, cores=c) <= max(n, c) for n in range(1, 12) for c in range(1, 12))


def test_within_budget_sets_the_budget_for_the_task():
    assert WithinBudget(lambda: effective_threads(None), 1)() == 1


# -- the map ------------------------------------------------------------------------


def test_map_threads_keeps_the_order_of_the_items():
    def slow_square(i):
        time.sleep(0.001 * (5 - i % 5))
        return i * i

    assert map_threads(slow_square, range(20), 4) == [i * i for i in range(20)]
    assert map_threads(slow_square, [], 4) == []


def test_map_threads_reraises_the_error_and_cancels_the_others():
    seen_cancelled, running = threading.Event(), threading.Event()

    def task(i):
        if i == 0:
            running.wait(5.0)  # fail only once the other label is running
            raise ValueError("label 0 is broken")
        running.set()
        deadline = time.perf_counter() + 5.0
        while time.perf_counter() < deadline:
            if cancelled():
                seen_cancelled.set()
                return i
            time.sleep(0.001)
        return i

    start = time.perf_counter()
    with pytest.raises(ValueError, match="label 0 is broken"):
        map_threads(task, range(2), 2)
    assert seen_cancelled.is_set()
    assert time.perf_counter() - start < 4.0
    assert not cancelled()  # outside a task


def test_a_failed_map_drops_its_queued_tasks_and_leaves_the_pool_usable():
    started = []

    def task(i):
        started.append(i)
        if i == 0:
            raise ValueError("label 0 is broken")
        time.sleep(0.05)
        return i

    with pytest.raises(ValueError, match="label 0 is broken"):
        map_threads(task, range(40), 2)
    # At most the tasks already taken by the two threads ran besides label 0; the queued ones never started.
    assert len(started) < 40
    # The pool is kept for the process: the next map runs on it.
    assert map_threads(lambda i: i + 1, range(10), 2) == list(range(1, 11))


_INTERRUPTED_MAPS = """
import signal, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from multilabel_core.parallel import map_threads

def work(i):
    start = time.perf_counter()
    while time.perf_counter() - start < 0.002 * (1 + i % 3):
        time.sleep(0.0005)
    return i

# The first map imports lazily (threadpoolctl, scipy.linalg): a SIGINT inside an import can break
# Python's own import locks, which is not what this test is about.
map_threads(work, range(6), 2)
print("ready", flush=True)
stopped = 0
while True:
    try:
        while True:
            map_threads(work, range(6), 2)
    except KeyboardInterrupt:
        stopped += 1
        print(stopped, flush=True)
"""


def test_ctrl_c_at_any_moment_of_a_map_never_hangs_it():
    """SIGINT at random moments into maps run one after another: each must end the map.

    A Ctrl-C that lands inside the waiting at the wrong instant once left a lock held (waiting
    through concurrent.futures.wait: a hang after 270 interrupts) or a report uncounted (after
    45-80); 600 interrupts catch either with high probability, and none may hang.
    """
    child = subprocess.Popen([sys.executable, "-c", _INTERRUPTED_MAPS], stdout=subprocess.PIPE, text=True,
                             cwd=tempfile.gettempdir())
    try:
        assert child.stdout.readline().strip() == "ready"
        random = np.random.default_rng(0)
        for sent in range(1, 601):
            time.sleep(random.uniform(0.005, 0.03))
            child.send_signal(signal.SIGINT)
            ready, _, _ = select.select([child.stdout], [], [], 30.0)
            assert ready, f"the map hung after interrupt {sent}"
            assert child.stdout.readline().strip() == str(sent)
    finally:
        child.kill()
        child.wait()
        child.stdout.close()


def test_raise_if_cancelled_stops_a_task_of_a_cancelled_map_only():
    raise_if_cancelled()  # outside a task: nothing to stop
    stopped, running = threading.Event(), threading.Event()

    def task(i):
        if i == 0:
            running.wait(5.0)
            raise ValueError("label 0 is broken")
        running.set()
        try:
            for _ in range(5000):
                raise_if_cancelled()
                time.sleep(0.001)
        except KeyboardInterrupt:
            stopped.set()
            raise

    with pytest.raises(ValueError, match="label 0 is broken"):
        map_threads(task, range(2), 2)
    assert stopped.is_set()


def test_a_map_inside_a_task_runs_in_that_task_s_thread():
    # A label's solve that maps over something itself must not wait on the pool it runs on.
    def inner(i):
        return threading.get_ident()

    def outer(i):
        idents = map_threads(inner, range(4), 2)
        return idents, threading.get_ident()

    for idents, own in map_threads(outer, range(4), 2):
        assert set(idents) == {own}


# -- every threaded path equals one thread ------------------------------------------


@st.composite
def linear_problems(draw):
    n = draw(st.integers(5, 40))
    d = draw(st.integers(1, 8))
    L = draw(st.integers(2, 6))
    random = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = random.standard_normal((n, d))
    if draw(st.booleans()):
        X[random.random((n, d)) < 0.5] = 0.0
        X = sp.csr_matrix(X)
    Y = np.where(random.random((n, L)) < 0.4, 1.0, -1.0)
    C = draw(st.sampled_from([0.1, 1.0, 10.0]))
    loss = draw(st.sampled_from(["hinge", "squared_hinge"]))
    return X, Y, C, loss


@given(linear_problems(), st.sampled_from([2, 3, -1]))
def test_linear_cd_threads_equal_one_thread(problem, n_jobs):
    X, Y, C, loss = problem
    settings = dict(loss=loss, fit_intercept=True, tol=1e-4, max_iter=5000, random_state=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = linear_svm_cd(X, Y, C, n_jobs=1, **settings)
        many = linear_svm_cd(X, Y, C, n_jobs=n_jobs, **settings)
    np.testing.assert_array_equal(many.solution.coef, one.solution.coef)
    np.testing.assert_array_equal(many.solution.intercept, one.solution.intercept)
    np.testing.assert_array_equal(many.solution.dual, one.solution.dual)
    assert many.certificate.primal == one.certificate.primal
    assert many.certificate.dual == one.certificate.dual
    assert many.certificate.statistics["n_epochs"] == one.certificate.statistics["n_epochs"]


@given(linear_problems())
def test_box_kernel_cd_threads_equal_one_thread(problem):
    X, Y, C, loss = problem
    X = X.toarray() if sp.issparse(X) else X
    K = RBFKernel(gamma=0.5)(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = box_kernel_cd(K, Y, C, loss=loss, tol=1e-4, random_state=3, n_jobs=1)
        many = box_kernel_cd(K, Y, C, loss=loss, tol=1e-4, random_state=3, n_jobs=2)
    np.testing.assert_array_equal(many.solution.dual, one.solution.dual)
    assert many.certificate.gap == one.certificate.gap


@st.composite
def kernel_problems(draw):
    n = draw(st.integers(6, 50))
    L = draw(st.integers(2, 5))
    random = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = random.standard_normal((n, 3))
    Y = np.where(random.random((n, L)) < 0.5, 1.0, -1.0)
    Y[0], Y[1] = 1.0, -1.0  # both classes in every label
    return X, Y, draw(st.sampled_from([0.1, 1.0, 100.0]))


@given(kernel_problems(), st.sampled_from([2, -1]))
def test_smo_threads_equal_one_thread_for_a_diagonal_coupling(problem, n_jobs):
    X, Y, C = problem
    K = RBFKernel(gamma=0.5)(X)
    omega = np.diag(np.linspace(0.5, 2.0, Y.shape[1]))
    one = smo_solve(K, Y, omega, C, n_jobs=1, record_dual=True)
    many = smo_solve(K, Y, omega, C, n_jobs=n_jobs, record_dual=True)
    np.testing.assert_array_equal(many.solution.dual, one.solution.dual)
    np.testing.assert_array_equal(many.solution.intercept, one.solution.intercept)
    assert many.certificate.primal == one.certificate.primal
    assert many.certificate.statistics["label_steps"] == one.certificate.statistics["label_steps"]
    # The labels solved apart still give (10)'s trace: non-increasing, ending at the returned point's h.
    trace = np.array(many.certificate.statistics["dual_trace"])
    assert np.all(np.diff(trace) <= 1e-9 * np.maximum(1.0, np.abs(trace[1:])))
    assert -trace[-1] == pytest.approx(many.certificate.dual, rel=1e-9, abs=1e-9)


@given(kernel_problems())
def test_smo_labels_apart_solve_the_joint_problem(problem):
    """Omega~ diagonal: the labels solved apart reach the joint problem's optimum (a coupling of 1e-300 forces the joint path)."""
    X, Y, C = problem
    K = RBFKernel(gamma=0.5)(X)
    L = Y.shape[1]
    apart = smo_solve(K, Y, np.eye(L), C, tol=1e-8)
    coupled = np.eye(L)
    coupled[0, 1] = coupled[1, 0] = 1e-300
    joint = smo_solve(K, Y, coupled, C, tol=1e-8)
    assert "labels_solved_apart" in apart.certificate.statistics
    assert "labels_solved_apart" not in joint.certificate.statistics
    both = max(apart.certificate.gap, joint.certificate.gap)
    assert apart.certificate.primal == pytest.approx(joint.certificate.primal, abs=both + 1e-9)


def test_smo_column_cache_runs_its_labels_in_turn_with_the_same_result():
    random = np.random.default_rng(0)
    X = random.standard_normal((60, 4))
    Y = np.where(random.random((60, 3)) < 0.5, 1.0, -1.0)
    source = KernelSource(RBFKernel().resolve(X), X)
    cached = smo_solve(source, Y, np.eye(3), 1.0, cache_size=8 * 60 * 10 / 2**20, n_jobs=2)
    whole = smo_solve(source, Y, np.eye(3), 1.0, n_jobs=2)
    assert cached.certificate.statistics["cache_misses"] > 0
    assert cached.certificate.converged and whole.certificate.converged
    # Columns computed one by one differ from the whole matrix in the last bits (another BLAS
    # path), so the two solves agree to their gaps, not bitwise.
    both = max(cached.certificate.gap, whole.certificate.gap)
    assert cached.certificate.primal == pytest.approx(whole.certificate.primal, abs=both + 1e-9)


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=80, n_features=6, n_labels=5, random_state=1)
    return dataset.X, dataset.Y


@pytest.mark.parametrize(
    "method, params",
    [
        ("br", {}),
        ("bsvm", {}),
        ("mlrl", {"max_iter": 3}),
        ("concept_network", {"n_components": 20}),
        ("prbr", {}),
        ("prml", {}),
    ],
)
def test_estimators_give_the_same_model_for_every_n_jobs(method, params, data):
    X, Y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = make_method(method, n_jobs=1, **params).fit(X, Y)
        many = make_method(method, n_jobs=2, **params).fit(X, Y)
    np.testing.assert_array_equal(many.decision_function(X), one.decision_function(X))
    assert many.get_params()["n_jobs"] == 2


def test_the_solvers_take_n_jobs_and_refuse_a_bad_one():
    assert SMOSolver(n_jobs=2).n_jobs == 2
    with pytest.raises(ValueError, match="n_jobs"):
        SMOSolver(n_jobs=0)
    with pytest.raises(ValueError, match="n_jobs"):
        make_method("br", n_jobs=0).fit(np.eye(4), np.array([[0, 1], [1, 0], [0, 1], [1, 1]]))


def test_a_column_cache_holding_every_column_computes_each_once_over_all_labels(monkeypatch):
    # One cache serves every label (the columns of K do not depend on the label) and every eps
    # tightening; the statistics count what each engine call added, so their sum is the cache's
    # own count: with room for all n columns no column is computed twice, however many labels.
    # Explicit features take the cache whatever n (an exact kernel that fits is formed whole).
    from multilabel_core.kernel_approximation import NystroemKernel

    random = np.random.default_rng(1)
    n, L = 50, 6
    X = random.standard_normal((n, 3))
    Y = np.where(random.random((n, L)) < 0.5, 1.0, -1.0)
    computed = []
    fill = KernelSource.fill_column

    def counting(self, j, out):
        computed.append(j)
        fill(self, j, out)

    monkeypatch.setattr(KernelSource, "fill_column", counting)
    source = KernelSource(NystroemKernel(n_components=10).resolve(X), X)
    fit = smo_solve(source, Y, np.eye(L), 1.0, cache_size=1.0)
    statistics = fit.certificate.statistics
    assert statistics["cache_columns"] == n
    assert len(computed) == len(set(computed)) <= n
    assert statistics["cache_misses"] == len(computed)
    assert statistics["kernel"] == "explicit features"
    assert 0 < statistics["cache_misses"] and statistics["cache_hits"] + statistics["cache_misses"] > n
