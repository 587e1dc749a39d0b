"""Measured tables for a reproduction whose paper's numbers are not at hand: ours, side by side, on the same splits.

Used by the ``tables.py`` of the reproductions of methods added as compositions (``llsf``, ``trace_ls``): each
reads the ``runs/*/results.jsonl`` the runner wrote (``mlcore compare``), and writes ``REPRODUCTION.md`` with, per
dataset, mean ± standard deviation over the splits of every method and measure, the paired t-test of the focus
method against each other method on the same splits (``•`` the focus method significantly better, ``◦``
significantly worse, at 5 %), the hyper-parameters chosen, and the certificates and failures (refused grid points
included) per method.  Nothing here is compared with a paper's value: where a paper's tables were reachable the
reproductions use a reference CSV instead (benchmarks/reproductions/lieml/tables.py).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

from multilabel_core.experiments.stats import compare_to_reference, run_summary, summarize
from stores import require_stores

#: The measures of the tables, with their direction (↓ lower is better).
MEASURES = {"average_precision": "AP ↑", "ranking_loss": "RL ↓", "one_error": "OE ↓", "coverage_normalized": "Cov/L ↓",
            "hamming_loss": "HL ↓", "micro_f1": "miF1 ↑", "macro_f1": "maF1 ↑"}  # fmt: skip


def read_records(here: Path, runs: list[str], labelled: tuple[str, ...] = ()) -> list[dict]:
    """The records of ``runs`` (folders under ``here/runs``, in order), one per (dataset, method, split).

    A run named in ``labelled`` is a variant: its methods are shown as ``method [run]``.  Any other run supplements
    the ones before it: its record of a (dataset, method, split) replaces an earlier *failed* one (a data set first
    run with a setting that refused it), never a successful one.
    """
    chosen: dict[tuple, dict] = {}
    for run in runs:
        path = here / "runs" / run / "results.jsonl"
        if not path.is_file():
            continue
        with path.open(encoding="utf-8") as handle:
            for record in (json.loads(line) for line in handle if line.strip()):
                name = record["method"] + (f" [{run}]" if run in labelled else "")
                key = (record["dataset"], name, record["split"])
                if key not in chosen or (chosen[key]["status"] != "ok" and record["status"] == "ok"):
                    chosen[key] = record | {"method": name}
    return list(chosen.values())


def _cell(mean: float, std: float) -> str:
    if not math.isfinite(mean):
        return "–"
    return f"{mean:.3f} ± {std:.3f}" if math.isfinite(std) else f"{mean:.3f}"


def dataset_lines(dataset: str, summary, comparison, focus: str) -> list[str]:
    rows = {(r["method"], r["metric"]): r for r in summary if r["dataset"] == dataset}
    methods = list(dict.fromkeys(m for m, _ in rows))
    if not methods:
        return [f"### {dataset}", "", "Not run.", ""]
    n = max(r["n"] for r in rows.values())
    lines = [f"### {dataset} ({n} splits)", "", "| method | " + " | ".join(MEASURES.values()) + " |",
             "| --- |" + " --- |" * len(MEASURES)]  # fmt: skip
    for method in methods:
        cells = []
        for metric in MEASURES:
            row = rows.get((method, metric))
            cell = "–" if row is None else _cell(row["mean"], row["std"])
            if row is not None and row["n"] < n:
                cell += f" ({row['n']} splits)"
            verdict = comparison.verdict(dataset, method, metric) if method != focus else None
            if verdict is not None and verdict.marker:
                cell += f" {verdict.marker}"
            cells.append(cell)
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return lines + [""]


def search_lines(records, focus_methods: list[str]) -> list[str]:
    lines = ["## Hyper-parameters chosen (count over the splits)", "", "| dataset | method | chosen |", "| --- | --- | --- |"]
    for (dataset, method), chosen in sorted(_chosen(records, focus_methods).items()):
        lines.append(f"| {dataset} | {method} | " + "; ".join(f"{p}: {k}" for p, k in chosen.most_common()) + " |")
    refused = Counter((r["dataset"], r["method"], (s.get("error") or "")[:160]) for r in records
                      for s in r.get("search") or [] if s.get("status") != "ok")  # fmt: skip
    if refused:
        lines += ["", "Grid points refused or failed in the inner search (count, first words of the error):", ""]
        lines += [f"- {dataset} {method}: {count} x `{error}`" for (dataset, method, error), count in sorted(refused.items())]
    return lines + [""]


def _chosen(records, focus_methods):
    chosen: dict[tuple, Counter] = {}
    for r in records:
        if r["status"] == "ok" and r["method"].split(" ")[0] in focus_methods:
            params = ", ".join(f"{k}={v}" for k, v in sorted(r["params"].items()) if k != "tol")
            chosen.setdefault((r["dataset"], r["method"]), Counter())[params or "(none)"] += 1
    return chosen


def certificate_lines(records) -> list[str]:
    lines = ["## Certificates and failures", "",
             "| dataset | method | splits | failed | converged (of checked) | largest relative gap | warnings | fit s |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for row in run_summary(records):
        lines.append(f"| {row['dataset']} | {row['method']} | {row['n_splits']} | {row['n_failed']} | "
                     f"{row['n_converged']}/{row['n_checked']} | {row['max_relative_gap']:.2g} | {row['n_warnings']} | "
                     f"{row['fit_time']:.1f} |")  # fmt: skip
    return lines + [""]


def write(here: Path, runs: list[str], focus: str, title: str, preamble: list[str], labelled: tuple[str, ...] = ()) -> str:
    """Write ``here/REPRODUCTION.md`` from the runs (:func:`read_records`) and return its text."""
    require_stores(here, runs)
    records = read_records(here, runs, labelled)
    summary = summarize(records, metrics=list(MEASURES))
    comparison = compare_to_reference(records, focus, metrics=list(MEASURES))
    datasets = list(dict.fromkeys(r["dataset"] for r in records))
    lines = [f"# {title}", "", *preamble, "",
             f"Mean ± standard deviation over the splits. •/◦: {focus} significantly better/worse than that method "
             "(paired t-test over the same splits, 5 %); none on a single split.", "", "## Tables", ""]  # fmt: skip
    for dataset in datasets:
        lines += dataset_lines(dataset, summary, comparison, focus)
    lines += search_lines(records, [focus]) + certificate_lines(records)
    text = "\n".join(lines)
    (here / "REPRODUCTION.md").write_text(text, encoding="utf-8")
    return text
