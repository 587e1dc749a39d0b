"""Every command on every corpus file of a declared width: under 200 MB, or one line.

A LibSVM file declares its width by its largest index alone: ``16777215 1:1`` (14 bytes) is
a dataset of 16,777,216 labels.  The commands that use the data must not pay for the width
either: ``describe``'s statistics follow the relevant labels
(:mod:`multilabel_core.datasets.stats`), ``fit``, ``evaluate`` and ``compare`` refuse data
whose dense working set is out of all proportion to what they store
(:func:`multilabel_core.cli.check_width`), and ``predict`` refuses data whose columns are not
the model's, read from the model file before the model is rebuilt
(:func:`multilabel_core.cli.check_model_file_width`: rebuilding imports skops, which imports
every scikit-learn module, about 40 MB).  The loader refuses a dense Y that would be mostly
declared width (:data:`multilabel_core.datasets.libsvm.DENSE_Y_FLOOR`), and checks Y a slice at
a time (the whole-matrix masks of ``check_Y`` took four times Y).

Each command runs in a fresh interpreter started by a small wrapper, whose
``getrusage(RUSAGE_CHILDREN).ru_maxrss`` is the command's peak resident set; the wrapper puts
the command under an address-space limit, so that a regression ends in a MemoryError there
instead of swapping the machine.  The peak must stay under :data:`PEAK_LIMIT_MB`, the interpreter
and the imports included.  The cases come from
:data:`~multilabel_core.testing.malformed_files.WIDTH_CASES`, so a width case added to the
corpus is covered here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from multilabel_core.cli import WORK_PER_STORED_ENV, main
from multilabel_core.datasets import MAX_BYTES_ENV
from multilabel_core.testing.malformed_files import CASES, WIDTH_CASES, write_case

PEAK_LIMIT_MB = 200
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
    _, _, model = small
    data = write_case(_BY_NAME[name], tmp_path / "data")
    result = run_command(command_line(command, data, tmp_path, model), tmp_path)
    stderr = result["stderr"]
    assert "Traceback" not in stderr and "MemoryError" not in stderr, stderr
    if command == "describe":
        assert result["status"] == 0 and stderr == "", stderr
        assert re.search(rf"^\s*n_labels\s+{_BY_NAME[name].expectation[2]}$", result["stdout"], re.M), result["stdout"]
    else:
        # Every width case is refused by these commands: check_width's line, or predict's columns.
        assert result["status"] == 2 and result["stdout"] == "", result
        assert stderr.count("\n") == 1 and stderr.startswith(f"mlcore: error: {data}"), stderr
        reason = "but the model" if command == "predict" else f"set ${WORK_PER_STORED_ENV} to allow more"
        assert reason in stderr, stderr
    assert result["peak_mb"] < PEAK_LIMIT_MB, f"{command} on {name}: peak {result['peak_mb']:.0f} MB"


def test_the_issue_file_through_describe_is_cheap(tmp_path):
    """``printf '16777215 1:1\\n' > f.svm; mlcore describe f.svm``: 42 s and 1.15 GB before."""
    path = tmp_path / "f.svm"
    path.write_bytes(b"16777215 1:1\n")
    result = run_command(["describe", path], tmp_path)
    assert result["status"] == 0, result["stderr"]
    assert re.search(r"^\s*distinct_label_sets\s+1$", result["stdout"], re.M), result["stdout"]
    assert re.search(r"^\s*label_cardinality\s+1(\.0*)?$", result["stdout"], re.M), result["stdout"]
    assert result["peak_mb"] < PEAK_LIMIT_MB, result


def test_ten_rows_of_the_widest_label_are_refused_in_one_line_under_the_limit(tmp_path):
    """130 bytes of ten ``16777215 1:1`` lines: a 160 MiB dense Y at 392 MB peak before."""
    path = tmp_path / "f10.svm"
    path.write_bytes(b"16777215 1:1\n" * 10)
    for command in COMMANDS:
        result = run_command(command_line(command, path, tmp_path, tmp_path / "absent.mlcore"), tmp_path)
        stderr = result["stderr"]
        assert result["status"] == 2 and stderr.count("\n") == 1, (command, result)
        assert stderr.startswith(f"mlcore: error: {path}, line 1: label 16777215 sets the width"), (command, stderr)
        assert "cells per stored value" in stderr, (command, stderr)
        assert result["peak_mb"] < PEAK_LIMIT_MB, (command, result["peak_mb"])


def test_the_widths_read_from_a_model_file_are_the_rebuilt_models(small):
    """predict's early refusal reads the schema; what it reads must be what load_model rebuilds."""
    import zipfile, io  # noqa: E401

    from multilabel_core.cli import _schema_int
    from multilabel_core.persistence import load_model

    _, _, model = small
    est = load_model(model)
    with zipfile.ZipFile(model) as outer, zipfile.ZipFile(io.BytesIO(outer.read("estimator.skops"))) as inner:
        schema = json.loads(inner.read("schema.json"))
    assert (_schema_int(schema, "n_features_in_"), _schema_int(schema, "n_labels_")) == (
        est.n_features_in_, est.n_labels_
    )
    assert _schema_int(schema, "no_such_attribute") is None and _schema_int({"content": []}, "n_labels_") is None


def test_predict_on_a_declared_width_it_was_fitted_on_is_not_refused(tmp_path, monkeypatch, capsys):
    """The early read refuses a mismatch only: a model fitted on a wide file predicts that file."""
    data = tmp_path / "wide.svm"
    data.write_bytes(b"0 1:1\n1 600000:1\n" * 10)  # 20 rows of 600,000 features holding 20 values
    model = tmp_path / "wide.mlcore"
    monkeypatch.setenv(WORK_PER_STORED_ENV, "inf")
    assert main(["fit", "br", str(data), "--out", str(model), "--quiet"]) == 0
    monkeypatch.delenv(WORK_PER_STORED_ENV)
    assert main(["evaluate", "br", str(data), "--cv", "2", "--quiet"]) == 2  # check_width: data of a declared width
    capsys.readouterr()
    assert main(["predict", str(model), str(data), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_samples"] == 20
    narrower = tmp_path / "narrower.svm"
    narrower.write_bytes(b"0 1:1\n1 599999:1\n" * 10)
    assert main(["predict", str(model), str(narrower), "--quiet"]) == 2
    assert "has 599999 feature column(s), but the model" in capsys.readouterr().err
