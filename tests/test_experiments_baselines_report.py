"""Reports test every method against the best ecosystem baseline of each dataset, and state the preprocessing."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.experiments.report import write_report
from multilabel_core.experiments.runner import run_experiment
from multilabel_core.experiments.stats import (
    MARKER_LOSS,
    MARKER_WIN,
    compare_to_best_baseline,
    compare_to_reference,
    ecosystem_baselines,
)

NOISE = np.array([0.004, -0.003, 0.002, -0.001, -0.002])
# Mean average precision of each method (ours "mlrl", the paper's baseline "br", two ecosystem
# baselines); on emotions ovr_svc is the best baseline, on yeast mlknn.
MEANS = {
    "emotions": {"mlrl": 0.81, "br": 0.78, "ovr_svc": 0.82, "mlknn": 0.77},
    "yeast": {"mlrl": 0.78, "br": 0.745, "ovr_svc": 0.76, "mlknn": 0.775},
}


def record(method, dataset, split, value, preprocess="standardize"):
    return {
        "method": method,
        "dataset": dataset,
        "protocol": "kfold",
        "split": split,
        "preprocess": preprocess,
        "status": "ok",
        "error": None,
        "params": {},
        "selection_metric": "average_precision",
        "metrics": {"average_precision": value, "ranking_loss": 1.0 - value - 0.1 * (method == "br")},
        "fit_time": 0.1,
        "predict_time": 0.01,
        "certificates": [],
        "converged": None,
        "warnings": [],
    }


def make_records(means=MEANS, **kwargs):
    return [
        record(method, dataset, split, mean + NOISE[split] * (1 + 0.5 * (method == "mlrl")), **kwargs)
        for dataset, by_method in means.items()
        for method, mean in by_method.items()
        for split in range(5)
    ]


RECORDS = make_records()


def test_ecosystem_baselines_are_the_methods_of_the_baselines_family():
    assert ecosystem_baselines(["mlrl", "br", "ovr_svc", "mlknn", "classifier_chain", "mine"]) == [
        "ovr_svc",
        "mlknn",
        "classifier_chain",
    ]


def test_the_best_baseline_has_the_best_mean_selection_metric_per_dataset():
    baseline = compare_to_best_baseline(RECORDS)
    assert baseline.baselines == ("ovr_svc", "mlknn") and baseline.selection_metric == "average_precision"
    assert {d: m for d, (m, _) in baseline.best.items()} == {"emotions": "ovr_svc", "yeast": "mlknn"}
    assert baseline.best["yeast"][1] == pytest.approx(
        np.mean(
            [r["metrics"]["average_precision"] for r in RECORDS if r["method"] == "mlknn" and r["dataset"] == "yeast"]
        )
    )
    # with a lower-is-better selection metric the lowest mean wins: br's ranking loss is shifted down by 0.1
    by_loss = compare_to_best_baseline(RECORDS, baselines=["br", "mlknn"], selection_metric="ranking_loss")
    assert {d: m for d, (m, _) in by_loss.best.items()} == {"emotions": "br", "yeast": "br"}


def test_verdicts_are_those_of_the_best_baseline_as_reference_method():
    baseline = compare_to_best_baseline(RECORDS, alpha=0.05)
    assert baseline.methods == ["mlrl", "br"] and baseline.reference_of("yeast") == "mlknn"
    for dataset, (best, _) in baseline.best.items():
        one = [r for r in RECORDS if r["dataset"] == dataset and r["method"] in (best, "mlrl", "br")]
        expected = compare_to_reference(one, best, alpha=0.05)
        assert [v for v in baseline.verdicts if v.dataset == dataset] == list(expected.verdicts)
    emotions = baseline.verdict("emotions", "br", "average_precision")
    assert emotions.outcome == "win" and emotions.marker == MARKER_WIN, "ovr_svc is clearly better than br"
    assert baseline.verdict("yeast", "mlrl", "average_precision").test.mean_difference < 0


def test_ties_go_to_the_first_baseline_and_nothing_to_compare_gives_none():
    tied = make_records({"emotions": {"mlrl": 0.8, "mlknn": 0.79, "ovr_svc": 0.79}})
    assert compare_to_best_baseline(tied).best["emotions"][0] == "mlknn"
    assert compare_to_best_baseline([r for r in RECORDS if r["method"] in ("mlrl", "br")]) is None
    assert compare_to_best_baseline([r for r in RECORDS if r["method"] in ("ovr_svc", "mlknn")]) is None
    best = compare_to_best_baseline(RECORDS, baselines=["br"]).best
    assert best == {"emotions": ("br", pytest.approx(0.78)), "yeast": ("br", pytest.approx(0.745))}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    paths = write_report(RECORDS, out, reference_method="mlrl", plots=False)
    return paths, paths["report"].read_text(encoding="utf-8")


def test_report_marks_the_best_baseline_and_tests_against_it(report):
    _, text = report
    assert "| metric | mlrl (reference) | br | ovr_svc (best baseline) | mlknn |" in text
    assert "| metric | mlrl (reference) | br | ovr_svc | mlknn (best baseline) |" in text
    section = text[text.index("## Against the best ecosystem baseline") :]
    assert "`ovr_svc`, `mlknn`" in section
    assert "| emotions | ovr_svc | 0.8200 |" in section and "| yeast | mlknn | 0.7750 |" in section
    assert "### emotions: against ovr_svc" in section and "### yeast: against mlknn" in section
    assert "| metric | ovr_svc (best baseline) | mlrl | br |" in section
    # mlrl and br are both significantly worse than ovr_svc on emotions (differences much larger than the noise)
    assert (
        f"| average_precision ↑ | 0.8200 ± 0.0029 | 0.8100 ± 0.0044 {MARKER_WIN} | 0.7800 ± 0.0029 {MARKER_WIN} |"
        in section
    )
    assert f"| average_precision ↑ | 0.7750 ± 0.0029 | 0.7800 ± 0.0044 {MARKER_LOSS} |" in section
    baseline = compare_to_best_baseline(RECORDS)
    counts = baseline.win_tie_loss()["Total"]
    assert "### Win/tie/loss of the best ecosystem baseline" in section
    assert f"| Total | {counts['mlrl']} | {counts['br']} |" in section


def test_summary_files_carry_the_baseline_verdicts(report):
    paths, _ = report
    baseline = compare_to_best_baseline(RECORDS)
    with paths["summary_csv"].open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        verdict = baseline.verdict(row["dataset"], row["method"], row["metric"])
        assert row["best_baseline"] == baseline.reference_of(row["dataset"])
        assert row["baseline_outcome"] == (verdict.outcome if verdict else "")
        assert row["baseline_n_pairs"] == (str(verdict.test.n) if verdict else "")
    document = json.loads(paths["summary_json"].read_text(encoding="utf-8"))["best_baseline"]
    assert document["best"]["yeast"]["method"] == "mlknn" and document["selection_metric"] == "average_precision"
    assert document["baselines"] == ["ovr_svc", "mlknn"]
    assert len(document["comparisons"]) == len(baseline.verdicts)
    assert document["win_tie_loss"]["Total"]["br"] == baseline.win_tie_loss()["Total"]["br"]._asdict()


def test_report_states_the_preprocessing(tmp_path):
    text = write_report(RECORDS, tmp_path / "a", plots=False)["report"].read_text(encoding="utf-8")
    assert "Features: preprocessed with `standardize`" in text and "training part of each split only" in text
    plain = write_report(make_records(preprocess=None), tmp_path / "b", plots=False)["report"].read_text()
    assert "Features: used as given (no preprocessing)." in plain
    older = [{k: v for k, v in r.items() if k != "preprocess"} for r in RECORDS]
    assert "Features:" not in write_report(older, tmp_path / "c", plots=False)["report"].read_text()


def test_without_baselines_the_report_has_no_baseline_section(tmp_path):
    ours = [r for r in RECORDS if r["method"] in ("mlrl", "br")]
    paths = write_report(ours, tmp_path, reference_method="mlrl", plots=False)
    assert "best ecosystem baseline" not in paths["report"].read_text(encoding="utf-8")
    assert json.loads(paths["summary_json"].read_text())["best_baseline"] is None


def test_a_run_with_baselines_reports_the_comparison(tmp_path):
    data = make_correlated_multilabel(n_samples=90, n_features=6, n_labels=3, random_state=0)
    result = run_experiment(
        ["br", "ovr_svc", "mlknn"], [data], "kfold", tmp_path / "run", protocol_params={"n_splits": 3},
        grids={"br": {"C": [1.0]}, "ovr_svc": {"C": [1.0]}, "mlknn": {"k": [5]}}, preprocess="standardize",
        reference_method="br", progress=False, plots=False,
    )  # fmt: skip
    text = result.report["report"].read_text(encoding="utf-8")
    assert "## Win/tie/loss of br" in text and "## Against the best ecosystem baseline" in text
    assert "Features: preprocessed with `standardize`" in text
    best = compare_to_best_baseline(result.records).reference_of(data.name)
    assert best in ("ovr_svc", "mlknn") and f"### {data.name}: against {best}" in text
