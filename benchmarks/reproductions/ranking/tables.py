"""The Markdown tables of docs/methods/ranking.md "Reproduction", from the runs' stores' summaries.

Per dataset: Table 2's three measures in percent, ours (mean ± std over the 10 splits) beside the
paper's, with the markers of the runs' reports -- against CMLFS (``•`` CMLFS significantly better
than this method, ``◦`` worse; two-sided paired t-test at 5%) and against the best ecosystem
baseline (``[•]`` that baseline significantly better, ``[◦]`` worse) -- then the paper's claims as targets (CMLFS not below LaRank in macro AUC).

    python benchmarks/reproductions/ranking/tables.py
"""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the reproductions' shared helpers

from stores import require_stores  # noqa: E402

RUNS = ["table2", "arts"]
MEASURES = {"macro_auc": "macro AUC", "micro_f1": "micro F1", "macro_f1": "macro F1"}
NAMES = {"br": "SVM (`br`, CD)", "larank": "LaRank SVM", "clarank": "CLaRank SVM", "mlfs": "MLFS", "cmlfs": "CMLFS",
         "ovr_svc": "`ovr_svc`", "ovr_linear": "`ovr_linear`", "mlknn": "`mlknn`"}


def percent(mean, std) -> str:
    return "—" if mean == "" else f"{100 * float(mean):.2f} ± {100 * float(std):.2f}"


def read_summary(run: str) -> dict:
    """(dataset, method, metric) -> the summary.csv row."""
    with open(HERE / "runs" / run / "summary.csv", newline="") as f:
        return {(r["dataset"], r["method"], r["metric"]): r for r in csv.DictReader(f)}


def table(summary: dict, dataset: str) -> list[str]:
    methods = list(dict.fromkeys(m for d, m, _ in summary if d == dataset))
    best = next(r["best_baseline"] for (d, _, _), r in summary.items() if d == dataset and r["best_baseline"])
    lines = [f"**{dataset}** (best ecosystem baseline by macro AUC: `{best}`)", "",
             "| method | " + " | ".join(f"{name} ours | paper" for name in MEASURES.values()) + " |",
             "| --- |" + " --- | --- |" * len(MEASURES)]
    for method in methods:
        cells = []
        for metric in MEASURES:
            r = summary[(dataset, method, metric)]
            markers = " ".join(x for x in (r["marker"], f"[{r['baseline_marker']}]" if r["baseline_marker"] else "") if x)
            cells.append(f"{percent(r['mean'], r['std'])} {markers}".rstrip())
            cells.append(percent(r["paper_mean"], r["paper_std"]) if r["paper_mean"] else "")
        lines.append(f"| {NAMES[method]} | " + " | ".join(cells) + " |")
    return lines + [""]


def targets(summary: dict) -> list[str]:
    def mean(dataset, method, metric="macro_auc"):
        return 100 * float(summary[(dataset, method, metric)]["mean"])

    lines = ["| target | dataset | evidence (macro AUC, or ours - paper) | met |", "| --- | --- | --- | --- |"]
    for dataset in ("scene", "yeast"):
        for better, worse in (("cmlfs", "larank"), ("clarank", "larank")):
            a, b = mean(dataset, better), mean(dataset, worse)
            lines.append(f"| {NAMES[better]} >= {NAMES[worse]} | {dataset} | {a:.2f} vs {b:.2f} | {'yes' if a >= b else 'no'} |")
        for method in ("larank", "cmlfs"):
            for metric, name in MEASURES.items():
                r = summary[(dataset, method, metric)]
                delta = 100 * (float(r["mean"]) - float(r["paper_mean"]))
                lines.append(f"| {NAMES[method]} within 3 points of the paper ({name}) | {dataset} | "
                             f"{delta:+.2f} points | {'yes' if abs(delta) <= 3 else 'no'} |")
    return lines


def failed_fits(run: str) -> str:
    """The run's failed-fit count, as its summary.json states it (zero is expected)."""
    counts = json.loads((HERE / "runs" / run / "summary.json").read_text())
    return (f"Run `{run}`: failed fits {counts['n_failed_fits']} ({counts['n_failed_inner_fits']} inside the "
            f"searches); failed splits {counts['n_failed_splits']}.")


def main() -> None:
    require_stores(HERE, RUNS)
    out = []
    for run in RUNS:
        summary = read_summary(run)
        out += [failed_fits(run), ""]
        for dataset in dict.fromkeys(d for d, _, _ in summary):
            out += table(summary, dataset)
        if run == "table2":
            out += targets(summary) + [""]
    print("\n".join(out))


if __name__ == "__main__":
    main()
