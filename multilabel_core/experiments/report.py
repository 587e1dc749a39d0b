"""The report of an experiment: Markdown for reading, CSV and JSON for further analysis.

:func:`write_report` turns the records of a run (one per method x dataset x split,
docs/experiments.md) into

* ``report.md`` -- per dataset, the mean +- std of every method on every metric with
  the papers' significance markers; the win/tie/loss table of MLRL Table VII; the same
  tests against the best ecosystem baseline of each dataset; the papers' values beside
  ours; runs, convergence, the share of test rows each method predicts no label for
  (a chosen model that predicts no label at all is flagged beside the failed fits), the
  chosen hyper-parameters (with the grid points that failed, the grid extensions and the
  choices at a grid edge), the labels constant in a training part (the metric rows they
  touch marked), every failed fit, and plots;
* ``summary.csv`` and ``summary.json`` -- the same numbers, one row per
  (dataset, method, metric), with the t-test and the reference values;
* ``splits.csv`` -- one row per record and metric, the raw material of every table.

The statistics are those of :mod:`multilabel_core.experiments.stats`; the figures those
of :mod:`multilabel_core.experiments.plots`.  docs/reports.md describes every column.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping
from pathlib import Path

from ..metrics import METRICS
from .diagnostics import (
    constant_label_counts,
    constant_labels_sentence,
    failure_counts,
    failures as failure_rows,
    grid_edge_counts,
    grid_edges,
    n_grid_edges,
    search_summary,
)
from .plots import matplotlib_available, plots_from_records
from .stats import (
    MARKER_LOSS,
    MARKER_WIN,
    ReferenceValue,
    check_records,
    compare_to_best_baseline,
    compare_to_reference,
    in_order,
    read_reference,
    reference_deltas,
    group_records,
    run_summary,
    summarize,
)
from .store import jsonable

__all__ = [
    "SPLIT_COLUMNS", "SUMMARY_COLUMNS", "grid_extension_counts", "markdown_table", "no_label_models",
    "no_label_shares", "write_report",
]

SUMMARY_COLUMNS = (
    "dataset", "method", "metric", "greater_is_better", "mean", "std", "n", "n_failed",
    "fit_time", "predict_time", "outcome", "marker", "statistic", "pvalue", "n_pairs",
    "paper_mean", "paper_std", "delta", "delta_in_std",
    "best_baseline", "baseline_outcome", "baseline_marker", "baseline_statistic", "baseline_pvalue",
    "baseline_n_pairs",
)  # fmt: skip
SPLIT_COLUMNS = (
    "dataset", "method", "protocol", "split", "status", "metric", "value", "fit_time",
    "predict_time", "n_train", "n_test", "converged", "params", "error", "n_no_label_rows", "n_predicted_labels",
)  # fmt: skip
MISSING = "—"  # a table cell without a value (no successful split, no reference number)
CONSTANT_MARK = "†"  # a metric row whose values rest on labels predicted constant


# ------------------------------------------------------------------- formatting
def _number(value, fmt: str = "{:.4f}") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return MISSING
    return fmt.format(value)


def _escape(cell) -> str:
    """A table cell on one line, its pipes escaped so they do not split the row."""
    return " ".join(str(cell).split()).replace("|", "\\|")


def markdown_table(header, rows) -> list[str]:
    """Format a GitHub-flavoured Markdown table as lines.

    Parameters
    ----------
    header : sequence
        The column headings.
    rows : iterable of sequence
        The rows' cells.  Every cell, headings included, is converted with ``str``, its runs of
        whitespace (line breaks included) joined by one space and its pipes escaped.

    Returns
    -------
    list of str
        The header line, the separator line and one line per row.
    """
    lines = ["| " + " | ".join(map(_escape, header)) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(map(_escape, row)) + " |" for row in rows]
    return lines


def _direction(metric: str) -> str:
    return "↑" if METRICS[metric].greater_is_better else "↓"


# --------------------------------------------------------------- the sections
def _heading_lines(records, title: str, config: dict | None, counts: dict, n_edges: int, n_no_label: int) -> list[str]:
    failed = sum(r["status"] == "failed" for r in records)
    protocols = in_order([r for r in records if "protocol" in r], "protocol")
    lines = [
        f"# {title}",
        "",
        f"{len(records)} records ({failed} failed): methods {', '.join(map(str, in_order(records, 'method')))} "
        f"on datasets {', '.join(map(str, in_order(records, 'dataset')))}"
        + (f"; protocol {', '.join(map(str, protocols))}." if protocols else "."),
        "",
        _failed_fits_sentence(counts) + f" Chosen values at a grid edge: {n_edges}. " + _no_label_sentence(n_no_label),
        *_preprocess_lines(records),
    ]
    if config is not None:
        lines += ["", "## Configuration", "", *_config_lines(config)]
    return lines


def _preprocess_lines(records) -> list[str]:
    """What was done to the features (runs that record it; older records do not)."""
    recorded = [r for r in records if "preprocess" in r]
    if not recorded:
        return []
    names = in_order(recorded, "preprocess")
    if names == [None]:
        return ["", "Features: used as given (no preprocessing)."]
    given = ", ".join("none" if name is None else f"`{name}`" for name in names)
    return [
        "",
        (
            f"Features: preprocessed with {given} (docs/experiments.md), fitted on the training part of each split "
            "only, and in the hyper-parameter search on the inner training part of each fold only; the same for "
            "every method."
        ),
    ]


def _config_lines(config: dict, indent: str = "") -> list[str]:
    """A bullet per setting; a nested table (the store's ``config``) as one level of sub-bullets."""
    lines = []
    for key, value in config.items():
        if isinstance(value, dict) and not indent:
            lines += [f"- {key}:", *_config_lines(value, indent="  ")]
        else:
            text = value if isinstance(value, str) else json.dumps(jsonable(value), sort_keys=True)
            lines.append(f"{indent}- {key}: `{text}`")
    return lines


def _mean_std(row: dict, n_expected: int) -> str:
    if row["n"] == 0:
        return MISSING
    text = _number(row["mean"]) + ("" if row["n"] < 2 else f" ± {_number(row['std'])}")
    return text + (f" (n={row['n']})" if row["n"] < n_expected else "")


def _constant_marked(constant_rows) -> dict:
    """dataset -> its row of :func:`~.diagnostics.constant_label_counts`, for the datasets whose
    metrics rest on labels predicted constant (in the final fits or the searches' folds)."""
    return {row["dataset"]: row for row in constant_rows if row["option"] == "predict_constant"}


def _results_lines(summary, comparison, baseline, constant_rows=()) -> list[str]:
    lines = ["", "## Results", "", "Mean ± standard deviation over the splits (ddof = 1); ↑ higher is better, ↓ lower."]
    lines.append("(n=k): only k splits gave a value; — : none did.")
    if comparison is not None:
        lines.append(
            f"{MARKER_WIN} / {MARKER_LOSS}: {comparison.reference} is significantly better / worse than the marked "
            f"method (two-sided paired t-test over matched splits at level {comparison.alpha:g}); "
            "no marker: no significant difference."
        )
    if baseline is not None:
        lines.append("(best baseline): the best ecosystem baseline on the dataset (see below).")
    marked = _constant_marked(constant_rows)
    if marked:
        lines.append(
            f"{CONSTANT_MARK}: some labels were constant in a training part and predicted at that value, not learned "
            "(constant_labels = predict_constant); the note under the table says which (see Constant labels)."
        )
    for dataset in in_order(summary, "dataset"):
        rows = [r for r in summary if r["dataset"] == dataset]
        methods = in_order(rows, "method")
        reference = comparison.reference if comparison is not None else None
        if reference in methods:
            methods.remove(reference)
            methods.insert(0, reference)
        best = baseline.reference_of(dataset) if baseline is not None else None

        def header(method, reference=reference, best=best):
            roles = [role for role, name in (("reference", reference), ("best baseline", best)) if name == method]
            return f"{method} ({', '.join(roles)})" if roles else method

        mark = CONSTANT_MARK if dataset in marked else ""
        lines += ["", f"### {dataset}", "", *_dataset_table(rows, methods, comparison, header, mark)]
        if mark:
            lines += ["", f"{CONSTANT_MARK} {constant_labels_sentence(marked[dataset])}."]
    return lines


def _dataset_table(rows, methods, comparison, header, mark: str = "") -> list[str]:
    """One dataset's table: a row per metric, a column per method (``header(method)`` names it),
    each cell ``mean ± std`` with the marker of ``comparison``'s verdict on it; ``mark`` ends each
    metric's name (the constant-labels footnote)."""
    n_expected = max(r["n"] for r in rows)
    cells = {(r["method"], r["metric"]): r for r in rows}
    body = []
    for metric in in_order(rows, "metric"):
        line = [f"{metric} {_direction(metric)}" + (f" {mark}" if mark else "")]
        for method in methods:
            verdict = comparison.verdict(rows[0]["dataset"], method, metric) if comparison is not None else None
            marker = f" {verdict.marker}" if verdict is not None and verdict.marker else ""
            line.append(_mean_std(cells[method, metric], n_expected) + marker)
        body.append(line)
    return markdown_table(["metric", *map(header, methods)], body)


def _baseline_lines(summary, baseline, n_datasets: int) -> list[str]:
    """Every other method against the best ecosystem baseline of each dataset."""
    metric = baseline.selection_metric
    lines = [
        "",
        "## Against the best ecosystem baseline",
        "",
        (
            f"The ecosystem baselines run here ({', '.join(f'`{m}`' for m in baseline.baselines)}: the `baselines` "
            "family, what users would otherwise run) are compared with every other method under the same splits. "
            f"On each dataset the best of them -- the highest mean {metric} {_direction(metric)}, the selection "
            f"metric -- is the reference of two-sided paired t-tests at level {baseline.alpha:g}: {MARKER_WIN} / "
            f"{MARKER_LOSS}: the best baseline is significantly better / worse than the marked method (so "
            f"{MARKER_LOSS} is a significant win of that method over it)."
        ),
        "",
        *markdown_table(
            ["dataset", "best ecosystem baseline", f"{metric} {_direction(metric)}"],
            [[dataset, method, _number(mean)] for dataset, (method, mean) in baseline.best.items()],
        ),
    ]
    for dataset, (best, _) in baseline.best.items():
        rows = [r for r in summary if r["dataset"] == dataset]
        methods = [best, *dict.fromkeys(v.method for v in baseline.verdicts if v.dataset == dataset)]
        table = _dataset_table(rows, methods, baseline, lambda m, best=best: f"{m} (best baseline)" if m == best else m)
        lines += ["", f"### {dataset}: against {best}", "", *table]
    return lines + _win_tie_loss_lines(baseline, n_datasets, level="###")


def _win_tie_loss_lines(comparison, n_datasets: int, level: str = "##") -> list[str]:
    table = comparison.win_tie_loss()
    lines = [
        "",
        f"{level} Win/tie/loss of {comparison.reference}",
        "",
        (
            f"Per metric and compared method, over {n_datasets} dataset(s): the number of datasets where "
            f"{comparison.reference} is significantly better (win), not significantly different (tie) or "
            "significantly worse (loss), as in MLRL Table VII."
        ),
        "",
        *markdown_table(
            ["metric", *comparison.methods], [[row, *map(str, counts.values())] for row, counts in table.items()]
        ),
    ]
    untested = sum(v.outcome == "untested" for v in comparison.verdicts)
    if untested:
        lines += ["", f"{untested} comparison(s) had fewer than two matched splits: untested, not counted."]
    left_out = _left_out(comparison)
    if left_out:
        lines += ["", "Splits left out of the paired tests:"]
        for (dataset, method, reason, metrics), splits in left_out.items():
            which = "all metrics" if len(metrics) == len(comparison.metrics) else ", ".join(metrics)
            lines.append(
                f"- `{method}` against `{comparison.reference}` on `{dataset}`, "
                f"split{'s' if len(splits) > 1 else ''} {', '.join(map(str, splits))} ({which}): {reason}"
            )
    return lines


def _left_out(comparison) -> dict[tuple, list]:
    """(dataset, method, reason, metrics) -> the splits left out of those tests for that reason."""
    metrics_of = {}
    for verdict in comparison.verdicts:
        for split, reason in verdict.left_out:
            metrics_of.setdefault((verdict.dataset, verdict.method, split, reason), []).append(verdict.metric)
    grouped = {}
    for (dataset, method, split, reason), metrics in metrics_of.items():
        grouped.setdefault((dataset, method, reason, tuple(metrics)), []).append(split)
    return grouped


def _reference_lines(deltas) -> list[str]:
    rows = [
        [
            d["dataset"], d["method"], f"{d['metric']} {_direction(d['metric'])}", _number(d["mean"]),
            _number(d["paper_mean"]) + ("" if math.isnan(d["paper_std"]) else f" ± {_number(d['paper_std'])}"),
            _number(d["delta"], "{:+.4f}"), _number(d["delta_in_std"], "{:+.2f}"), d["source"] or MISSING,
        ]
        for d in deltas
    ]  # fmt: skip
    header = ["dataset", "method", "metric", "ours", "paper", "ours − paper", "in paper std", "source"]
    intro = "The papers' numbers beside ours; the difference also in units of the paper's standard deviation."
    return ["", "## Papers' values", "", intro, "", *markdown_table(header, rows)]


def thresholds_used(records) -> dict[tuple, str]:
    """(dataset, method) -> the thresholds its fitted models used (records' ``threshold``), comma-separated.

    "—" where no record names one (every split failed, or records written before thresholds were a part).
    """
    used: dict[tuple, dict] = {}
    for record in records:
        names = used.setdefault((record["dataset"], record["method"]), {})
        if record.get("threshold"):
            names[record["threshold"]] = None
    return {key: ", ".join(names) or MISSING for key, names in used.items()}


def _runs_lines(runs, thresholds=None) -> list[str]:
    thresholds = thresholds or {}
    header = ["dataset", "method", "splits ok", "failed", "fit time (s)", "predict time (s)", "warnings", "threshold"]
    rows = [
        [r["dataset"], r["method"], r["n_splits"], r["n_failed"], _number(r["fit_time"], "{:.3f}"),
         _number(r["predict_time"], "{:.3f}"), r["n_warnings"], thresholds.get((r["dataset"], r["method"]), MISSING)]
        for r in runs
    ]  # fmt: skip
    lines = ["", "## Runs", "", *markdown_table(header, rows), "", "## Convergence", ""]
    checked = [r for r in runs if r["n_checked"]]
    if not checked:
        return lines + ["No method reported optimality certificates or convergence warnings."]
    header = ["dataset", "method", "splits converged", "solves", "max gap", "max relative gap"]
    rows = [
        [r["dataset"], r["method"], f"{r['n_converged']}/{r['n_checked']}", r["n_solves"],
         _number(r["max_gap"], "{:.2e}"), _number(r["max_relative_gap"], "{:.2e}")]
        for r in checked
    ]  # fmt: skip
    intro = (
        "Splits that converged (every certificate converged and no ConvergenceWarning) among those where "
        "convergence is known, and the largest duality gaps over all certificates (relative: gap / max(1, |primal|))."
    )
    return lines + [intro, "", *markdown_table(header, rows)]


def _constant_label_lines(constant_rows) -> list[str]:
    lines = ["", "## Constant labels", ""]
    if not constant_rows:
        return lines + ["No label took a single value in a training part (nor in an inner fold of a search)."]
    intro = (
        "Labels that take one value (never or always relevant) in a training part cannot be learned; the "
        "experiment option constant_labels decides: refuse (the fit is refused before the method runs) or "
        "predict_constant (the method is fitted on the other labels, these are predicted at their training value, "
        "scored below -- or above -- every learned label; docs/experiments.md)."
    )
    return lines + [intro, "", *(f"- {constant_labels_sentence(row)}." for row in constant_rows)]


def no_label_models(records) -> list[dict]:
    """List the successful records whose model predicts no label on any test row: one row each.

    Such a model scores micro-F1 = macro-F1 = 0 however good its ranking measures are.

    Parameters
    ----------
    records : iterable of mapping
        The run's records.

    Returns
    -------
    list of dict
        Each row: ``method``, ``dataset``, ``split``, ``params``, ``n_test``, ``micro_f1``,
        ``macro_f1`` and ``average_precision`` (None when not measured).  Records written before
        the runner counted the predicted labels (no ``n_predicted_labels``) give no row.
    """
    rows = []
    for record in records:
        if record["status"] != "ok" or record.get("n_predicted_labels") != 0:
            continue
        metrics = record.get("metrics") or {}
        rows.append({
            **{key: record[key] for key in ("method", "dataset", "split")},
            "params": record.get("params") or {},
            "n_test": record.get("n_test"),
            **{name: metrics.get(name) for name in ("micro_f1", "macro_f1", "average_precision")},
        })
    return rows


def no_label_shares(records) -> list[dict]:
    """Compute, per (dataset, method), the share of test rows the chosen models predict no label for.

    Parameters
    ----------
    records : iterable of mapping
        The run's records.

    Returns
    -------
    list of dict
        Each row: ``dataset``, ``method``, ``n_splits`` (successful splits whose count is
        recorded), ``mean``, ``min`` and ``max`` of the per-split share (None without such a
        split), ``shares`` (``{"split", "share"}`` per split) and ``n_no_label_models`` (splits whose
        model predicts no label at all: :func:`no_label_models`).
    """
    rows = []
    for (dataset, method), group in group_records(records).items():
        counted = [
            r for r in group if r["status"] == "ok" and r.get("n_no_label_rows") is not None and r.get("n_test")
        ]
        shares = [{"split": r["split"], "share": r["n_no_label_rows"] / r["n_test"]} for r in counted]
        values = [entry["share"] for entry in shares]
        rows.append({
            "dataset": dataset,
            "method": method,
            "n_splits": len(counted),
            "mean": sum(values) / len(values) if values else None,
            "min": min(values) if values else None,
            "max": max(values) if values else None,
            "shares": shares,
            "n_no_label_models": sum(r.get("n_predicted_labels") == 0 for r in counted),
        })
    return rows


NO_LABEL_MARK = "**no label**"  # a chosen model that predicts no label on its test part


def _no_label_sentence(n: int) -> str:
    """"Chosen models predicting no label: N." -- stated in every report beside the failed fits."""
    if n == 0:
        return "Chosen models predicting no label: 0."
    return (
        f"**Chosen models predicting no label: {n}** (micro-F1 = macro-F1 = 0 on their test part; see Failures and "
        "Predictions without a label)."
    )


def _percent(value) -> str:
    return MISSING if value is None else f"{100 * value:.1f} %"


def _no_label_lines(share_rows) -> list[str]:
    lines = ["", "## Predictions without a label", ""]
    if not any(row["n_splits"] for row in share_rows):
        return lines + ["Not recorded: these records were written before the runner counted the predicted labels."]
    intro = (
        "The share of test rows for which the chosen model predicts no label (every score <= 0): mean, smallest and "
        f"largest over the successful splits, and each split's. {NO_LABEL_MARK}: splits whose model predicts no "
        "label on any test row -- micro-F1 = macro-F1 = 0 whatever its ranking measures; select by a measure of the "
        "predicted labels (`--select micro_f1`, docs/experiments.md) to avoid them."
    )
    header = ["dataset", "method", "splits", "no-label rows (mean)", "min", "max", "models predicting no label",
              "per split"]  # fmt: skip
    rows = []
    for row in share_rows:
        if not row["n_splits"]:
            continue
        flagged = row["n_no_label_models"]
        rows.append([
            row["dataset"], row["method"], row["n_splits"], _percent(row["mean"]), _percent(row["min"]),
            _percent(row["max"]), f"{NO_LABEL_MARK} {flagged}" if flagged else "0",
            ", ".join(f"{entry['split']}: {_percent(entry['share'])}" for entry in row["shares"]),
        ])
    return lines + [intro, "", *markdown_table(header, rows)]


def _failed_fits_sentence(counts: dict) -> str:
    """"Failed fits: N ..." -- stated in every report, zero included."""
    n, inner = counts["n_failed_fits"], counts["n_failed_inner_fits"]
    if n == 0:
        return f"Failed fits: 0; failed splits: {counts['n_failed_splits']}."
    parts = []
    if inner:
        parts.append(
            f"{inner} in the hyper-parameter searches, at {counts['n_failed_points']} grid point(s) of "
            f"{counts['n_searches_with_failures']} split(s)"
        )
    if n - inner:
        parts.append(f"{n - inner} of whole splits")
    return f"Failed fits: {n} ({'; '.join(parts)}); failed splits: {counts['n_failed_splits']}."


def _params_text(params) -> str:
    if not params:
        return MISSING
    return ", ".join(f"{name}={_value_text(value)}" for name, value in params.items())


def _value_text(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _where(row) -> str:
    if row["stage"] == "grid point":
        if row["folds"] is None:
            return "inner search"
        folds = ", ".join(map(str, row["folds"]))
        return f"inner fold{'s' if len(row['folds']) > 1 else ''} {folds} of {row['n_folds']}"
    if row["stage"] == "search":
        return "search (split failed)"
    return "final fit (split failed)"


def _failure_lines(failures, counts: dict, no_label=()) -> list[str]:
    lines = ["", "## Failures", "", _failed_fits_sentence(counts)]
    if no_label:
        lines += [
            "",
            _no_label_sentence(len(no_label)) + " A model that predicts no label fitted without an error, "
            "but is of no use as a classifier:",
            "",
            *markdown_table(
                ["method", "dataset", "split", "chosen", "n_test", "micro_f1", "macro_f1", "average_precision"],
                [[r["method"], r["dataset"], r["split"], _params_text(r["params"]), r["n_test"],
                  _number(r["micro_f1"]), _number(r["macro_f1"]), _number(r["average_precision"])]
                 for r in no_label],
            ),
        ]  # fmt: skip
    if not failures:
        return lines
    intro = (
        "Every fit that raised: a grid point of an inner search (never chosen; its folds named) or a whole "
        "split (no result for it)."
    )
    header = ["method", "dataset", "split", "grid point", "where", "error"]
    rows = [
        [f["method"], f["dataset"], f["split"], _params_text(f["params"]), _where(f), f["error"] or MISSING]
        for f in failures
    ]
    return lines + ["", intro, "", *markdown_table(header, rows)]


def _chosen_score(record):
    for entry in record.get("search") or []:
        if entry.get("params") == record.get("params"):
            return entry.get("score")
    return None


def _hyperparameter_lines(records) -> list[str]:
    """The chosen parameters of each searched split, with failed points and edge choices beside them."""
    lines = ["", "## Hyper-parameters", ""]
    searched = [r for r in records if r.get("search")]
    if not searched:
        return lines + ["No hyper-parameter search: every grid had one point (used as given)."]
    lines += [
        (
            "The point each split's inner search chose (its mean inner-CV score), with the grid points that failed "
            "(they are never chosen) and a chosen value at the lowest or highest value of its grid (numeric grids "
            "of three or more values: the optimum may lie outside the grid)."
        ),
        "",
    ]
    rows = []
    for record in searched:
        summary = search_summary(record)
        notes = [
            f"{edge['param']} at the {edge['edge']} grid value ({_value_text(edge['grid'][0])} … "
            f"{_value_text(edge['grid'][-1])}, {len(edge['grid'])} values)"
            for edge in grid_edges(record)
        ]
        notes += _extension_notes(record.get("grid_extension"))
        if summary["n_failed_points"]:
            notes.append(f"{summary['n_failed_points']} of {summary['n_points']} grid points failed")
        if record["status"] == "ok" and record.get("n_predicted_labels") == 0:
            notes.append(f"{NO_LABEL_MARK}: predicts no label on the test part")
        if record["status"] == "failed":
            chosen, score = "— (split failed)", MISSING
        else:
            chosen, score = _params_text(record.get("params")), _number(_chosen_score(record))
        rows.append([record["dataset"], record["method"], record["split"], chosen, score, "; ".join(notes)])
    header = ["dataset", "method", "split", "chosen", "inner score", "notes"]
    return lines + markdown_table(header, rows)


def _extension_notes(summary) -> list[str]:
    """The hyper-parameter notes of one record's grid extensions: what was added, and an edge left."""
    if not summary:
        return []
    notes = []
    added: dict = {}
    for entry in summary.get("extensions") or ():
        added.setdefault(entry["param"], []).append(entry)
    for name, entries in added.items():
        path = " → ".join([_value_text(entries[0]["from"]), *(_value_text(e["value"]) for e in entries)])
        notes.append(f"{name} grid extended {len(entries)}x ({path})")
    for edge in summary.get("at_edge") or ():
        notes.append(f"{edge['param']} still at the {edge['edge']} value: {_EDGE_REASONS[edge['reason']](edge)}")
    return notes


_EDGE_REASONS = {
    "limit": lambda edge: f"extension limit reached ({edge['extensions']} extensions)",
    "valid range": lambda edge: "no valid value beyond it (the parameter's valid range ends there)",
    "off": lambda edge: "grid extension off (grid_extensions = 0)",
}


def grid_extension_counts(records) -> list[dict]:
    """Count, per (dataset, method, parameter) of the searched splits, how its grid was extended.

    Parameters
    ----------
    records : iterable of mapping
        The run's records.

    Returns
    -------
    list of dict
        Each row: ``dataset``, ``method``, ``param``, ``n_searched`` (searched splits with an
        extension record), ``n_extended`` (splits whose search extended the parameter), ``added``
        (the values added, over all splits, sorted), ``limit`` (the runs' limit per parameter),
        and the splits whose choice is still at an edge when the search ended, by reason:
        ``at_edge_limit``, ``at_edge_valid_range``, ``at_edge_off``.  Records written before grid
        extension existed give no row.
    """
    rows = {}
    for (dataset, method), group in group_records(records).items():
        summaries = [r["grid_extension"] for r in group if r.get("search") and r.get("grid_extension")]
        for summary in summaries:
            for entry in summary.get("extensions") or ():
                row = _extension_row(rows, dataset, method, entry["param"], summary, len(summaries))
                row["added"].add(entry["value"])
            for name in {entry["param"] for entry in summary.get("extensions") or ()}:
                rows[dataset, method, name]["n_extended"] += 1
            for edge in summary.get("at_edge") or ():
                row = _extension_row(rows, dataset, method, edge["param"], summary, len(summaries))
                row["at_edge_" + edge["reason"].replace(" ", "_")] += 1
    return [{**row, "added": sorted(row["added"])} for row in rows.values()]


def _extension_row(rows, dataset, method, name, summary, n_searched) -> dict:
    return rows.setdefault((dataset, method, name), {
        "dataset": dataset, "method": method, "param": name, "n_searched": n_searched, "n_extended": 0,
        "added": set(), "limit": summary.get("limit"), "at_edge_limit": 0, "at_edge_valid_range": 0, "at_edge_off": 0,
    })  # fmt: skip


def _grid_extension_lines(extension_rows) -> list[str]:
    if not extension_rows:
        return []
    intro = (
        "Grid extensions: a chosen value at an edge of a numeric grid (three or more values) extends that grid one "
        "step beyond it (the ratio of its last two values for a log-spaced grid, their difference otherwise; never "
        "past the parameter's valid range) and the search runs again on the new points, at most `limit` times per "
        "parameter (docs/experiments.md). Still at an edge: the splits whose choice is at an edge when the search "
        "ended, because the limit was reached, because no valid value lies beyond it, or because extension was off."
    )
    header = ["dataset", "method", "parameter", "splits extended", "values added", "limit",
              "still at edge: limit", "valid range", "off"]  # fmt: skip
    rows = [
        [r["dataset"], r["method"], r["param"], f"{r['n_extended']}/{r['n_searched']}",
         ", ".join(map(_value_text, r["added"])) or MISSING, r["limit"], r["at_edge_limit"],
         r["at_edge_valid_range"], r["at_edge_off"]]
        for r in extension_rows
    ]  # fmt: skip
    return ["", "### Grid extensions", "", intro, "", *markdown_table(header, rows)]


def _grid_edge_lines(edge_counts) -> list[str]:
    lines = ["", "## Chosen values at a grid edge", ""]
    if not edge_counts:
        return lines + [
            "None: no chosen value of a numeric grid of three or more values is its lowest or highest value."
        ]
    intro = (
        "How often the search chose the lowest or the highest value of a numeric grid (of three or more values), "
        "out of the successful searched splits, on the grid as searched (with the values its extensions added): the "
        "optimum may lie beyond that edge; widen the grid there (`--grid METHOD.NAME=...`, docs/experiments.md), "
        "or allow more extensions (`--grid-extensions N`) unless the edge is the end of the parameter's valid range "
        "(see Grid extensions)."
    )
    header = ["dataset", "method", "parameter", "at lowest", "at highest", "splits searched", "grid"]
    rows = [
        [e["dataset"], e["method"], e["param"], e["lowest"], e["highest"], e["n_searched"],
         ", ".join(map(_value_text, e["grid"]))]
        for e in edge_counts
    ]  # fmt: skip
    return lines + [intro, "", *markdown_table(header, rows)]


def _plot_lines(plots, out_dir: Path) -> list[str]:
    if not plots:
        return []
    lines = ["", "## Plots"]
    if any(path.name.startswith("convergence_") for path in plots):
        lines += [
            "",
            "Convergence figures: the relative duality gap gap / max(1, |primal|) of each certificate, every split "
            "on one log scale, the dashed line the tolerance GAP_RTOL; and the primal objective relative to its "
            "last value (docs/reports.md).",
        ]
    for path in plots:
        relative = path.relative_to(out_dir).as_posix()
        lines += ["", f"![{path.stem}]({relative})"]
    return lines


# ----------------------------------------------------------------- the files
def _summary_rows(summary, comparison, baseline, deltas) -> list[dict]:
    """The rows of :func:`~.stats.summarize` with their verdicts and reference value joined in."""
    papers = {(d["dataset"], d["method"], d["metric"]): d for d in deltas}
    rows = []
    for row in summary:
        key = (row["dataset"], row["method"], row["metric"])
        paper = papers.get(key, {})
        extra = {
            **_verdict_columns(comparison.verdict(*key) if comparison is not None else None, ""),
            **{k: paper.get(k) for k in ("paper_mean", "paper_std", "delta", "delta_in_std")},
            "best_baseline": baseline.reference_of(row["dataset"]) if baseline is not None else None,
            **_verdict_columns(baseline.verdict(*key) if baseline is not None else None, "baseline_"),
        }
        rows.append({**row, **extra})
    return rows


def _verdict_columns(verdict, prefix: str) -> dict:
    """outcome, marker, statistic, pvalue, n_pairs of a verdict (None without one), names prefixed."""
    values = {
        "outcome": verdict.outcome if verdict else None,
        "marker": verdict.marker if verdict else None,
        "statistic": verdict.test.statistic if verdict else None,
        "pvalue": verdict.test.pvalue if verdict else None,
        "n_pairs": verdict.test.n if verdict else None,
    }
    return {prefix + name: value for name, value in values.items()}


def _baseline_document(baseline) -> dict | None:
    """summary.json's ``best_baseline``: the choice per dataset, the verdicts and their counts."""
    if baseline is None:
        return None
    return {
        "baselines": list(baseline.baselines),
        "selection_metric": baseline.selection_metric,
        "alpha": baseline.alpha,
        "best": {dataset: {"method": method, "mean": mean} for dataset, (method, mean) in baseline.best.items()},
        "win_tie_loss": {
            row: {method: counts._asdict() for method, counts in cells.items()}
            for row, cells in baseline.win_tie_loss().items()
        },
        "comparisons": [v.as_dict() for v in baseline.verdicts],
    }


def _split_rows(records) -> list[dict]:
    """One row per record and metric; a record without metrics (a failure) gives one row."""
    rows = []
    for r in records:
        common = {key: r.get(key) for key in SPLIT_COLUMNS if key not in ("metric", "value", "params")}
        common["params"] = json.dumps(jsonable(r.get("params") or {}), sort_keys=True)
        metrics = r.get("metrics") or {}
        for metric, value in metrics.items() or [(None, None)]:
            rows.append({**common, "metric": metric, "value": value})
    return rows


def _csv_cell(value):
    """None and NaN are empty cells."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return value


def _write_csv(path: Path, columns, rows) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows({k: _csv_cell(v) for k, v in row.items()} for row in rows)
    return path


def _read_config(path: Path) -> dict | None:
    if not path.exists():
        return None
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(config, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(config).__name__}")
    return config


def _reference_values(reference) -> dict:
    """A reference file read, or a mapping (method, dataset, metric) -> (mean, std, source) taken as is."""
    if reference is None:
        return {}
    if isinstance(reference, Mapping):
        return {key: ReferenceValue(*value) for key, value in reference.items()}
    return read_reference(reference)


def _plots(records, plot_dir: Path, plots) -> list[Path]:
    """``plots``: None draws them when matplotlib is there, True insists (ImportError naming the extra)."""
    if plots is False or (plots is None and not matplotlib_available()):
        return []
    return plots_from_records(records, plot_dir)


def write_report(
    records,
    out_dir,
    *,
    reference=None,
    reference_method=None,
    alpha: float = 0.05,
    metrics=None,
    title=None,
    plots=None,
    baselines=None,
) -> dict:
    """Write ``report.md``, ``summary.csv``, ``summary.json``, ``splits.csv`` (and plots) into ``out_dir``.

    Parameters
    ----------
    records : iterable of dict
        The run's records (one per method x dataset x split).
    out_dir : path
        Folder to write to (created if needed).  When it holds the run's
        ``config.json``, the report summarises that configuration.
    reference : path or mapping, optional
        The papers' numbers: a file for :func:`~.stats.read_reference`, or a mapping
        like its result, (method, dataset, metric) -> (mean, std, source).
    reference_method : str, optional
        The method every other one is t-tested against (markers, win/tie/loss).
    alpha : float
        Level of the paired t-tests (the papers use 0.05).
    metrics : iterable of str, optional
        Metric names to report (default: every metric in the records).
    title : str, optional
        First heading of the report (default "Experiment report").
    plots : bool or None
        None: PNG figures in ``out_dir/plots`` when matplotlib is importable; True:
        figures required (ImportError naming the ``plot`` extra without matplotlib);
        False: none.
    baselines : iterable of str, optional
        The methods that are ecosystem baselines (default: those registered by the
        ``baselines`` plugin).  With at least one of them and another method, the
        report tests every other method against the best of them on each dataset
        (:func:`~.stats.compare_to_best_baseline`).

    Returns
    -------
    dict
        ``report``, ``summary_csv``, ``summary_json``, ``splits_csv`` -> Path, and
        ``plots`` -> list of Path.
    """
    records = check_records(records)
    if not records:
        raise ValueError("no records to report")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = summarize(records, metrics)
    comparison = None
    if reference_method is not None:
        comparison = compare_to_reference(records, reference_method, metrics=metrics, alpha=alpha)
    baseline = compare_to_best_baseline(records, baselines, metrics=metrics, alpha=alpha)
    deltas = reference_deltas(summary, _reference_values(reference))
    runs = run_summary(records)
    failures = failure_rows(records)
    counts = failure_counts(records)
    edge_counts = grid_edge_counts(records)
    n_edges = n_grid_edges(edge_counts)
    extension_rows = grid_extension_counts(records)
    no_label = no_label_models(records)
    share_rows = no_label_shares(records)
    constant_rows = constant_label_counts(records)
    config = _read_config(out_dir / "config.json")
    plots_written = _plots(records, out_dir / "plots", plots)

    title = title or "Experiment report"
    n_datasets = len(in_order(records, "dataset"))
    lines = [
        *_heading_lines(records, title, config, counts, n_edges, len(no_label)),
        *_results_lines(summary, comparison, baseline, constant_rows),
    ]
    if comparison is not None:
        lines += _win_tie_loss_lines(comparison, n_datasets)
    if baseline is not None:
        lines += _baseline_lines(summary, baseline, n_datasets)
    if deltas:
        lines += _reference_lines(deltas)
    lines += [
        *_runs_lines(runs, thresholds_used(records)),
        *_no_label_lines(share_rows),
        *_hyperparameter_lines(records),
        *_grid_edge_lines(edge_counts),
        *_grid_extension_lines(extension_rows),
        *_constant_label_lines(constant_rows),
        *_failure_lines(failures, counts, no_label),
        *_plot_lines(plots_written, out_dir),
    ]

    summary_rows = _summary_rows(summary, comparison, baseline, deltas)
    document = {
        "title": title,
        "reference_method": reference_method,
        "alpha": alpha if comparison is not None else None,
        "metrics": in_order(summary, "metric"),
        "config": config,
        "summary": summary_rows,
        "win_tie_loss": {
            row: {method: counts._asdict() for method, counts in cells.items()}
            for row, cells in (comparison.win_tie_loss().items() if comparison else ())
        },
        "comparisons": [v.as_dict() for v in comparison.verdicts] if comparison else [],
        "best_baseline": _baseline_document(baseline),
        "reference_deltas": deltas,
        "runs": runs,
        **counts,
        "failures": failures,
        "chosen": [
            {
                **{k: r[k] for k in ("dataset", "method", "split", "status")},
                "params": r.get("params"),
                **search_summary(r),
                "grid_edges": grid_edges(r),
                "grid_extension": r.get("grid_extension"),
                "n_no_label_rows": r.get("n_no_label_rows"),
            }
            for r in records
            if r.get("search")
        ],
        "grid_edges": edge_counts,
        "n_grid_edges": n_edges,
        "grid_extensions": extension_rows,
        "no_label": share_rows,
        "no_label_models": no_label,
        "n_no_label_models": len(no_label),
        "constant_labels": constant_rows,
        "plots": [p.relative_to(out_dir).as_posix() for p in plots_written],
    }
    paths = {
        "report": out_dir / "report.md",
        "summary_csv": out_dir / "summary.csv",
        "summary_json": out_dir / "summary.json",
        "splits_csv": out_dir / "splits.csv",
    }
    paths["report"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    _write_csv(paths["summary_csv"], SUMMARY_COLUMNS, summary_rows)
    paths["summary_json"].write_text(json.dumps(jsonable(document), indent=2, allow_nan=False) + "\n", encoding="utf-8")
    _write_csv(paths["splits_csv"], SPLIT_COLUMNS, _split_rows(records))
    return {**paths, "plots": plots_written}
