"""The testing kit's pytest plugin: how many workers ``pytest -n auto`` starts."""

from __future__ import annotations

import os

from multilabel_core.parallel import available_cores
from multilabel_core.testing import pytest_plugin


def test_auto_workers_are_the_cores_this_process_may_use():
    assert pytest_plugin.pytest_xdist_auto_num_workers(config=None) == available_cores()


def test_auto_workers_follow_the_affinity_mask_not_the_host(monkeypatch):
    # A process allowed on one core must get one worker, whatever os.cpu_count() says of the host.  The mask is
    # what os.sched_getaffinity reports (joblib asks it at every call); setting it here, not pinning a real
    # process, keeps the test on every platform, including those without that function.
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    workers, host = pytest_plugin.pytest_xdist_auto_num_workers(config=None), os.cpu_count()
    assert workers == 1, (workers, host)
