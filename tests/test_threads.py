"""BLAS threads are set with threadpoolctl, never through environment variables a user must export.

The policy (docs/estimators.md, "Threads"; docs/experiments.md, "Threads and cores"): the fits
of the families whose solves are many small BLAS calls between Cython loops (label ranking,
concept network, LIEML) hold BLAS to one thread and restore the caller's setting after; the
experiment runner runs each task with BLAS at most cores // workers threads, lowering a larger
count (a worker started with the parent's environment) and never raising a smaller one.
"""

from __future__ import annotations

import joblib
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from multilabel_core import make_method
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.estimator import ComposedEstimator
from multilabel_core.experiments import runner
from multilabel_core.experiments.runner import blas_threads_per_worker
from multilabel_core.parallel import WithinBudget

#: The methods whose fits hold BLAS to one thread.
ONE_THREAD_FITS = ["larank", "clarank", "mlfs", "cmlfs", "concept_network", "lieml", "lieml_raw"]


def blas_threads() -> int:
    """The largest thread count of the BLAS libraries loaded in this process (0 without one)."""
    return max((info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"), default=0)


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=60, n_features=5, n_labels=3, random_state=0)
    return dataset.X, dataset.Y


@pytest.mark.parametrize("method", ONE_THREAD_FITS)
def test_these_fits_hold_blas_to_one_thread_and_restore_it(method, data, monkeypatch):
    seen = []
    original = ComposedEstimator._fit

    def spy(self, X, Y, **kwargs):
        seen.append(blas_threads())
        return original(self, X, Y, **kwargs)

    monkeypatch.setattr(ComposedEstimator, "_fit", spy)
    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        make_method(method).fit(*data)
        assert blas_threads() == before  # the caller's setting, restored
    assert seen and set(seen) == {1}


def test_threads_per_worker_keep_workers_times_threads_within_the_cores():
    assert blas_threads_per_worker(1, cores=8) == 8
    assert blas_threads_per_worker(3, cores=8) == 2
    assert blas_threads_per_worker(8, cores=8) == 1
    assert blas_threads_per_worker(16, cores=8) == 1  # more workers than cores: one thread each
    assert all(n * blas_threads_per_worker(n, cores=c) <= max(n, c) for n in range(1, 20) for c in range(1, 20))
    assert blas_threads_per_worker(1) == joblib.cpu_count()


def test_a_limited_task_lowers_the_threads_and_never_raises_them():
    with threadpool_limits(limits=2, user_api="blas"):
        if blas_threads() != 2:
            pytest.skip("no BLAS library here that can run two threads")
        assert WithinBudget(blas_threads, 1)() == 1
        assert blas_threads() == 2  # restored after the task
        with threadpool_limits(limits=1, user_api="blas"):
            assert WithinBudget(blas_threads, 2)() == 1  # the caller's lower setting stands


def test_runner_workers_run_tasks_within_cores_over_workers_threads(data, monkeypatch):
    # The parent's environment asks for every core in each worker; the tasks get cores // 2.
    cores = joblib.cpu_count()
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", str(cores))
    monkeypatch.setenv("OMP_NUM_THREADS", str(cores))

    class Dataset:
        X, Y = data

    with runner._parallel(2, None, Dataset) as parallel:
        counts = [
            max((i["num_threads"] for i in info if i["user_api"] == "blas"), default=0)
            for info in parallel([joblib.delayed(threadpool_info)() for _ in range(4)])
        ]
    assert all(count <= max(1, cores // 2) for count in counts), counts


def test_runner_tasks_get_a_thread_budget_of_cores_over_workers(data):
    """An estimator left at n_jobs=None inside a runner task starts cores // workers label threads, no more."""
    from multilabel_core.parallel import effective_threads

    class Dataset:
        X, Y = data

    cores = joblib.cpu_count()
    with runner._parallel(2, None, Dataset) as parallel:
        budgets = list(parallel([(effective_threads, (None,), {}) for _ in range(4)]))
    assert budgets == [max(1, cores // 2)] * 4
    with runner._parallel(1, None, Dataset) as parallel:
        assert list(parallel([(effective_threads, (None,), {})])) == [min(cores, joblib.cpu_count())]
