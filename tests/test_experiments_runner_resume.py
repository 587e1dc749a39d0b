"""A compare run killed with SIGKILL in the middle resumes: nothing finished is recomputed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

from multilabel_core.experiments.runner import run_experiment
from multilabel_core.experiments.store import read_records, record_key, without_timings

N_SPLITS = 20
GRID = [0.1, 1.0, 10.0]


def complete_lines(path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_a_killed_run_resumes_and_recomputes_nothing_that_finished(tmp_path):
    out = tmp_path / "run"
    argv = [
        sys.executable, "-m", "multilabel_core.cli", "compare", "br", "--data", "synthetic",
        "--protocol", "fixed_ratio", "--protocol-param", f"n_repeats={N_SPLITS}",
        "--grid", "C=" + ",".join(map(str, GRID)), "--inner-cv", "2",
        "--out", str(out), "--quiet", "--json", "--no-plots",
    ]  # fmt: skip
    results = out / "results.jsonl"
    run = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
    deadline = time.monotonic() + 120
    while complete_lines(results) < 3:
        assert run.poll() is None, f"the run ended before it could be killed: {run.stderr.read().decode()}"
        assert time.monotonic() < deadline, "no records appeared"
        time.sleep(0.005)
    run.send_signal(signal.SIGKILL)
    run.wait()
    run.stderr.close()
    assert run.returncode == -signal.SIGKILL

    killed = results.read_bytes()
    finished = killed[: killed.rfind(b"\n") + 1]  # a record cut by the kill is not finished
    n_finished = finished.count(b"\n")
    assert 3 <= n_finished < N_SPLITS, "killed in the middle"

    restart = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert restart.returncode == 0, restart.stderr
    payload = json.loads(restart.stdout)
    assert (payload["resumed"], payload["computed"]) == (n_finished, N_SPLITS - n_finished)
    assert results.read_bytes().startswith(finished), "finished records are kept byte for byte"
    records = read_records(out)
    assert sorted(record_key(r) for r in records) == [("br", "synthetic", s) for s in range(N_SPLITS)]

    uninterrupted = run_experiment(
        ["br"], ["synthetic"], "fixed_ratio", tmp_path / "uninterrupted",
        protocol_params={"n_repeats": N_SPLITS}, grids={"br": {"C": GRID}}, inner_cv=2, progress=False, plots=False,
    )  # fmt: skip
    resumed = sorted(records, key=record_key)
    assert without_timings(resumed) == without_timings(uninterrupted.records)
