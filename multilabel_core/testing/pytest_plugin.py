"""pytest plugin of the testing kit: hypothesis profiles, the real-data fixture, Ctrl-C.

The project's own suite loads it with ``-p multilabel_core.testing.pytest_plugin``
(pyproject.toml); third-party plugin authors can do the same.

Profiles: ``dev`` (few examples, the default) and ``ci`` (more examples, chosen when
``CI=true``); ``HYPOTHESIS_PROFILE`` overrides both.

With pytest-xdist (the test extra), ``pytest -n auto`` starts one worker per core this process
may use -- the CPU affinity and cgroup quota, not the host's count, which in a container can be
many times larger and would start that many interpreters of several hundred MB each.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=20, deadline=None)
# CI draws more examples, derandomised so that a submission's verdict does not depend on the
# draw; the dev profile stays random so that local runs keep exploring new examples.
settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") == "true" else "dev"))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto``: one worker per available core (:func:`multilabel_core.parallel.available_cores`)."""
    from multilabel_core.parallel import available_cores

    return available_cores()


def shared_datasets_dir() -> Path | None:
    """``$MULTILABEL_CORE_DATA``, else ``../shared/datasets`` beside the working directory's checkout."""
    env = os.environ.get("MULTILABEL_CORE_DATA")
    candidates = [Path(env)] if env else [Path.cwd().parent / "shared" / "datasets", Path.cwd() / ".." / ".." / "shared" / "datasets"]
    return next((p.resolve() for p in candidates if p.is_dir()), None)


@pytest.fixture(scope="session")
def datasets_dir() -> Path:
    """The real Mulan datasets; skip outside CI when absent, fail in CI."""
    path = shared_datasets_dir()
    if path is None:
        msg = "real datasets not found: set MULTILABEL_CORE_DATA or place them in ../shared/datasets"
        if os.environ.get("CI") == "true":
            pytest.fail(msg + " (CI=true requires them)")
        pytest.skip(msg)
    return path


@pytest.fixture
def python_sigint_handler():
    """Python's own SIGINT handler (KeyboardInterrupt) for the test, restored afterwards.

    A process started in the background by a non-interactive shell inherits SIGINT
    ignored, and then Ctrl-C (or ``signal.raise_signal``) never reaches the interpreter:
    tests of a solver's interruptibility install the handler they test against.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)
