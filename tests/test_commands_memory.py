"""Every command on every corpus file of a declared width: bounded memory, or one line.

A LibSVM file declares its width by its largest index alone: ``16777215 1:1`` (14 bytes) is
a dataset of 16,777,216 labels, and loading it costs 85 MB.  The commands that use the data
must not pay for the width either: ``describe``'s statistics follow the relevant labels
(:mod:`multilabel_core.datasets.stats`), and ``fit``, ``evaluate`` and ``compare`` refuse data
whose dense working set is out of all proportion to what they store
(:func:`multilabel_core.cli.check_width`), ``predict`` data whose columns are not the model's.

Each command runs in a fresh interpreter started by a small wrapper, whose
``getrusage(RUSAGE_CHILDREN).ru_maxrss`` is the command's peak resident set; the wrapper puts
the command under an address-space limit, so that a regression ends in a MemoryError there
instead of swapping the machine.  The peak must stay under :data:`PEAK_LIMIT_MB`; a command
whose own footprint (measured on a 12-row file, only when the limit is passed) leaves no room
under it -- ``fit`` and ``predict`` import scikit-learn and, loading a model, dask: about 195 MB
before any data -- may add :data:`DATA_ALLOWANCE_MB` to that footprint, no more.  The cases come
from :data:`~multilabel_core.testing.malformed_files.WIDTH_CASES`, so a width case added to the
corpus is covered here.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import pytest

from multilabel_core.cli import WORK_PER_STORED_ENV, main
from multilabel_core.datasets import MAX_BYTES_ENV
from multilabel_core.testing.malformed_files import CASES, WIDTH_CASES, write_case

PEAK_LIMIT_MB = 200
#: What a width case may add to a command's own footprint: the widest file holds 2 x 2^24 int8
#: labels (32 MiB) once loaded, and the loader's checks of Y (validation.check_Y) hold masks of
#: that size beside it; measured 62-64 MB above the footprint for that file, 0-30 MB for the others.
DATA_ALLOWANCE_MB = 96
CHILD_TIMEOUT = 180
CHILD_ADDRESS_SPACE = 3 * 2**30

_WRAPPER = r"""
import json, resource, subprocess, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({{"status": done.returncode, "stdout": done.stdout, "stderr": done.stderr, "peak_mb": peak}}))
"""

_BY_NAME = {case.name: case for case in CASES}
# Three features and three labels, every label of both classes in every 2-fold training part.
_SMALL = b"0,2 1:0.5 3:1\n1 2:1\n0 1:1\n1,2 3:1\n" * 3


def run_command(argv: list[str], cwd) -> dict:
    """``mlcore ARGV`` in a fresh interpreter: its status, output and peak resident set in MB."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    for name in (MAX_BYTES_ENV, WORK_PER_STORED_ENV):
        env.pop(name, None)
    code = _WRAPPER.format(limit=CHILD_ADDRESS_SPACE)
    done = subprocess.run(
        [sys.executable, "-c", code, sys.executable, "-m", "multilabel_core.cli", *map(str, argv)],
        capture_output=True, text=True, timeout=CHILD_TIMEOUT, env=env, cwd=cwd,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def command_line(command: str, data, folder, model) -> list:
    return {
        "describe": ["describe", data],
        "fit": ["fit", "br", data, "--out", folder / "fitted.mlcore", "--quiet"],
        "evaluate": ["evaluate", "br", data, "--cv", "2", "--quiet"],
        "compare": ["compare", "br", "--data", data, "--out", folder / "run", "--protocol-param", "n_splits=2",
                    "--quiet", "--no-plots"],  # fmt: skip
        "predict": ["predict", model, data, "--quiet"],
    }[command]


COMMANDS = ["describe", "fit", "evaluate", "compare", "predict"]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A 12-row file and a model fitted on it (what predict is given)."""
    folder = tmp_path_factory.mktemp("small")
    data = folder / "small.svm"
    data.write_bytes(_SMALL)
    assert main(["fit", "br", str(data), "--out", str(folder / "small.mlcore"), "--quiet"]) == 0
    return folder, data, folder / "small.mlcore"


@functools.lru_cache(maxsize=None)
def footprint(command: str, folder, data, model) -> float:
    """The command's peak on the 12-row file: what it costs before any width."""
    work = folder / f"footprint-{command}"
    work.mkdir()
    result = run_command(command_line(command, data, work, model), work)
    assert result["status"] == 0, result["stderr"]
    return result["peak_mb"]


def test_the_corpus_has_width_cases_of_labels_features_and_both():
    shapes = [_BY_NAME[name].expectation for name in WIDTH_CASES]
    assert any(d >= 2**24 and L == 1 for _, d, L in shapes), "a feature width"
    assert any(L >= 2**24 and d < 4 for _, d, L in shapes), "a label width"
    assert any(d >= 2**24 and L >= 2**24 for _, d, L in shapes), "both"
    assert any(n >= 20 and d >= 2**24 for n, d, _ in shapes), "enough rows for the splits and a fit to start"
    assert "libsvm-label-width" in WIDTH_CASES and _BY_NAME["libsvm-label-width"].data == b"16777215 1:1\n"


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("name", WIDTH_CASES)
def test_a_command_on_a_declared_width_is_bounded_or_refused_in_one_line(tmp_path, small, name, command):
    folder, small_data, model = small
    data = write_case(_BY_NAME[name], tmp_path / "data")
    result = run_command(command_line(command, data, tmp_path, model), tmp_path)
    stderr = result["stderr"]
    assert "Traceback" not in stderr and "MemoryError" not in stderr, stderr
    if command == "describe":
        assert result["status"] == 0 and stderr == "", stderr
        assert f"n_labels       {_BY_NAME[name].expectation[2]}" in result["stdout"]
    else:
        # Every width case is refused by these commands: check_width's line, or predict's columns.
        assert result["status"] == 2 and result["stdout"] == "", result
        assert stderr.count("\n") == 1 and stderr.startswith(f"mlcore: error: {data}"), stderr
        reason = "but the model" if command == "predict" else f"set ${WORK_PER_STORED_ENV} to allow more"
        assert reason in stderr, stderr
    peak = result["peak_mb"]
    if peak > PEAK_LIMIT_MB:
        own = footprint(command, folder, small_data, model)
        assert peak <= own + DATA_ALLOWANCE_MB, (
            f"{command} on {name}: peak {peak:.0f} MB, its footprint on 12 rows {own:.0f} MB, "
            f"allowance {DATA_ALLOWANCE_MB} MB"
        )


def test_the_issue_file_through_describe_is_cheap(tmp_path):
    """``printf '16777215 1:1\\n' > f.svm; mlcore describe f.svm``: 42 s and 1.15 GB before."""
    path = tmp_path / "f.svm"
    path.write_bytes(b"16777215 1:1\n")
    result = run_command(["describe", path], tmp_path)
    assert result["status"] == 0, result["stderr"]
    assert "distinct_label_sets 1" in result["stdout"] and "label_cardinality 1.0" in result["stdout"]
    assert result["peak_mb"] < PEAK_LIMIT_MB, result
