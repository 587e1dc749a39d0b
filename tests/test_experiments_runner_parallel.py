"""The same run serially, with joblib workers, and on a dask.distributed cluster: the same records."""

from __future__ import annotations

import os

import joblib
import pytest
from threadpoolctl import threadpool_limits

from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.experiments.runner import run_experiment
from multilabel_core.experiments.store import without_timings

DATA = make_correlated_multilabel(n_samples=150, n_features=8, n_labels=4, random_state=4)
SETTINGS = {
    "protocol_params": {"n_repeats": 3},
    "grids": {"br": {"C": [0.1, 1.0, 10.0]}},
    "inner_cv": 2,
    "progress": False,
    "plots": False,
    "grid_extensions": 0,  # the grid as given (extended runs in parallel: test_experiments_grid_extension.py)
}


def require_distributed():
    """dask.distributed, or a skip outside CI (in CI the test extra installs it, so its absence fails)."""
    try:
        import distributed
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("dask.distributed is missing, but the test extra installs it (CI=true)")
        pytest.skip("needs the dask extra")
    return distributed


def compare(out, **execution):
    return run_experiment(["br"], [DATA], "fixed_ratio", out, **SETTINGS, **execution).records


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    # The records are compared exactly, which holds at equal BLAS thread counts: the workers run the
    # serial code on bit-identical arrays, but some BLAS libraries (MKL among them) sum in a
    # thread-count-dependent order.  Dask's nanny starts its workers at one BLAS thread
    # (distributed.nanny.pre-spawn-environ), the joblib test below asks loky for one: so here too.
    with threadpool_limits(limits=1):
        records = compare(tmp_path_factory.mktemp("serial"))
    assert len(records) == 3 and all(r["status"] == "ok" and len(r["search"]) == 3 for r in records)
    return without_timings(records)


def test_joblib_workers_give_the_serial_records(serial, tmp_path):
    with joblib.parallel_config(backend="loky", inner_max_num_threads=1):
        records = compare(tmp_path, n_jobs=2)
    assert without_timings(records) == serial


def test_a_dask_cluster_gives_the_serial_records(serial, tmp_path):
    distributed = require_distributed()
    # Worker processes: tasks and data really travel to other interpreters over TCP.
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:  # fmt: skip
        records = compare(tmp_path, scheduler=cluster.scheduler_address)
    assert without_timings(records) == serial


def test_an_unreachable_scheduler_is_a_clear_error(tmp_path):
    require_distributed()
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}), pytest.raises(OSError, match="127.0.0.1:9"):
        compare(tmp_path, scheduler="tcp://127.0.0.1:9")
