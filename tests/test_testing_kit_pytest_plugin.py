"""The testing kit's pytest plugin: how many workers ``pytest -n auto`` starts."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from multilabel_core.parallel import available_cores
from multilabel_core.testing import pytest_plugin


def test_auto_workers_are_the_cores_this_process_may_use():
    assert pytest_plugin.pytest_xdist_auto_num_workers(config=None) == available_cores()


@pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity"),
    reason="os.sched_setaffinity exists only on Linux: elsewhere no process can be pinned to one core to test against",
)
def test_auto_workers_follow_the_affinity_mask_not_the_host(tmp_path):
    # A process pinned to one core must get one worker, whatever os.cpu_count() says of the host.
    code = (
        "import os; os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]}); "
        "from multilabel_core.testing import pytest_plugin; "
        "print(pytest_plugin.pytest_xdist_auto_num_workers(None), os.cpu_count())"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    workers, host = map(int, result.stdout.split())
    assert workers == 1, (workers, host)
