"""Labels that take one value in a training part: the option constant_labels (refuse / predict_constant).

On the outer split and on the inner folds of the search, in the records, the command line, the report and the
store; the ranking property of the constant labels' scores; the real yahoo-arts-mkml split whose label 17 is never
relevant in its first 2000 rows.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays

from multilabel_core.cli import main
from multilabel_core.datasets import Dataset, make_correlated_multilabel
from multilabel_core.experiments.config import Experiment, load_experiment
from multilabel_core.experiments.constant_labels import (
    PartialModel,
    check_constant_labels,
    constant_columns,
    constant_scores,
)
from multilabel_core.experiments.diagnostics import constant_label_counts
from multilabel_core.experiments.runner import run_experiment
from multilabel_core.experiments.search import fit_model
from multilabel_core.experiments.store import ConfigMismatchError, read_records
from multilabel_core.metrics import evaluate
from multilabel_core.plugins import make_method

N, N_TRAIN = 80, 60
NEVER, ALWAYS = 3, 4  # the added labels: never relevant in training, always relevant in training


def tiny(single_training_row: bool = False) -> Dataset:
    """Three learnable labels; label 3 never relevant in the first 60 rows (one relevant test row), label 4
    relevant in every training row and in half the test rows.  With ``single_training_row`` label 3 has
    instead one relevant row in training and none in the test part, and there is no label 4: the outer
    training part holds both values of every label, one inner training part does not."""
    base = make_correlated_multilabel(n_samples=N, n_features=4, n_labels=3, random_state=0)
    never = np.zeros(N, dtype=np.int8)
    if single_training_row:
        never[5] = 1
        return Dataset(X=base.X, Y=np.column_stack([base.Y, never]), name="tiny-inner")
    never[70] = 1
    always = np.ones(N, dtype=np.int8)
    always[N_TRAIN::2] = 0
    return Dataset(X=base.X, Y=np.column_stack([base.Y, never, always]), name="tiny")


def run(tmp_path, data, option, grid, folder="run", **kwargs):
    return run_experiment(
        ["br"], [data], "given", tmp_path / folder, protocol_params={"n_train": N_TRAIN}, grids={"br": {"C": grid}},
        inner_cv=2, progress=False, plots=False, constant_labels=option, **kwargs,
    )  # fmt: skip


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ the option
@pytest.mark.parametrize("bad", ["predict", "", None, 1])
def test_an_unknown_value_is_refused_naming_the_choices(bad):
    with pytest.raises(ValueError, match="constant_labels must be one of refuse, predict_constant"):
        check_constant_labels(bad)
    with pytest.raises(ValueError, match="constant_labels must be one of"):
        Experiment(methods=["br"], datasets=["synthetic"], constant_labels=bad)


def test_the_experiment_file_key_and_the_canonical_configuration(tmp_path):
    path = tmp_path / "experiment.toml"
    path.write_text('methods = ["br"]\ndatasets = ["synthetic"]\nconstant_labels = "predict_constant"\n')
    experiment = load_experiment(path)
    assert experiment.constant_labels == "predict_constant"
    data = experiment.load_datasets()
    assert experiment.canonical(data)["constant_labels"] == "predict_constant"
    # The default stays out of the hashed configuration: stores written before the option still resume.
    assert "constant_labels" not in load_experiment(path, constant_labels="refuse").canonical(data)


# ------------------------------------------------------------- the scores' ranking property
@given(
    arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 5)),
           elements=st.floats(allow_nan=False, allow_infinity=False)),
    arrays(np.int8, st.integers(1, 4), elements=st.integers(0, 1)),
)  # fmt: skip
def test_constant_scores_rank_below_or_above_every_learned_label_on_every_row(fitted, values):
    biggest = np.finfo(np.float64).max
    if (values == 0).any() and fitted.min() == -biggest or (values == 1).any() and fitted.max() == biggest:
        # No finite score lies beyond the end of the float range: refused, never a silent tie.
        with pytest.raises(ValueError, match="float range"):
            constant_scores(fitted, values)
        return
    scores = constant_scores(fitted, values)
    assert np.all(np.isfinite(scores))
    never, always = scores[values == 0], scores[values == 1]
    # One value per constant label for every row, below each row's every learned score, and below 0 (above for 1).
    assert np.all(never[:, None] < fitted.min(axis=1)[None, :]) and np.all(never < 0)
    assert np.all(always[:, None] > fitted.max(axis=1)[None, :]) and np.all(always > 0)


@pytest.mark.parametrize("extreme", [-np.finfo(np.float64).max / 2, np.finfo(np.float64).max / 2, -1e-300, 7.0])
def test_constant_scores_stay_finite_and_strict_near_the_float_range(extreme):
    fitted = np.array([[extreme, 0.5], [1.0, -2.0]])
    never, always = constant_scores(fitted, np.array([0, 1]))
    assert np.isfinite(never) and np.isfinite(always)
    assert never < fitted.min() and never < 0 and always > fitted.max() and always > 0


def test_a_partial_model_predicts_the_constant_columns_in_their_places():
    data = tiny()
    train, test = np.arange(N_TRAIN), np.arange(N_TRAIN, N)
    predictor, _ = fit_model(make_method("br", C=1.0), data.X, data.Y, train, None, "predict_constant")
    assert isinstance(predictor, PartialModel)
    assert predictor.fitted.tolist() == [0, 1, 2] and predictor.constant.tolist() == [NEVER, ALWAYS]
    scores, predictions = predictor.decision_function(data.X[test]), predictor.predict(data.X[test])
    assert scores.shape == predictions.shape == (N - N_TRAIN, 5)
    learned = scores[:, :3]
    assert np.all(scores[:, NEVER] < learned.min(axis=1)) and np.all(scores[:, ALWAYS] > learned.max(axis=1))
    assert np.all(predictions[:, NEVER] == 0) and np.all(predictions[:, ALWAYS] == 1)
    # The learned columns are the model's own: a fit on those columns alone gives them.
    alone = make_method("br", C=1.0).fit(data.X[train], data.Y[train][:, :3])
    np.testing.assert_array_equal(predictions[:, :3], alone.predict(data.X[test]))
    metrics = evaluate(data.Y[test], scores, predictions)
    assert all(np.isfinite(metrics[name]) for name in ("average_precision", "ranking_loss", "coverage", "macro_auc"))
    # "refuse" leaves the method's own refusal.
    with pytest.raises(ValueError, match=f"label column {NEVER} has one class only"):
        fit_model(make_method("br", C=1.0), data.X, data.Y, train, None, "refuse")


def test_every_label_constant_is_nothing_to_fit():
    Y = np.zeros((10, 2), dtype=np.int8)
    with pytest.raises(ValueError, match="all 2 label columns are constant"):
        fit_model(make_method("br"), np.ones((10, 3)), Y, np.arange(10), None, "predict_constant")
    assert constant_columns(np.array([[0, 1, 1], [0, 1, 0]]))[0].tolist() == [0, 1]


# --------------------------------------------------------------- the outer split
@pytest.mark.parametrize("grid", [[1.0], [0.1, 1.0]], ids=["fit", "search"])
def test_refuse_records_the_failed_split_and_its_constant_labels(tmp_path, grid):
    (record,) = run(tmp_path, tiny(), "refuse", grid).records
    assert record["status"] == "failed"
    assert record["failed_stage"] == ("fit" if len(grid) == 1 else "search")
    assert f"label column {NEVER} has one class only" in record["error"]
    constant = record["constant_labels"]
    assert (constant["option"], constant["indices"], constant["values"], constant["count"]) == (
        "refuse", [NEVER, ALWAYS], [0, 1], 2
    )
    assert constant["inner_folds"] == ([] if len(grid) == 1 else [[NEVER, ALWAYS], [NEVER, ALWAYS]])


@pytest.mark.parametrize("grid", [[1.0], [0.1, 1.0]], ids=["fit", "search"])
def test_predict_constant_fits_the_other_labels_and_records_which(tmp_path, grid):
    result = run(tmp_path, tiny(), "predict_constant", grid)
    (record,) = result.records
    assert record["status"] == "ok", record["error"]
    assert all(entry["status"] == "ok" for entry in record["search"])
    assert record["constant_labels"]["indices"] == [NEVER, ALWAYS] and record["constant_labels"]["count"] == 2
    assert record["metrics"]["macro_auc"] is not None and record["metrics"]["average_precision"] is not None
    # The option is in config.json; the records survive a resume, and the other value is another configuration.
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["config"]["constant_labels"] == "predict_constant"
    again = run(tmp_path, tiny(), "predict_constant", grid)
    assert (again.computed, again.resumed) == (0, 1)
    assert again.records[0]["constant_labels"] == record["constant_labels"]
    with pytest.raises(ConfigMismatchError, match="constant_labels"):
        run(tmp_path, tiny(), "refuse", grid)


# ------------------------------------------------------------------ the inner folds
def test_a_label_constant_only_in_an_inner_fold_follows_the_option(tmp_path):
    data = tiny(single_training_row=True)
    refused = run(tmp_path, data, "refuse", [0.1, 1.0], folder="refuse").records[0]
    predicted = run(tmp_path, data, "predict_constant", [0.1, 1.0], folder="predict").records[0]
    for record in (refused, predicted):
        assert record["constant_labels"]["count"] == 0, "the outer training part holds both values"
        assert sorted(record["constant_labels"]["inner_folds"]) == [[], [NEVER]]
    # refuse: as before the option, the fold without the label's relevant row fails every grid point.
    assert refused["status"] == "failed" and refused["failed_stage"] == "search"
    for entry in refused["search"]:
        errors = [error for error in entry["fold_errors"] if error is not None]
        assert len(errors) == 1 and f"label column {NEVER} has one class only" in errors[0]
    # predict_constant: every fold scores, and the final fit on the whole training part learns the label.
    assert predicted["status"] == "ok"
    assert all(entry["status"] == "ok" and None not in entry["fold_scores"] for entry in predicted["search"])
    (row,) = constant_label_counts([predicted])
    assert (row["n_labels"], row["n_splits_constant"], row["n_inner_folds"], row["n_inner_folds_constant"]) == (
        0, 0, 2, 1
    )


# ----------------------------------------------------------- the report and its counts
def test_the_report_counts_the_constant_labels_and_marks_the_metric_rows(tmp_path):
    result = run(tmp_path, tiny(), "predict_constant", [1.0])
    report = result.report["report"].read_text()
    section = report[report.index("## Constant labels") :]
    assert f"tiny: 2 label(s) constant in the training part of 1 of 1 split(s): {NEVER} (y3), {ALWAYS} (y4); " \
           "predicted at their training value" in section
    results = report[report.index("## Results") : report.index("## Runs")]
    assert "| average_precision ↑ † |" in results and "† tiny: 2 label(s)" in results
    summary = json.loads(result.report["summary_json"].read_text())
    (row,) = summary["constant_labels"]
    assert (row["dataset"], row["option"], row["labels"], row["n_splits_constant"]) == (
        "tiny", "predict_constant", [NEVER, ALWAYS], 1
    )


def test_a_report_without_constant_labels_says_so_and_marks_nothing(tmp_path):
    data = make_correlated_multilabel(n_samples=N, n_features=4, n_labels=3, random_state=0)
    result = run(tmp_path, data, "predict_constant", [1.0])
    report = result.report["report"].read_text()
    assert "No label took a single value in a training part" in report and "†" not in report


# --------------------------------------------------------------------- the CLI
def test_the_cli_refuses_an_unknown_value_in_one_line(capsys, tmp_path):
    code, _, err = run_cli(capsys, "compare", "br", "--data", "synthetic", "--constant-labels", "predict",
                           "--out", tmp_path / "run")  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and "constant_labels must be one of refuse, predict_constant" in err
    assert not (tmp_path / "run").exists()


def test_yahoo_first_2000_rows_run_under_predict_constant_with_label_17_reported(capsys, tmp_path, datasets_dir):
    # docs/experiments.md: label 17 has its one relevant row among the last 3000 rows.
    code, out, err = run_cli(capsys, "compare", "br", "--data", "yahoo-arts-mkml", "--data-home", datasets_dir,
                             "--protocol", "given", "--protocol-param", "n_train=2000", "--grid", "C=1",
                             "--constant-labels", "predict_constant", "--out", tmp_path / "run", "--no-plots",
                             "--quiet")  # fmt: skip
    assert code == 0, err
    assert ("labels constant in a training part: yahoo-arts-mkml: 1 label(s) constant in the training part of 1 of 1 "
            "split(s): 17 (label17); predicted at their training value") in out
    (record,) = read_records(tmp_path / "run")
    assert record["status"] == "ok" and (record["n_train"], record["n_test"]) == (2000, 3000)
    assert record["constant_labels"]["indices"] == [17] and record["constant_labels"]["values"] == [0]
    assert 0.0 < record["metrics"]["average_precision"] < 1.0
    report = (tmp_path / "run" / "report.md").read_text()
    assert "| average_precision ↑ † |" in report and "17 (label17)" in report
