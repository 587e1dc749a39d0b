"""The mlcore command line: every subcommand, JSON output, one-line errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from multilabel_core.cli import main, parse_param


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_parse_param_literals():
    assert parse_param("C=0.5") == ("C", 0.5)
    assert parse_param("kernel=rbf") == ("kernel", "rbf")
    assert parse_param("gamma=None") == ("gamma", None)
    assert parse_param("fit_intercept=false") == ("fit_intercept", False)
    assert parse_param("grid=[1, 2]") == ("grid", [1, 2])


def test_methods_lists_br_with_citation(capsys):
    payload = run_json(capsys, "methods")
    by_name = {m["name"]: m for m in payload["methods"]}
    assert "br" in by_name
    assert by_name["br"]["citation"]
    assert by_name["br"]["plugin"] == "br"


def test_describe_yeast_matches_mlrl_table_1(capsys, datasets_dir):
    payload = run_json(capsys, "describe", "yeast", "--data-home", str(datasets_dir))
    assert payload["n_samples"] == 2417
    assert payload["n_labels"] == 14
    assert round(payload["label_cardinality"], 3) == 4.237


def test_evaluate_json_has_per_fold_and_mean(capsys):
    payload = run_json(capsys, "evaluate", "br", "synthetic", "--cv", "3", "--param", "C=0.5", "--compact")
    assert payload["params"] == {"C": 0.5}
    assert len(payload["average_precision"]) == 3
    assert 0.5 < payload["mean"]["average_precision"] <= 1.0


def test_fit_then_predict_roundtrip(capsys, tmp_path):
    model = tmp_path / "br.joblib"
    code, _, err = run(capsys, "fit", "br", "synthetic", "--out", str(model))
    assert code == 0, err
    preds = tmp_path / "pred.csv"
    payload = run_json(capsys, "predict", str(model), "synthetic", "--out", str(preds))
    assert payload["metrics"]["average_precision"] > 0.5
    lines = preds.read_text().splitlines()
    assert len(lines) == payload["n_samples"] + 1  # header of label names


def test_demo_prints_metrics_and_relations(capsys):
    code, out, err = run(capsys, "demo")
    assert code == 0, err
    assert not re.search(r"\.py:\d+: \w*Warning", err), "the demo printed a Python warning:\n" + err
    assert "br" in out and "average_precision" in out
    assert "label correlation of the generating covariance" in out
    # The showcase runs settings that converge (DEMO_SETTINGS); the warning summary is the last line.
    assert "stopped short of convergence" not in out, out
    assert re.match(r"(warnings: none|\d+ other warning\(s\))", out.rstrip().splitlines()[-1]), out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["evaluate", "no_such_method", "synthetic"], "no_such_method"),
        (["evaluate", "br", "synthetic", "--param", "C=-1"], "C"),
        (["evaluate", "br", "synthetic", "--param", "not_a_param=1"], "not_a_param"),
        (["describe", "/nonexistent/data.arff"], "data.arff"),
        (["predict", "/nonexistent/model.joblib", "synthetic"], "model.joblib"),
        (["evaluate", "br", "synthetic", "--param", "oops"], "NAME=VALUE"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("mlcore: error:")
    assert needle in err
    assert "Traceback" not in err


def test_console_script_runs_without_traceback(tmp_path):
    """The installed `mlcore` entry point, as a user calls it."""
    exe = Path(sys.executable).with_name("mlcore")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "multilabel_core.cli"]
    ok = subprocess.run([*cmd, "methods", "--json"], capture_output=True, text=True, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "br" in {m["name"] for m in json.loads(ok.stdout)["methods"]}
    bad = subprocess.run([*cmd, "describe", "nowhere_dataset"], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "MULTILABEL_CORE_DATA": str(tmp_path)})
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr and "nowhere_dataset" in bad.stderr


def test_fit_scales_on_request_saves_the_scaler_and_says_so(capsys, tmp_path, datasets_dir):
    """Raw emotions features span five orders of magnitude: fit says so, and standardises when asked."""
    model = tmp_path / "br.mlcore"
    code, out, err = run(capsys, "fit", "br", "emotions-train", "--data-home", str(datasets_dir), "--out", str(model),
                         "--preprocess", "standardize")
    assert code == 0, err
    assert "features: standardize" in out and "certificate: converged" in out
    assert not err, err  # converges: no summary line of unfinished fits
    payload = run_json(capsys, "predict", str(model), "emotions-test", "--data-home", str(datasets_dir))
    assert payload["preprocess"] == "standardize"
    assert payload["metrics"]["micro_f1"] > 0.55

    raw = tmp_path / "raw.mlcore"
    code, out, err = run(capsys, "fit", "br", "emotions-train", "--data-home", str(datasets_dir), "--out", str(raw))
    assert code == 0 and "features: as given" in out  # the default: X as given, as in the Python API
    assert "warning: emotions-train: the features' standard deviations span" in out
    assert "FeatureScaleWarning" in err and "stopped short of convergence" in err  # counted, not hidden


def test_predict_out_writes_row_ids_predictions_and_scores(capsys, tmp_path):
    import csv

    model = tmp_path / "br.mlcore"
    assert run(capsys, "fit", "br", "synthetic", "--out", str(model))[0] == 0
    out = tmp_path / "pred.csv"
    payload = run_json(capsys, "predict", str(model), "synthetic", "--out", str(out), "--scores")
    rows = list(csv.reader(out.open()))
    header, body = rows[0], rows[1:]
    labels = [name for name in header[1:] if not name.startswith("score:")]
    assert header == ["row"] + labels + [f"score:{name}" for name in labels]
    assert len(body) == payload["n_samples"]
    assert [int(r[0]) for r in body] == list(range(len(body)))
    L = len(labels)
    for r in body:
        predictions = [int(v) for v in r[1 : 1 + L]]
        scores = [float(v) for v in r[1 + L :]]
        assert predictions == [int(s > 0) for s in scores]  # the 0/1 columns are the scores' signs

    plain = tmp_path / "plain.csv"
    run_json(capsys, "predict", str(model), "synthetic", "--out", str(plain))
    assert list(csv.reader(plain.open()))[0] == ["row"] + labels


def test_scores_without_out_is_refused_in_one_line(capsys, tmp_path):
    model = tmp_path / "br.mlcore"
    assert run(capsys, "fit", "br", "synthetic", "--out", str(model))[0] == 0
    code, _, err = run(capsys, "predict", str(model), "synthetic", "--scores")
    assert code == 2 and err.count("\n") == 1 and "--out" in err


def test_evaluate_names_the_scaling_it_applied(capsys):
    code, out, err = run(capsys, "evaluate", "br", "synthetic", "--cv", "3", "--preprocess", "standardize")
    assert code == 0, err
    assert "features: standardize, fitted on each training fold only" in out
    payload = run_json(capsys, "evaluate", "br", "synthetic", "--cv", "3")
    assert payload["preprocess"] is None
    assert run_json(capsys, "evaluate", "br", "synthetic", "--cv", "3", "--preprocess", "none")["preprocess"] is None


def test_datasets_lists_every_registered_dataset_and_where_it_is(capsys, tmp_path, monkeypatch, datasets_dir):
    import multilabel_core as mlc

    monkeypatch.delenv("MULTILABEL_CORE_DATA", raising=False)
    monkeypatch.setenv("MULTILABEL_CORE_CACHE", str(tmp_path / "cache"))
    payload = run_json(capsys, "datasets")
    names = [r["name"] for r in payload["datasets"]]
    assert names == sorted(spec.name for spec in mlc.list_datasets())
    assert {"emotions", "enron", "bibtex", "cal500", "yeast-train"} <= set(names)
    assert all(r["location"] == "not downloaded" and not r["cached"] for r in payload["datasets"])

    code, out, err = run(capsys, "datasets", "--data-home", str(datasets_dir))
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("emotions "))
    assert row.split()[1:5] == ["593", "72", "6", "1.868"] and "emotions-train+emotions-test" in row and "data_home" in row
    assert f"{len(names)} registered, {len(names)} found by name here" in out
