"""Names a user types: "did you mean" everywhere, case ignored; the training data's name kept in the model file
and checked by predict; errors that name the user's model, not internal classes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import multilabel_core as mlc
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.persistence import load_model, model_manifest, save_model
from multilabel_core.plugins import _closest

CLI = [sys.executable, "-m", "multilabel_core.cli"]


def cli(tmp_path, *argv, env=None):
    """``mlcore ARGV`` in a fresh interpreter, from a folder outside the checkout."""
    return subprocess.run([*CLI, *map(str, argv)], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, **(env or {})})  # fmt: skip


# ------------------------------------------------------------------ did you mean


@pytest.mark.parametrize(
    "argv, typed, meant",
    [
        (["evaluate", "bR", "synthetic"], "'bR'", "'br'"),
        (["evaluate", "br", "synthetic", "--param", "c=1"], "'c'", "'C'"),
        (["fit", "br", "synthetic", "--param", "max_iters=5", "--out", "m.mlcore"], "'max_iters'", "'max_iter'"),
        (["compare", "br", "--data", "synthetic", "--grid", "br.c=1,2", "--out", "run"], "'c'", "'C'"),
        (["compare", "br", "--data", "synthetic", "--grid", "max_iters=1", "--out", "run"], "'max_iters'", "'max_iter'"),
        (["compare", "Mlknn", "--data", "synthetic", "--out", "run"], "'Mlknn'", "'mlknn'"),
        (["compare", "br", "--data", "synthetic", "--select", "averge_precision", "--out", "run"],
         "'averge_precision'", "'average_precision'"),
        (["compare", "br", "--data", "synthetic", "--protocol", "kfld", "--out", "run"], "'kfld'", "'kfold'"),
        (["evaluate", "br", "synthetic", "--threshold", "Zero"], "'Zero'", "'zero'"),
        (["evaluate", "br", "synthetic", "--preprocess", "Standardize"], "'Standardize'", "'standardize'"),
    ],
)
def test_a_mistyped_name_is_one_line_with_the_name_meant(tmp_path, argv, typed, meant):
    run = cli(tmp_path, *argv)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    last = run.stderr.splitlines()[-1]  # argparse's own refusals print the usage first
    assert last.startswith(("mlcore: error:", f"mlcore {argv[0]}: error:")) and run.stderr.endswith("\n")
    assert typed in last and f"Did you mean {meant}?" in last, run.stderr
    assert not (tmp_path / "m.mlcore").exists() and not (tmp_path / "run").exists()  # refused before any work


def test_a_mistyped_dataset_is_answered_case_ignored(tmp_path, datasets_dir):
    run = cli(tmp_path, "describe", "Emotion", env={"MULTILABEL_CORE_DATA": str(datasets_dir)})
    assert run.returncode == 2 and "Did you mean 'emotions'" in run.stderr, run.stderr


@pytest.mark.parametrize("typed", ["Synthetic", "SYNTHETIC", "synthetc"])
def test_the_embedded_dataset_is_suggested(tmp_path, typed):
    run = cli(tmp_path, "describe", typed, env={"MULTILABEL_CORE_DATA": str(tmp_path)})
    assert run.returncode == 2 and "Did you mean 'synthetic' (the embedded dataset" in run.stderr, run.stderr


def test_python_names_get_the_same_answer():
    cases = [
        (lambda: mlc.make_method("bR"), "Did you mean 'br'?"),
        (lambda: mlc.make_method("br", c=1), "Did you mean 'C'?"),
        (lambda: mlc.make_method("br", max_iters=1), "Did you mean 'max_iter'?"),
        (lambda: mlc.make_method("br", c=1, max_iters=2), "Did you mean 'C' for 'c'; 'max_iter' for 'max_iters'?"),
        (lambda: mlc.make_component("Loss", "hinge"), "Did you mean 'loss'?"),
        (lambda: mlc.make_component("loss", "HINGE"), "Did you mean 'hinge'?"),
        (lambda: mlc.make_component("kernel", "rbf", Gamma=1.0), "Did you mean 'gamma'?"),
    ]
    for call, hint in cases:
        with pytest.raises(ValueError) as excinfo:
            call()
        assert hint in str(excinfo.value)
    with pytest.raises(ValueError) as excinfo:
        mlc.make_method("zzzzzz")
    assert "Did you mean" not in str(excinfo.value)  # nothing close: only the list


@settings(deadline=None)
@given(name=st.sampled_from([spec.name for spec in mlc.list_methods()]), data=st.data())
def test_any_change_of_case_finds_the_name(name, data):
    flips = data.draw(st.lists(st.booleans(), min_size=len(name), max_size=len(name)))
    typed = "".join(c.upper() if flip else c for c, flip in zip(name, flips))
    if typed != name:  # a registered name as typed is found, not suggested
        assert _closest(typed, [spec.name for spec in mlc.list_methods()]) == name


# ------------------------------------------------------------------ the training data's name


def test_fit_says_what_it_used_and_predict_warns_on_its_own_training_rows(tmp_path):
    model = tmp_path / "m.mlcore"
    fit = cli(tmp_path, "fit", "br", "synthetic", "--out", model)
    assert fit.returncode == 0, fit.stderr
    assert "fitted br on synthetic: 500 rows x 20 features, 6 labels" in fit.stdout
    assert model_manifest(model)["data"] == "synthetic"
    again = cli(tmp_path, "predict", model, "synthetic", "--json")
    assert again.returncode == 0, again.stderr
    assert "synthetic is the data the model" in json.loads(again.stdout)["warning"]
    # ... and counted on stderr with the other warnings (one line, cut after the model file's path)
    assert "(UserWarning from predict 1); the first: synthetic is the data the model" in again.stderr, again.stderr


def test_predict_knows_a_whole_dataset_holds_the_training_part(tmp_path, datasets_dir):
    env = {"MULTILABEL_CORE_DATA": str(datasets_dir)}
    model = tmp_path / "scene.mlcore"
    fit = cli(tmp_path, "fit", "br", "scene-train", "--out", model, "--quiet", env=env)
    assert fit.returncode == 0, fit.stderr
    assert "1211 rows x 294 features, 6 labels" in fit.stdout
    whole = cli(tmp_path, "predict", model, "scene", env=env)
    assert whole.returncode == 0 and "warning: scene holds the rows of scene-train" in whole.stdout, whole.stderr
    test = cli(tmp_path, "predict", model, "scene-test", env=env)
    assert test.returncode == 0 and "warning" not in test.stdout + test.stderr, test.stderr


def _rewrite_manifest(path, change):
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    manifest = json.loads(members["manifest.json"])
    change(manifest)
    members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        for name in ("manifest.json", "estimator.skops"):
            archive.writestr(name, members[name])


def test_the_data_field_is_optional_and_checked(tmp_path):
    ds = make_correlated_multilabel(n_samples=80, n_features=5, n_labels=3, random_state=0)
    model = mlc.make_method("br").fit(ds.X, ds.Y)
    old = tmp_path / "old.mlcore"
    save_model(model, old)
    assert model_manifest(old)["data"] is None
    _rewrite_manifest(old, lambda manifest: manifest.pop("data"))  # as files written before the field
    assert "data" not in json.loads(zipfile.ZipFile(old).read("manifest.json"))
    np.testing.assert_array_equal(load_model(old).predict(ds.X), model.predict(ds.X))
    assert model_manifest(old)["data"] is None
    assert "warning" not in cli(tmp_path, "predict", old, "synthetic").stdout  # nothing known: nothing claimed

    bad = tmp_path / "bad.mlcore"
    save_model(model, bad, data="synthetic")
    _rewrite_manifest(bad, lambda manifest: manifest.update(data=5))
    for read in (load_model, model_manifest):
        with pytest.raises(ValueError, match="field 'data' is 5"):
            read(bad)
    with pytest.raises(ValueError, match="data must be the training data's name"):
        save_model(model, tmp_path / "x.mlcore", data=ds)


# ------------------------------------------------------------------ errors name the user's model


def test_a_wrong_width_names_the_method_not_the_wrapper(tmp_path):
    ds = make_correlated_multilabel(n_samples=80, n_features=5, n_labels=3, random_state=0)
    model = mlc.make_method("br", preprocess="standardize").fit(ds.X, ds.Y)
    with pytest.raises(ValueError) as excinfo:
        model.predict(ds.X[:, :4])
    message = str(excinfo.value)
    assert "Preprocessed" not in message
    assert "X has 4 features, but BinaryRelevance is expecting 5 features" in message and "method 'br'" in message
    path = tmp_path / "br.mlcore"
    save_model(model, path)
    narrow = tmp_path / "narrow.svm"
    from multilabel_core.datasets import write_libsvm

    write_libsvm(make_correlated_multilabel(n_samples=20, n_features=4, n_labels=3, random_state=1), narrow)
    run = cli(tmp_path, "predict", path, narrow)
    assert run.returncode == 2 and "Preprocessed" not in run.stderr
    assert f"the model {path} was fitted on 5" in run.stderr, run.stderr
