"""The experiment report: report.md holds the tables, markers and failures it claims; CSV and JSON agree."""

import csv
import json
import math
import re

import numpy as np
import pytest

from multilabel_core.experiments.report import SPLIT_COLUMNS, SUMMARY_COLUMNS, markdown_table, write_report
from multilabel_core.experiments.stats import (
    MARKER_LOSS,
    MARKER_WIN,
    compare_to_reference,
    read_reference,
    reference_deltas,
    run_summary,
    summarize,
)
from multilabel_core.experiments.store import jsonable

A = np.array([0.812, 0.795, 0.830, 0.801, 0.790])
B = np.array([0.790, 0.788, 0.801, 0.785, 0.781])
NOISE = np.array([0.004, -0.003, 0.002, -0.001, -0.002])
LABELS = ["amazed", "happy", "relaxing"]
CORRELATION = np.array([[1.0, 0.0, -0.73], [0.0, 1.0, 0.0], [-0.73, 0.0, 1.0]])


def certificate(gap, converged=True):
    return {"primal": 1.0 + gap, "dual": 1.0, "gap": gap, "kkt_violation": gap / 10, "n_iter": 20, "time": 0.01,
            "converged": converged, "solver": "smo", "statistics": {}, "relative_gap": gap / (1.0 + gap)}  # fmt: skip


def make_record(method, dataset, split, average_precision, *, failed=False):
    """A record as the runner writes it (docs/experiments.md)."""
    certificates = {
        "mlrl": [certificate(10.0 ** -(k + split / 10)) for k in range(1, 4)],  # three outer steps
        "br": [certificate(1e-4 * (split + 1))],  # one solve
    }.get(method, [])
    return {
        "config_hash": "c" * 64,
        "method": method,
        "dataset": dataset,
        "protocol": "kfold",
        "split": split,
        "status": "failed" if failed else "ok",
        "error": "RuntimeError: kernel matrix is not PSD" if failed else None,
        "params": {"C": 1.0},
        "search": [
            {"params": {"C": C}, "score": 0.8 - 0.01 * abs(np.log10(C)) + 0.001 * split, "status": "ok", "error": None}
            for C in (0.01, 0.1, 1.0, 10.0, 100.0)
        ]
        if method != "rank"
        else [],
        "selection_metric": "average_precision",
        "metrics": {}
        if failed
        else {"hamming_loss": 1.0 - average_precision, "average_precision": average_precision, "macro_auc": None},
        "fit_time": 0.2 + 0.01 * split,
        "predict_time": 0.003,
        "n_train": 475,
        "n_test": 118,
        "n_labels": 3,
        "label_names": LABELS,
        "certificates": [] if failed else certificates,
        "converged": (True if certificates else None) if not failed else None,
        "label_correlation": (CORRELATION + 0.01 * split * (1 - np.eye(3))).tolist() if method == "mlrl" else None,
        "warnings": ["ConvergenceWarning: max_iter reached"] if (method, split) == ("br", 4) else [],
    }


def make_records():
    """emotions: mlrl beats br and loses to rank; scene: ties, and br's split 2 failed."""
    values = {
        ("emotions", "mlrl"): A, ("emotions", "br"): B, ("emotions", "rank"): A + 0.01 + NOISE,
        ("scene", "mlrl"): A, ("scene", "br"): A + NOISE, ("scene", "rank"): A,
    }  # fmt: skip
    return [
        make_record(method, dataset, k, float(v[k]), failed=(dataset, method, k) == ("scene", "br", 2))
        for (dataset, method), v in values.items()
        for k in range(5)
    ]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    (out / "config.json").write_text(
        json.dumps(
            {"config_hash": "c" * 64, "config": {"methods": ["mlrl", "br", "rank"], "protocol": "kfold", "seed": 0}}
        )
    )
    reference = out / "paper.csv"
    reference.write_text(
        "method,dataset,metric,mean,std,source\n"
        "mlrl,emotions,average_precision,0.8079,0.0420,MLRL Table VI\n"
        "br,emotions,hamming_loss,0.2364,,MLRL Table II\n"
    )
    records = make_records()
    paths = write_report(records, out, reference=reference, reference_method="mlrl", title="MLRL on two datasets",
                         plots=False)  # fmt: skip
    return {"records": records, "paths": paths, "text": paths["report"].read_text(), "reference": reference, "out": out}


def section(text, heading):
    """The lines under a Markdown heading, up to the next heading of the same or a higher level."""
    level = heading.split()[0]
    lines = text.splitlines()
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if re.match(rf"#{{1,{len(level)}}} ", lines[i])), len(lines))
    while end > start and not lines[end - 1]:
        end -= 1
    return lines[start:end]


def table(lines):
    """The first Markdown table in ``lines`` as a list of rows of cells (header first)."""
    rows = [line for line in lines if line.startswith("|")]
    cells = [[c.strip() for c in row.strip("|").split(" | ")] for row in rows]
    return [cells[0], *cells[2:]]


# --------------------------------------------------------------------------- files
def test_write_report_returns_the_files_it_wrote(report):
    paths, out = report["paths"], report["out"]
    assert {key: path.name for key, path in paths.items() if key != "plots"} == {
        "report": "report.md",
        "summary_csv": "summary.csv",
        "summary_json": "summary.json",
        "splits_csv": "splits.csv",
    }
    assert all(path.parent == out and path.stat().st_size > 0 for key, path in paths.items() if key != "plots")
    assert paths["plots"] == [] and not (out / "plots").exists()


def test_report_heading_and_configuration(report):
    text = report["text"]
    assert text.startswith("# MLRL on two datasets\n")
    assert "30 records (1 failed): methods mlrl, br, rank on datasets emotions, scene; protocol kfold." in text
    config = section(text, "## Configuration")
    assert f"- config_hash: `{'c' * 64}`" in config
    assert "- config:" in config and '  - methods: `["mlrl", "br", "rank"]`' in config and "  - seed: `0`" in config


def test_per_dataset_tables_hold_mean_std_and_markers(report):
    records, text = report["records"], report["text"]
    summary = {(r["dataset"], r["method"], r["metric"]): r for r in summarize(records)}
    comparison = compare_to_reference(records, "mlrl")
    for dataset in ("emotions", "scene"):
        header, *rows = table(section(text, f"### {dataset}"))
        assert header == ["metric", "mlrl (reference)", "br", "rank"]
        assert [row[0] for row in rows] == ["hamming_loss ↓", "average_precision ↑", "macro_auc ↑"]
        for row in rows[:2]:
            metric = row[0].split()[0]
            for method, cell in zip(("mlrl", "br", "rank"), row[1:]):
                s = summary[dataset, method, metric]
                expected = f"{s['mean']:.4f} ± {s['std']:.4f}" + (" (n=4)" if s["n"] == 4 else "")
                verdict = comparison.verdict(dataset, method, metric)
                if verdict is not None and verdict.marker:
                    expected += f" {verdict.marker}"
                assert cell == expected
        assert rows[2][1:] == ["—", "—", "—"]  # macro AUC undefined on every split
    emotions = table(section(text, "### emotions"))
    assert emotions[2][2].endswith(MARKER_WIN) and emotions[2][3].endswith(MARKER_LOSS)  # average precision
    scene = table(section(text, "### scene"))
    assert scene[2][2].endswith("(n=4)")  # br failed on one split
    assert not any(cell.endswith((MARKER_WIN, MARKER_LOSS)) for row in scene[1:] for cell in row)


def test_win_tie_loss_table_matches_the_comparison(report):
    header, *rows = table(section(report["text"], "## Win/tie/loss of mlrl"))
    assert header == ["metric", "br", "rank"]
    assert rows == [
        ["hamming_loss", "1/1/0", "0/1/1"],
        ["average_precision", "1/1/0", "0/1/1"],
        ["macro_auc", "0/0/0", "0/0/0"],
        ["Total", "2/2/0", "0/2/2"],
    ]
    table_vii = compare_to_reference(report["records"], "mlrl").win_tie_loss()
    assert rows == [[metric, *map(str, cells.values())] for metric, cells in table_vii.items()]


def test_failures_and_left_out_splits_are_listed(report):
    failures = section(report["text"], "## Failures")
    assert failures[:2] == ["", "Failed fits: 1 (1 of whole splits); failed splits: 1."]
    assert table(failures) == [
        ["method", "dataset", "split", "grid point", "where", "error"],
        ["br", "scene", "2", "C=1", "final fit (split failed)", "RuntimeError: kernel matrix is not PSD"],
    ]
    tests = "\n".join(section(report["text"], "## Win/tie/loss of mlrl"))
    assert "- `br` against `mlrl` on `scene`, split 2 (hamming_loss, average_precision): failed: br" in tests
    assert "4 comparison(s) had fewer than two matched splits: untested, not counted." in tests


def test_papers_values_beside_ours(report):
    header, *rows = table(section(report["text"], "## Papers' values"))
    assert header == ["dataset", "method", "metric", "ours", "paper", "ours − paper", "in paper std", "source"]
    ours = float(np.mean(A))
    assert rows[0] == [
        "emotions", "mlrl", "average_precision ↑", f"{ours:.4f}", "0.8079 ± 0.0420",
        f"{ours - 0.8079:+.4f}", f"{(ours - 0.8079) / 0.0420:+.2f}", "MLRL Table VI",
    ]  # fmt: skip
    assert rows[1][4:] == ["0.2364", f"{1 - B.mean() - 0.2364:+.4f}", "—", "MLRL Table II"]  # no std given


def test_runs_and_convergence_sections(report):
    header, *runs = table(section(report["text"], "## Runs"))
    assert header[:4] == ["dataset", "method", "splits ok", "failed"]
    assert runs[4][:4] == ["scene", "br", "4", "1"] and runs[1][6] == "1"  # br's warning on emotions
    header, *rows = table(section(report["text"], "## Convergence"))
    assert header == ["dataset", "method", "splits converged", "solves", "max gap", "max relative gap"]
    assert [row[:4] for row in rows] == [
        ["emotions", "mlrl", "5/5", "15"],
        ["emotions", "br", "5/5", "5"],
        ["scene", "mlrl", "5/5", "15"],
        ["scene", "br", "4/4", "4"],
    ]
    assert rows[0][4] == f"{0.1:.2e}" and rows[1][4] == f"{5e-4:.2e}"


# ------------------------------------------------------------------ CSV and JSON
def as_number(cell):
    return math.nan if cell == "" else float(cell)


def test_summary_csv_and_json_agree_with_summarize(report):
    records, paths = report["records"], report["paths"]
    expected = summarize(records)
    comparison = compare_to_reference(records, "mlrl")
    deltas = {
        (d["dataset"], d["method"], d["metric"]): d
        for d in reference_deltas(expected, read_reference(report["reference"]))
    }
    with paths["summary_csv"].open(newline="") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames) == SUMMARY_COLUMNS
        from_csv = list(reader)
    document = json.loads(paths["summary_json"].read_text())
    assert document["reference_method"] == "mlrl" and document["alpha"] == 0.05
    assert len(from_csv) == len(document["summary"]) == len(expected)
    for want, got_csv, got_json in zip(expected, from_csv, document["summary"]):
        key = (want["dataset"], want["method"], want["metric"])
        assert (got_csv["dataset"], got_csv["method"], got_csv["metric"]) == key
        for column in ("mean", "std", "n", "n_failed", "fit_time", "predict_time"):
            assert as_number(got_csv[column]) == pytest.approx(want[column], nan_ok=True)
            assert (math.nan if got_json[column] is None else got_json[column]) == pytest.approx(
                want[column], nan_ok=True
            )
        verdict = comparison.verdict(*key)
        assert got_csv["outcome"] == (verdict.outcome if verdict else "")
        assert got_json["marker"] == (verdict.marker if verdict else None)
        if verdict is not None and math.isfinite(verdict.test.pvalue):
            assert as_number(got_csv["pvalue"]) == pytest.approx(verdict.test.pvalue)
        if key in deltas:
            assert got_json["delta"] == pytest.approx(deltas[key]["delta"])
            assert as_number(got_csv["delta_in_std"]) == pytest.approx(deltas[key]["delta_in_std"], nan_ok=True)
    wtl = document["win_tie_loss"]
    assert wtl["Total"]["rank"] == {"win": 0, "tie": 2, "loss": 2}
    assert len(document["comparisons"]) == 2 * 2 * 3
    assert document["failures"] == [
        {"dataset": "scene", "method": "br", "split": 2, "error": "RuntimeError: kernel matrix is not PSD",
         "stage": "fit", "params": {"C": 1.0}, "folds": None, "n_folds": None, "n_fits": 1}
    ]  # fmt: skip
    assert (document["n_failed_fits"], document["n_failed_inner_fits"], document["n_failed_splits"]) == (1, 0, 1)
    assert document["runs"] == jsonable(run_summary(records))  # NaN (no certificate) -> null
    assert document["config"]["config"]["seed"] == 0


def test_splits_csv_has_a_row_per_record_and_metric(report):
    with report["paths"]["splits_csv"].open(newline="") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames) == SPLIT_COLUMNS
        rows = list(reader)
    assert len(rows) == 29 * 3 + 1  # three metrics per successful record, one row for the failure
    failure = [row for row in rows if row["status"] == "failed"]
    assert failure == [row for row in rows if row["error"]]
    assert failure[0]["metric"] == "" and failure[0]["error"].startswith("RuntimeError")
    first = rows[1]
    assert (first["method"], first["dataset"], first["split"], first["metric"]) == (
        "mlrl",
        "emotions",
        "0",
        "average_precision",
    )
    assert float(first["value"]) == A[0] and json.loads(first["params"]) == {"C": 1.0}


# -------------------------------------------------------------------- variants
def test_without_reference_method_no_markers_and_no_win_tie_loss(tmp_path):
    paths = write_report(make_records(), tmp_path, plots=False)
    text = paths["report"].read_text()
    assert "## Win/tie/loss" not in text and "## Papers' values" not in text and "## Configuration" not in text
    assert MARKER_WIN not in text and MARKER_LOSS not in text
    assert text.startswith("# Experiment report\n")
    document = json.loads(paths["summary_json"].read_text())
    assert document["comparisons"] == [] and document["win_tie_loss"] == {} and document["alpha"] is None


def test_selected_metrics_and_reference_as_mapping(tmp_path):
    reference = {("br", "scene", "average_precision"): (0.80, 0.01, "")}
    paths = write_report(make_records(), tmp_path, metrics=["average_precision"], reference=reference,
                         reference_method="mlrl", alpha=0.01, plots=False)  # fmt: skip
    text = paths["report"].read_text()
    assert [row[0] for row in table(section(text, "### scene"))[1:]] == ["average_precision ↑"]
    assert "at level 0.01" in text
    assert table(section(text, "## Papers' values"))[1][:3] == ["scene", "br", "average_precision ↑"]


def test_a_run_without_certificates_or_failures_says_so(tmp_path):
    records = [r for r in make_records() if r["method"] == "rank"]
    text = write_report(records, tmp_path, plots=False)["report"].read_text()
    assert section(text, "## Convergence") == [
        "",
        "No method reported optimality certificates or convergence warnings.",
    ]
    assert section(text, "## Failures") == ["", "Failed fits: 0; failed splits: 0."]
    assert "Failed fits: 0; failed splits: 0. Chosen values at a grid edge: 0." in text.split("## Results")[0]


@pytest.mark.parametrize(
    "records, kwargs, message",
    [
        ([], {}, "no records"),
        (make_records(), {"reference_method": "lead"}, "reference method 'lead'"),
        (make_records(), {"reference_method": "mlrl", "alpha": 0}, "alpha"),
        (make_records(), {"metrics": ["accuracy"]}, "unknown metric"),
    ],
)
def test_write_report_rejects_bad_arguments(tmp_path, records, kwargs, message):
    with pytest.raises(ValueError, match=message):
        write_report(records, tmp_path, plots=False, **kwargs)


def test_broken_config_json_is_reported(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="config.json: not valid JSON"):
        write_report(make_records(), tmp_path, plots=False)


def test_markdown_table_escapes_pipes_and_newlines():
    assert markdown_table(["a", "b"], [["x | y", "two\nlines"]]) == [
        "| a | b |",
        "| --- | --- |",
        "| x \\| y | two lines |",
    ]
