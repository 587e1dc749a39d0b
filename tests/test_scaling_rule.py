"""One scaling rule: no scaling unless asked, in the Python API and in every command; a warning with the
numbers when features are badly scaled; the README's ten lines warning-free on emotions."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import multilabel_core as mlc
from multilabel_core.cli import PREPROCESS_FROM_FILE, build_parser
from multilabel_core.datasets import make_correlated_multilabel, write_libsvm
from multilabel_core.experiments.config import Experiment, load_experiment
from multilabel_core.preprocessed import BADLY_SCALED_RATIO, Preprocessed, badly_scaled, feature_scale_spread

README = Path(__file__).resolve().parents[1] / "README.md"
CLI = [sys.executable, "-m", "multilabel_core.cli"]


def cli(tmp_path, *argv, env=None):
    """``mlcore ARGV`` in a fresh interpreter, from a folder outside the checkout."""
    return subprocess.run([*CLI, *map(str, argv)], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, **(env or {})})  # fmt: skip


# ------------------------------------------------------------------ the one default


def test_every_entry_point_defaults_to_no_scaling():
    assert not isinstance(mlc.make_method("br"), Preprocessed)
    assert isinstance(mlc.make_method("br", preprocess="standardize"), Preprocessed)
    parser = build_parser()
    assert parser.parse_args(["fit", "br", "synthetic", "--out", "m.mlcore"]).preprocess is None
    assert parser.parse_args(["evaluate", "br", "synthetic"]).preprocess is None
    # compare: the experiment file's setting when it has one, else none -- the Experiment's own default.
    assert parser.parse_args(["compare", "br", "--out", "d"]).preprocess is PREPROCESS_FROM_FILE
    assert Experiment(methods=["br"], datasets=["synthetic"]).preprocess is None
    assert load_experiment(methods=["br"], datasets=["synthetic"]).preprocess is None
    for command in (["fit", "br", "synthetic", "--out", "m"], ["evaluate", "br", "synthetic"], ["compare", "--out", "d"]):
        assert parser.parse_args([*command, "--preprocess", "none"]).preprocess is None
        assert parser.parse_args([*command, "--preprocess", "maxabs"]).preprocess == "maxabs"


def badly_scaled_file(folder: Path) -> Path:
    """The embedded data with one feature in units 10^4 times larger: a spread far above the bound."""
    ds = make_correlated_multilabel(n_samples=120, n_features=6, n_labels=3, random_state=0)
    ds.X[:, 0] *= 1e4
    path = folder / "wide_units.svm"
    write_libsvm(ds, path)
    return path


def test_none_is_accepted_by_every_command_and_compare_overrides_its_file(tmp_path):
    data = badly_scaled_file(tmp_path)
    fit = cli(tmp_path, "fit", "mlknn", data, "--out", tmp_path / "m.mlcore", "--preprocess", "none")
    assert fit.returncode == 0, fit.stderr
    assert "features: as given" in fit.stdout
    assert f"warning: {data}: the features' standard deviations span" in fit.stdout
    assert "FeatureScaleWarning" in fit.stderr

    scaled = cli(tmp_path, "evaluate", "mlknn", data, "--cv", "2", "--preprocess", "standardize", "--json")
    assert scaled.returncode == 0, scaled.stderr
    assert json.loads(scaled.stdout)["preprocess"] == "standardize" and "FeatureScaleWarning" not in scaled.stderr

    config = tmp_path / "experiment.toml"
    config.write_text(f'methods = ["mlknn"]\ndatasets = ["{data.as_posix()}"]\npreprocess = "maxabs"\n')
    run = cli(tmp_path, "compare", "--config", config, "--protocol-param", "n_splits=2", "--inner-cv", "2",
              "--grid", "k=5", "--preprocess", "none", "--out", tmp_path / "run", "--no-plots", "--quiet", "--json")
    assert run.returncode == 0, run.stderr
    payload = json.loads(run.stdout)
    assert payload["feature_scale_warnings"] and "FeatureScaleWarning" in run.stderr
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert records and {record["preprocess"] for record in records} == {None}


# ------------------------------------------------------------------ the check


def _reference_spread(dense: np.ndarray):
    std = dense.std(axis=0)
    varying = std[std > 1e-12 * np.maximum(np.abs(dense.mean(axis=0)), 1.0)]
    return (np.nan, np.nan) if varying.size == 0 else (varying.min(), varying.max())


@settings(deadline=None)
@given(
    X=hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=2, max_side=12),
                 elements=st.floats(-1e3, 1e3, allow_nan=False)),
    sparse=st.booleans(),
)
def test_the_spread_is_the_extreme_standard_deviations_of_the_varying_columns(X, sparse):
    X = np.where(np.abs(X) < 1e-3, 0.0, X)  # a constant column is 0 up to round-off, not a tiny spread
    low, high = feature_scale_spread(sp.csr_matrix(X) if sparse else X)
    ref_low, ref_high = _reference_spread(X)
    if np.isnan(ref_low):
        assert np.isnan(low) and np.isnan(high)
        return
    # Two-pass centred sums in either path; numpy's std is one more: agreement to a few ulps of the data's scale.
    scale = np.abs(X).max()
    assert low == pytest.approx(ref_low, rel=1e-9, abs=1e-12 * scale)
    assert high == pytest.approx(ref_high, rel=1e-9, abs=1e-12 * scale)


@settings(deadline=None)
@given(shift=st.floats(-1e4, 1e4), factor=st.floats(1e-2, 1e2))
def test_the_verdict_follows_the_ratio_and_ignores_the_origin(shift, factor):
    X = make_correlated_multilabel(n_samples=60, n_features=4, n_labels=2, random_state=1).X
    base = feature_scale_spread(X)
    moved = feature_scale_spread(X * factor + shift)
    np.testing.assert_allclose(moved, np.array(base) * factor, rtol=1e-6)
    wide = X.copy()
    wide[:, 0] *= 10 * BADLY_SCALED_RATIO
    assert badly_scaled(X) is None and badly_scaled(X * factor + shift) is None
    sentence = badly_scaled(wide * factor + shift)
    assert sentence is not None and "preprocess" in sentence and "standard deviations span" in sentence


# ------------------------------------------------------------------ the README's ten lines


def ten_lines() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) == 1
    return blocks[0]


def test_the_readme_example_is_warning_free_on_emotions(tmp_path, datasets_dir):
    code, swapped = re.subn(r"^data = .*?(load_dataset\(\"emotions\"\)).*$", r"data = \1", ten_lines(), flags=re.M)
    assert swapped == 1, "the ten lines name load_dataset('emotions') as the data to swap in"
    env = {**os.environ, "MULTILABEL_CORE_DATA": str(datasets_dir)}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    assert "Warning" not in run.stderr, run.stderr
    assert "average_precision" in run.stdout
    # The same lines without the scaling they ask for are what the check is about: they do warn.
    first_fit = "\n".join(line.replace(', preprocess="standardize"', "") for line in code.splitlines()
                          if not line.startswith("print(cross_validate"))  # fmt: skip
    raw = subprocess.run([sys.executable, "-c", first_fit], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert raw.returncode == 0, raw.stderr
    assert "ConvergenceWarning" in raw.stderr
