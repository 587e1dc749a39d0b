"""Experiment statistics: summaries, paired t-tests against scipy, win/tie/loss, reference values."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from multilabel_core.experiments.stats import (
    MARKER_LOSS,
    MARKER_WIN,
    ReferenceValue,
    WinTieLoss,
    check_records,
    compare_to_reference,
    paired_ttest,
    read_reference,
    reference_deltas,
    run_summary,
    summarize,
)


def record(method, dataset, split, metrics=None, *, status="ok", **extra):
    """A record as the runner writes it (docs/experiments.md), with the given metric values."""
    failed = status == "failed"
    return {
        "config_hash": "0" * 64,
        "method": method,
        "dataset": dataset,
        "protocol": "kfold",
        "split": split,
        "status": status,
        "error": "RuntimeError: solver diverged" if failed else None,
        "params": {"C": 1.0},
        "search": [],
        "selection_metric": "average_precision",
        "metrics": {} if failed else dict(metrics or {}),
        "fit_time": 0.5 + split,
        "predict_time": 0.01 * (split + 1),
        "n_train": 90,
        "n_test": 10,
        "n_labels": 3,
        "label_names": ["a", "b", "c"],
        "certificates": [],
        "converged": None,
        "label_correlation": None,
        "warnings": [],
        **extra,
    }


def runs(method, dataset, **metric_values):
    """One record per split, metric name -> the list of its values over the splits."""
    n = len(next(iter(metric_values.values())))
    return [record(method, dataset, k, {m: v[k] for m, v in metric_values.items()}) for k in range(n)]


# Hand-made paired samples: ten folds of two methods, as in a 10-fold CV table.
A = np.array([0.812, 0.795, 0.830, 0.801, 0.790, 0.822, 0.815, 0.808, 0.799, 0.826])
B = np.array([0.790, 0.788, 0.801, 0.795, 0.781, 0.800, 0.806, 0.782, 0.793, 0.810])
NOISE = np.array([0.004, -0.003, 0.002, -0.001, 0.003, -0.004, 0.001, 0.000, -0.002, 0.002])


# --------------------------------------------------------------------- paired t-test
@pytest.mark.parametrize("a, b", [(A, B), (B, A), (A, A + NOISE), ([1.0, 2.0, 4.0], [1.5, 1.0, 2.0])])
def test_paired_ttest_agrees_with_scipy_and_the_formula(a, b):
    result = paired_ttest(a, b)
    expected = scipy_stats.ttest_rel(a, b)
    assert result.statistic == pytest.approx(expected.statistic, rel=1e-12)
    assert result.pvalue == pytest.approx(expected.pvalue, rel=1e-12)
    d = np.asarray(a) - np.asarray(b)
    t = d.mean() / (d.std(ddof=1) / np.sqrt(d.size))
    assert result.statistic == pytest.approx(t, rel=1e-10)
    assert result.pvalue == pytest.approx(2 * scipy_stats.t.sf(abs(t), d.size - 1), rel=1e-10)
    assert result.n == d.size and result.mean_difference == pytest.approx(d.mean())


def test_paired_ttest_known_value():
    # d = (1, 2, 3, 4, 5): mean 3, sd sqrt(2.5), t = 3 / (sqrt(2.5) / sqrt(5)) = 3 sqrt(2), 4 df.
    # With 4 df, P(|T| < t) = sin(theta) (1 + cos(theta)^2 / 2) for tan(theta) = t / 2, so
    # sin(theta)^2 = 9/11, cos(theta)^2 = 2/11 and p = 1 - 36 / (11 sqrt(11)).
    result = paired_ttest([2, 4, 6, 8, 10], [1, 2, 3, 4, 5])
    assert result.statistic == pytest.approx(3 * np.sqrt(2))
    assert result.pvalue == pytest.approx(1 - 36 / (11 * np.sqrt(11)), rel=1e-9)


def test_identical_results_are_a_tie_with_p_one():
    assert paired_ttest(A, A.copy())[:2] == (0.0, 1.0)


@pytest.mark.parametrize("shift", [0.1, -0.25])
def test_a_constant_shift_has_infinite_statistic_and_p_zero(shift):
    result = paired_ttest(B + shift, B)  # differences equal up to rounding
    assert result.statistic == math.copysign(math.inf, shift)
    assert result.pvalue == 0.0
    assert result.mean_difference == pytest.approx(shift)


def test_fewer_than_two_pairs_has_no_test():
    one = paired_ttest([0.5], [0.4])
    assert math.isnan(one.statistic) and math.isnan(one.pvalue) and one.n == 1
    none = paired_ttest([], [])
    assert none.n == 0 and math.isnan(none.mean_difference)


@pytest.mark.parametrize(
    "a, b, message",
    [([1, 2], [1, 2, 3], "equal length"), ([[1, 2]], [[1, 2]], "1-D"), ([1, np.nan], [1, 2], "finite")],
)
def test_paired_ttest_rejects_bad_samples(a, b, message):
    with pytest.raises(ValueError, match=message):
        paired_ttest(a, b)


@given(
    st.lists(st.floats(0, 1), min_size=2, max_size=12).flatmap(
        lambda a: st.tuples(st.just(a), st.lists(st.floats(0, 1), min_size=len(a), max_size=len(a)))
    )
)
def test_swapping_the_samples_negates_the_statistic(pair):
    a, b = pair
    forward, backward = paired_ttest(a, b), paired_ttest(b, a)
    assert forward.pvalue == pytest.approx(backward.pvalue, nan_ok=True)
    assert forward.statistic == pytest.approx(-backward.statistic, nan_ok=True)
    assert 0.0 <= forward.pvalue <= 1.0


# -------------------------------------------------------------------- summaries
def test_summarize_means_and_sample_std_over_splits():
    records = runs("mlrl", "emotions", average_precision=A, hamming_loss=1 - A) + runs(
        "br", "emotions", average_precision=B, hamming_loss=1 - B
    )
    rows = summarize(records)
    assert [(r["method"], r["metric"]) for r in rows] == [
        ("mlrl", "hamming_loss"),
        ("mlrl", "average_precision"),
        ("br", "hamming_loss"),
        ("br", "average_precision"),
    ]  # methods in the run's order, metrics in METRICS' order
    mlrl_ap = rows[1]
    assert mlrl_ap["mean"] == pytest.approx(A.mean())
    assert mlrl_ap["std"] == pytest.approx(A.std(ddof=1))
    assert mlrl_ap["n"] == 10 and mlrl_ap["n_failed"] == 0 and mlrl_ap["greater_is_better"]
    assert rows[0]["greater_is_better"] is False
    assert mlrl_ap["fit_time"] == pytest.approx(np.mean(0.5 + np.arange(10)))
    assert mlrl_ap["predict_time"] == pytest.approx(np.mean(0.01 * np.arange(1, 11)))


def test_summarize_leaves_out_failures_and_missing_values():
    records = runs("br", "scene", average_precision=[0.7, 0.8, 0.9], macro_auc=[0.6, None, 0.8])
    records.append(record("br", "scene", 3, status="failed"))
    rows = {r["metric"]: r for r in summarize(records)}
    assert rows["average_precision"]["n"] == 3 and rows["average_precision"]["n_failed"] == 1
    assert rows["macro_auc"]["n"] == 2 and rows["macro_auc"]["mean"] == pytest.approx(0.7)
    assert rows["average_precision"]["fit_time"] == pytest.approx(1.5)  # failed splits have no time
    single = summarize(runs("br", "scene", average_precision=[0.7]))[0]
    assert single["n"] == 1 and math.isnan(single["std"])


def test_summarize_selected_metrics_and_unknown_names():
    records = runs("br", "scene", average_precision=[0.7, 0.8], hamming_loss=[0.1, 0.2])
    assert [r["metric"] for r in summarize(records, metrics=["hamming_loss"])] == ["hamming_loss"]
    with pytest.raises(ValueError, match="unknown metric"):
        summarize(records, metrics=["accuracy"])


@pytest.mark.parametrize(
    "bad, message",
    [
        ([["br"]], "not a mapping"),
        ([{"method": "br", "dataset": "d", "split": 0}], "lacks"),
        ([record("br", "d", 0) | {"status": "done"}], "status"),
        ([record("br", "d", 0), record("br", "d", 0)], "two records"),
    ],
)
def test_check_records_rejects_malformed_records(bad, message):
    with pytest.raises(ValueError, match=message):
        check_records(bad)


def test_run_summary_counts_convergence_and_largest_gaps():
    certificate = {"primal": 2.0, "dual": 1.5, "gap": 0.5, "kkt_violation": 1e-3, "n_iter": 10, "time": 0.1,
                   "converged": True, "solver": "smo", "statistics": {}, "relative_gap": 0.25}  # fmt: skip
    no_dual = certificate | {"dual": None, "gap": None, "relative_gap": None, "converged": False}
    records = [
        record(
            "mlrl",
            "d",
            0,
            {"average_precision": 0.8},
            certificates=[certificate, certificate | {"gap": 2.0}],
            converged=True,
        ),
        record(
            "mlrl",
            "d",
            1,
            {"average_precision": 0.8},
            certificates=[no_dual],
            converged=False,
            warnings=["ConvergenceWarning: x"],
        ),
        record("mlrl", "d", 2, {"average_precision": 0.8}),
        record("mlrl", "d", 3, status="failed"),
        record("br", "d", 0, {"average_precision": 0.7}, certificates=[no_dual], converged=False),
    ]
    records.append(record("lead", "d", 0, {"average_precision": 0.7}, converged=False))  # a warning, no certificate
    mlrl, br, lead = run_summary(records)
    assert (mlrl["n_splits"], mlrl["n_failed"], mlrl["n_checked"], mlrl["n_converged"]) == (3, 1, 2, 1)
    assert (lead["n_checked"], lead["n_converged"], lead["n_solves"]) == (1, 0, 0)
    assert mlrl["n_solves"] == 3 and mlrl["max_gap"] == 2.0 and mlrl["max_relative_gap"] == 0.25
    assert mlrl["n_warnings"] == 1
    assert br["n_solves"] == 1 and math.isnan(br["max_gap"])  # a solver without a dual has no gap


# ------------------------------------------------------------ reference comparison
def test_verdict_direction_follows_the_metric():
    # The reference is higher on both metrics: better on average precision, worse on Hamming loss.
    records = runs("mlrl", "emotions", average_precision=A, hamming_loss=A) + runs(
        "br", "emotions", average_precision=B, hamming_loss=B
    )
    comparison = compare_to_reference(records, "mlrl")
    ap = comparison.verdict("emotions", "br", "average_precision")
    hl = comparison.verdict("emotions", "br", "hamming_loss")
    assert ap.test == paired_ttest(A, B) and ap.test.pvalue < 0.05
    assert (ap.outcome, ap.marker) == ("win", MARKER_WIN)
    assert (hl.outcome, hl.marker) == ("loss", MARKER_LOSS)
    assert comparison.verdict("emotions", "mlrl", "hamming_loss") is None  # not compared with itself


def test_lower_reference_on_a_loss_is_a_win():
    records = runs("mlrl", "yeast", ranking_loss=B) + runs("rank", "yeast", ranking_loss=A)
    verdict = compare_to_reference(records, "mlrl").verdict("yeast", "rank", "ranking_loss")
    assert verdict.outcome == "win" and verdict.marker == MARKER_WIN


def test_no_significant_difference_is_a_tie_without_marker():
    records = runs("mlrl", "scene", average_precision=A) + runs("br", "scene", average_precision=A + NOISE)
    verdict = compare_to_reference(records, "mlrl").verdict("scene", "br", "average_precision")
    assert verdict.test.pvalue > 0.05 and (verdict.outcome, verdict.marker) == ("tie", "")


def test_identical_results_are_a_tie():
    records = runs("mlrl", "scene", average_precision=A) + runs("br", "scene", average_precision=A)
    verdict = compare_to_reference(records, "mlrl").verdict("scene", "br", "average_precision")
    assert verdict.test.pvalue == 1.0 and verdict.outcome == "tie"


def test_the_level_decides_significance():
    b = A - 0.005 + np.array([0.01, -0.01, 0.0, 0.005, -0.005, 0.008, -0.008, 0.002, -0.002, 0.0])
    pvalue = paired_ttest(A, b).pvalue
    assert 0.01 < pvalue < 0.05
    records = runs("mlrl", "d", average_precision=A) + runs("br", "d", average_precision=b)
    assert compare_to_reference(records, "mlrl", alpha=0.05).verdicts[0].outcome == "win"
    assert compare_to_reference(records, "mlrl", alpha=0.01).verdicts[0].outcome == "tie"


def test_failed_and_missing_splits_leave_the_pairs_and_are_reported():
    reference = runs("mlrl", "d", average_precision=A)
    other = runs("br", "d", average_precision=B)
    other[3] = record("br", "d", 3, status="failed")
    del reference[7]
    verdict = compare_to_reference(reference + other, "mlrl").verdicts[0]
    kept = [k for k in range(10) if k not in (3, 7)]
    assert verdict.test == paired_ttest(A[kept], B[kept])
    assert verdict.left_out == ((3, "failed: br"), (7, "missing: mlrl"))


def test_fewer_than_two_matched_splits_is_untested_and_not_counted():
    records = runs("mlrl", "d", average_precision=A[:2]) + [
        record("br", "d", 0, {"average_precision": 0.5}),
        record("br", "d", 1, status="failed"),
    ]
    comparison = compare_to_reference(records, "mlrl")
    assert comparison.verdicts[0].outcome == "untested" and comparison.verdicts[0].marker == ""
    assert comparison.win_tie_loss()["Total"]["br"] == WinTieLoss(0, 0, 0)


def test_win_tie_loss_counts_over_datasets_and_metrics():
    # mlrl against br: wins on d1 and d2, loses on d3 (average precision);
    # against rank: ties everywhere (noise only).  Hamming loss mirrors average precision.
    records = []
    for dataset, (ref, br) in {"d1": (A, B), "d2": (A, B), "d3": (B, A)}.items():
        records += runs("mlrl", dataset, average_precision=ref, hamming_loss=1 - ref)
        records += runs("br", dataset, average_precision=br, hamming_loss=1 - br)
        records += runs("rank", dataset, average_precision=ref + NOISE, hamming_loss=1 - ref - NOISE)
    table = compare_to_reference(records, "mlrl").win_tie_loss()
    assert list(table) == ["hamming_loss", "average_precision", "Total"]
    assert table["average_precision"] == {"br": (2, 0, 1), "rank": (0, 3, 0)}
    assert table["hamming_loss"] == {"br": (2, 0, 1), "rank": (0, 3, 0)}
    assert table["Total"] == {"br": (4, 0, 2), "rank": (0, 6, 0)}
    assert str(table["Total"]["br"]) == "4/0/2"


def test_compare_to_reference_validates_its_inputs():
    records = runs("mlrl", "d", average_precision=A[:3]) + runs("br", "d", average_precision=B[:3])
    with pytest.raises(ValueError, match="reference method 'lead'"):
        compare_to_reference(records, "lead")
    with pytest.raises(ValueError, match="alpha"):
        compare_to_reference(records, "mlrl", alpha=1.5)
    with pytest.raises(ValueError, match="unknown metric"):
        compare_to_reference(records, "mlrl", metrics=["precision"])


# --------------------------------------------------------------- reference values
REFERENCE_ROWS = [
    {"method": "mlrl", "dataset": "emotions", "metric": "average_precision", "mean": 0.8079, "std": 0.0420,
     "source": "MLRL Table VI"},
    {"method": "br", "dataset": "emotions", "metric": "average_precision", "mean": 0.7873, "std": 0.0332},
    {"method": "br", "dataset": "emotions", "metric": "hamming_loss", "mean": 0.2364},
]  # fmt: skip


def write_reference(path, rows):
    if path.suffix == ".json":
        path.write_text(json.dumps(rows))
    elif path.suffix == ".toml":
        tables = ["[[reference]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in row.items()) for row in rows]
        path.write_text("\n".join(tables))
    else:
        lines = ["method,dataset,metric,mean,std,source"]
        lines += [
            ",".join(str(row.get(k, "")) for k in ("method", "dataset", "metric", "mean", "std", "source"))
            for row in rows
        ]
        path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("suffix", [".csv", ".json", ".toml"])
def test_read_reference_formats_agree(tmp_path, suffix):
    table = read_reference(write_reference(tmp_path / f"paper{suffix}", REFERENCE_ROWS))
    assert set(table) == {
        ("mlrl", "emotions", "average_precision"),
        ("br", "emotions", "average_precision"),
        ("br", "emotions", "hamming_loss"),
    }
    assert table["mlrl", "emotions", "average_precision"] == (0.8079, 0.0420, "MLRL Table VI")
    hamming = table["br", "emotions", "hamming_loss"]
    assert hamming.mean == 0.2364 and math.isnan(hamming.std) and hamming.source == ""


def test_read_reference_json_object_with_reference_key(tmp_path):
    path = tmp_path / "paper.json"
    path.write_text(json.dumps({"reference": REFERENCE_ROWS[:1]}))
    assert list(read_reference(path)) == [("mlrl", "emotions", "average_precision")]


@pytest.mark.parametrize(
    "rows, message",
    [
        ([REFERENCE_ROWS[0] | {"stdev": 0.1}], "unknown fields"),
        ([{"method": "br", "dataset": "d", "metric": "hamming_loss"}], "missing fields"),
        ([REFERENCE_ROWS[0] | {"mean": "high"}], "not a number"),
        ([REFERENCE_ROWS[0] | {"std": -0.1}], "std must be finite and >= 0"),
        ([REFERENCE_ROWS[0] | {"metric": "accuracy"}], "unknown metric"),
        ([REFERENCE_ROWS[0], REFERENCE_ROWS[0]], "repeats"),
    ],
)
def test_read_reference_rejects_bad_rows(tmp_path, rows, message):
    with pytest.raises(ValueError, match=message):
        read_reference(write_reference(tmp_path / "paper.json", rows))


def test_read_reference_rejects_unknown_formats_and_syntax(tmp_path):
    with pytest.raises(ValueError, match=r"\.csv, \.json or \.toml"):
        read_reference(tmp_path / "paper.xlsx")
    broken = tmp_path / "paper.toml"
    broken.write_text("[[reference]\nmethod = ")
    with pytest.raises(ValueError, match="cannot parse"):
        read_reference(broken)


def test_reference_deltas_in_units_of_the_papers_std():
    records = runs("mlrl", "emotions", average_precision=[0.80, 0.82]) + runs(
        "br", "emotions", average_precision=[0.78, 0.80], hamming_loss=[0.25, 0.23]
    )
    reference = {
        ("mlrl", "emotions", "average_precision"): (0.8079, 0.0420, "MLRL Table VI"),
        ("br", "emotions", "average_precision"): (0.7873, 0.0, ""),
        ("br", "emotions", "hamming_loss"): (0.2364, math.nan, ""),
        ("lead", "emotions", "hamming_loss"): (0.2085, 0.0215, ""),  # a method we did not run
    }
    deltas = reference_deltas(summarize(records), {k: ReferenceValue(*v) for k, v in reference.items()})
    by_key = {(d["method"], d["metric"]): d for d in deltas}
    assert set(by_key) == {("mlrl", "average_precision"), ("br", "average_precision"), ("br", "hamming_loss")}
    mlrl = by_key["mlrl", "average_precision"]
    assert mlrl["delta"] == pytest.approx(0.81 - 0.8079)
    assert mlrl["delta_in_std"] == pytest.approx((0.81 - 0.8079) / 0.0420)
    assert mlrl["paper_mean"] == 0.8079 and mlrl["source"] == "MLRL Table VI"
    assert math.isnan(by_key["br", "average_precision"]["delta_in_std"])  # std 0
    assert math.isnan(by_key["br", "hamming_loss"]["delta_in_std"])  # std not given
    assert by_key["br", "hamming_loss"]["delta"] == pytest.approx(0.24 - 0.2364)


def test_the_documented_reference_files_agree(tmp_path):
    """docs/reports.md shows one table in CSV, JSON and TOML: each example parses to the same values."""
    text = (Path(__file__).parents[1] / "docs" / "reports.md").read_text()
    tables = []
    for suffix in ("csv", "json", "toml"):
        (block,) = re.findall(rf"```{suffix}\n(.*?)```", text, flags=re.DOTALL)
        path = tmp_path / f"example.{suffix}"
        path.write_text(block)
        tables.append(read_reference(path))
    assert len(tables[0]) == 3
    for table in tables[1:]:
        assert table.keys() == tables[0].keys()
        for key, value in table.items():
            assert value.mean == tables[0][key].mean and value.source == tables[0][key].source
            assert value.std == tables[0][key].std or (math.isnan(value.std) and math.isnan(tables[0][key].std))
