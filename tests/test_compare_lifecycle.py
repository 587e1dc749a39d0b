"""``mlcore compare`` ends honestly: non-zero when nothing was measured, and its workers die with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import joblib
import pytest

from multilabel_core.cli import EXIT_FAILED_FITS, main
from multilabel_core.experiments import runner

SMALL = ["--protocol", "kfold", "--protocol-param", "n_splits=2", "--inner-cv", "2", "--no-plots", "--quiet"]


def test_compare_exits_non_zero_when_every_evaluation_failed(capsys, tmp_path):
    # Every split's fit raises (C outside the solvers' range): the run completes, keeps its
    # records and report, and says so by its exit status, as the demo does.
    code = main(["compare", "br", "--data", "synthetic", *SMALL, "--grid", "C=1e300", "--out", str(tmp_path / "run")])
    _, err = capsys.readouterr()
    assert code == EXIT_FAILED_FITS
    assert err.startswith("mlcore: error: every evaluation failed (2 of 2); the first: br on synthetic, split 0: ")
    assert (tmp_path / "run" / "report.md").exists()


def test_compare_with_some_evaluations_left_exits_zero(capsys, tmp_path):
    code = main(["compare", "br", "--data", "synthetic", *SMALL, "--grid", "C=1", "--out", str(tmp_path / "run")])
    assert code == 0, capsys.readouterr().err


def test_the_loky_workers_get_the_parent_watch_and_other_backends_are_left_alone():
    with runner._loky_exiting_with_parent():
        backend, _ = joblib.parallel.get_active_backend()
        assert backend.backend_kwargs["initializer"] is runner._exit_with_parent
        assert backend.backend_kwargs["initargs"] == (os.getpid(),)
    with joblib.parallel_config(backend="threading"), runner._loky_exiting_with_parent():
        backend, _ = joblib.parallel.get_active_backend()
        assert "initializer" not in getattr(backend, "backend_kwargs", {})


def _children(pid: int) -> set[int]:
    """Processes whose parent is ``pid`` (Linux /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # the process ended while we looked
                continue
            # The command name (field 2) is in parentheses and may hold spaces: the ppid follows it.
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from Linux /proc")
def test_the_workers_of_a_killed_compare_exit_with_it(tmp_path):
    # Before: after SIGKILL of `compare --n-jobs 2` its loky workers (and the resource
    # trackers waiting on them) lived on for joblib's 300 s idle timeout.  The bound below
    # only detects a hang: the workers poll their parent every PARENT_POLL_SECONDS.
    argv = [sys.executable, "-m", "multilabel_core.cli", "compare", "mlrl", "--data", "synthetic", "--n-jobs", "2",
            "--grid", "lam=1e-6,1e-5,1e-4,1e-3", "--no-plots", "--quiet", "--out", str(tmp_path / "run")]  # fmt: skip
    # The child runs outside the checkout: an unbuilt multilabel_core/ in the working
    # directory would shadow the installed package (CI runs from the checkout).
    parent = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    spawned: set[int] = set()
    try:
        deadline = time.monotonic() + 120.0
        while time.monotonic() < deadline and parent.poll() is None:
            spawned |= _children(parent.pid)
            if sum("popen_loky" in _command(pid) for pid in spawned) >= 2:
                break
            time.sleep(0.1)
        workers = {pid for pid in spawned if "popen_loky" in _command(pid)}
        assert parent.poll() is None and len(workers) >= 2, "compare ended before its two workers were seen"
        time.sleep(1.0)  # let the workers take their first tasks
        spawned |= _children(parent.pid)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline and any(_alive(pid) for pid in spawned):
            time.sleep(0.2)
        survivors = {pid: _command(pid) for pid in spawned if _alive(pid)}
        assert not survivors, f"still running 60 s after the parent was killed: {survivors}"
    finally:
        for pid in spawned:  # only the processes this test started, by their id
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_worker_whose_parent_died_before_its_initializer_exits():
    # A worker may reach its initializer only after the run was killed (it imports the methods
    # first); it then compares its parent with the run's id given at the executor's creation,
    # not with os.getppid() of that moment, which is already the new parent's.
    code = (
        "import os, time\n"
        "from multilabel_core.experiments.runner import _exit_with_parent\n"
        "_exit_with_parent(os.getppid() + 1)  # not the parent: as if the run had died\n"
        "time.sleep(30)\n"
    )
    # Exit status 1 without a traceback is the check's exit; a worker that missed it would sleep
    # and exit 0.  No wall-clock bound: on a loaded machine the imports alone can take 20 s.
    result = subprocess.run([sys.executable, "-c", code], cwd=tempfile.gettempdir(), timeout=600,
                            capture_output=True, text=True)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
