"""The runner selects by the measure the user names, and says when a chosen model predicts no label.

The scenario of held-back data: a model whose scores rank the labels well but are all negative
predicts no label (micro-F1 = macro-F1 = 0) while its average precision is as good as ever, so an
AP-driven search may choose it.  ``Shifted`` is such a model on demand: ridge scores minus ``shift``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from multilabel_core.cli import diagnose, failure_lines, failure_summary, main
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.experiments.config import FILE_KEYS, Experiment, load_experiment
from multilabel_core.experiments.report import no_label_models, no_label_shares
from multilabel_core.experiments.runner import evaluate_split, run_experiment
from multilabel_core.metrics import METRICS

DATA = make_correlated_multilabel(n_samples=120, n_features=5, n_labels=3, random_state=3)


class Shifted(BaseEstimator):
    """Least-squares scores of the {-1, 1} labels, minus ``shift``: the shift moves no ranking, only the signs."""

    def __init__(self, shift=0.0):
        self.shift = shift

    def fit(self, X, Y):
        A = np.column_stack([X, np.ones(len(X))])
        self.coef_ = np.linalg.lstsq(A, 2.0 * Y - 1.0, rcond=None)[0]
        return self

    def decision_function(self, X):
        return np.column_stack([X, np.ones(len(X))]) @ self.coef_ - self.shift

    def predict(self, X):
        return (self.decision_function(X) > 0).astype(np.int64)


def compare(tmp_path, name, **settings):
    settings = {"protocol_params": {"n_splits": 3}, "inner_cv": 2, "progress": False, "plots": False, **settings}
    return run_experiment({"shifted": Shifted()}, [DATA], "kfold", tmp_path / name,
                          grids={"shifted": {"shift": [1000.0, 0.0]}}, **settings)  # fmt: skip


# ---------------------------------------------------------------- --select
def test_an_ap_search_can_choose_a_model_without_labels_and_a_micro_f1_search_does_not(tmp_path):
    by_ap = compare(tmp_path, "ap")  # the default: average precision cannot tell the two shifts apart
    by_f1 = compare(tmp_path, "f1", select="micro_f1")
    for record in by_ap.records:
        scores = [entry["score"] for entry in record["search"]]
        assert scores[0] == pytest.approx(scores[1], abs=1e-12), "the shift moves no ranking"
        assert record["params"] == {"shift": 1000.0} and record["n_predicted_labels"] == 0
        assert record["n_no_label_rows"] == record["n_test"] and record["metrics"]["micro_f1"] == 0.0
    for record in by_f1.records:
        assert record["selection_metric"] == "micro_f1" and record["params"] == {"shift": 0.0}
        best = max(record["search"], key=lambda entry: entry["score"])
        assert best["params"] == record["params"] and record["n_predicted_labels"] > 0
    assert no_label_models(by_f1.records) == []


def test_select_is_the_file_key_and_old_files_still_load(tmp_path):
    old = tmp_path / "old.toml"
    old.write_text('methods = ["br"]\ndatasets = ["synthetic"]\nselection_metric = "ranking_loss"\n')
    assert load_experiment(old).selection_metric == "ranking_loss"
    assert load_experiment(old, select="macro_f1").selection_metric == "macro_f1", "the command line wins"
    new = tmp_path / "new.toml"
    new.write_text('methods = ["br"]\ndatasets = ["synthetic"]\nselect = "micro_f1"\ngrid_extensions = 1\n')
    loaded = load_experiment(new)
    assert (loaded.selection_metric, loaded.grid_extensions) == ("micro_f1", 1)
    bare = tmp_path / "bare.toml"
    bare.write_text('methods = ["br"]\ndatasets = ["synthetic"]\n')
    assert load_experiment(bare).selection_metric == "average_precision"
    both = tmp_path / "both.toml"
    both.write_text('methods = ["br"]\ndatasets = ["synthetic"]\nselect = "micro_f1"\nselection_metric = "macro_f1"\n')
    with pytest.raises(ValueError, match="select and selection_metric"):
        load_experiment(both)
    assert {"select", "selection_metric", "grid_extensions"} <= set(FILE_KEYS)


def test_an_unknown_selection_metric_is_refused_listing_the_metrics(tmp_path, capsys):
    with pytest.raises(ValueError, match="unknown metric 'accuracy'") as caught:
        Experiment(methods=["br"], datasets=["synthetic"], selection_metric="accuracy")
    assert all(name in str(caught.value) for name in METRICS)
    with pytest.raises(ValueError, match="select and selection_metric"):
        run_experiment(["br"], ["synthetic"], "kfold", tmp_path / "x", select="micro_f1", selection_metric="macro_f1")
    code = main(["compare", "br", "--data", "synthetic", "--out", str(tmp_path / "y"), "--select", "accuracy"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "micro_f1" in err and "average_precision" in err
    assert not (tmp_path / "y").exists(), "refused before any store is written"


def test_a_configuration_without_select_hashes_as_before():
    data = {"synthetic": make_correlated_multilabel(random_state=0)}
    plain = Experiment(methods=["br"], datasets=["synthetic"]).canonical(data)
    named = load_experiment(methods=["br"], datasets=["synthetic"], select="average_precision").canonical(data)
    assert plain == named and plain["selection_metric"] == "average_precision"
    assert "select" not in plain


# ------------------------------------------------------------- no-label models
def test_the_counts_are_those_of_the_predictions():
    train, test = np.arange(80), np.arange(80, 120)
    for shift in (0.0, 0.4, 1000.0):
        outcome = evaluate_split(Shifted(), {"shift": shift}, DATA.X, DATA.Y, train, test)
        predictions = Shifted(shift).fit(DATA.X[train], DATA.Y[train]).predict(DATA.X[test])
        assert outcome["n_no_label_rows"] == int((predictions.sum(axis=1) == 0).sum())
        assert outcome["n_predicted_labels"] == int(predictions.sum())
    assert outcome["n_no_label_rows"] == len(test) and outcome["metrics"]["macro_f1"] == 0.0
    failed = evaluate_split(Shifted(), {"shift": "not a number"}, DATA.X, DATA.Y, train, test)
    assert failed["status"] == "failed" and failed["n_no_label_rows"] is None


def test_a_model_predicting_no_label_is_flagged_like_a_failed_fit(tmp_path):
    result = compare(tmp_path, "ap")
    n = len(result.records)
    text = result.report["report"].read_text()
    heading = text.split("## Results")[0]
    assert f"**Chosen models predicting no label: {n}**" in heading
    failures = text.split("## Failures\n", 1)[1]
    assert f"**Chosen models predicting no label: {n}**" in failures
    assert failures.count("| shifted | synthetic |") == n
    shares = no_label_shares(result.records)
    assert shares == [{
        "dataset": "synthetic", "method": "shifted", "n_splits": n, "mean": 1.0, "min": 1.0, "max": 1.0,
        "shares": [{"split": s, "share": 1.0} for s in range(n)], "n_no_label_models": n,
    }]  # fmt: skip
    assert f"**no label** {n}" in text.split("## Predictions without a label")[1].split("##")[0]
    document = json.loads(result.report["summary_json"].read_text())
    assert document["n_no_label_models"] == n and document["no_label"][0]["mean"] == 1.0
    diagnosis = diagnose(result.records)
    assert failure_summary(diagnosis).endswith(f"chosen models predicting no label: {n}")
    assert sum("predicts no label on the test part" in line for line in failure_lines(diagnosis)) == n


def test_the_share_is_reported_per_split_for_a_usable_model(tmp_path):
    result = compare(tmp_path, "f1", select="micro_f1")
    (row,) = no_label_shares(result.records)
    expected = [r["n_no_label_rows"] / r["n_test"] for r in result.records]
    assert [entry["share"] for entry in row["shares"]] == expected
    assert row["mean"] == pytest.approx(np.mean(expected)) and row["n_no_label_models"] == 0
    assert "Chosen models predicting no label: 0." in result.report["report"].read_text()


def test_the_command_line_prints_the_count_and_the_metric(tmp_path, capsys):
    code = main(["compare", "br", "--data", "synthetic", "--protocol", "kfold", "--protocol-param", "n_splits=2",
                 "--inner-cv", "2", "--grid", "C=0.1,1", "--select", "macro_f1", "--no-plots", "--quiet",
                 "--out", str(tmp_path / "cli")])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "selected by macro_f1, grid extensions up to 3 per parameter" in out
    assert "chosen models predicting no label: 0" in out
