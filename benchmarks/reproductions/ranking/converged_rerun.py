"""MLFS and CMLFS of the Table 2 reproduction before and after the proximal bundle (docs/methods/ranking.md).

Reads the results stores of ``runs/table2`` and ``runs/arts`` (Kelley's cutting plane, stopped
at its 10-iteration budget) and ``runs/table2_fs`` and ``runs/arts_fs`` (``table2_fs.toml``,
``arts_fs.toml``: the same protocols, splits, selection and grids, every fit converged by the
proximal bundle) and prints, per method and dataset: macro AUC, micro F1 and macro F1 (mean ± std over the splits, percent), the refit's
time, the relative bound gap of the refit (the ConvergenceWarning's for the old run, the
outer certificate's for the new), how many fits of the search and refits warned, and the
parameters chosen.

    python benchmarks/reproductions/ranking/converged_rerun.py
"""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RUNS, ARTS = ("table2", "table2_fs"), ("arts", "arts_fs")
GAP = re.compile(r"relative bound gap \(u_t - l_t\) / max\(1, \|u_t\|\) = ([0-9.e+-]+)")


def records(run: str, method: str, dataset: str) -> list[dict]:
    path = HERE / "runs" / run / "results.jsonl"
    with open(path) as lines:
        found = [json.loads(line) for line in lines]
    chosen = [r for r in found if r["method"] == method and r["dataset"] == dataset and r["status"] == "ok"]
    return sorted(chosen, key=lambda r: r["split"])


def refit_gap(record) -> float:
    outer = record["certificates"][-1] if record["certificates"] else {}
    if outer.get("solver") == "CuttingPlaneSolver":
        return float(outer["relative_gap"])
    for warning in record["warnings"]:
        match = GAP.search(warning)
        if match:
            return float(match.group(1))
    return float("nan")


def warned(record) -> tuple[int, int]:
    """Convergence warnings of the search's fits (one string per fit that warned) and the refit, and the fits."""
    fits = sum(len(point.get("fold_scores", [])) for point in record["search"]) + 1
    flagged = sum(1 for point in record["search"] for w in (point.get("warnings") or []) if "did not converge" in w)
    flagged += any("did not converge" in w for w in record["warnings"])
    return flagged, fits


def summary(run: str, method: str, dataset: str) -> list[str] | None:
    found = records(run, method, dataset)
    if not found:
        return None
    cells = []
    for metric in ("macro_auc", "micro_f1", "macro_f1"):
        values = 100 * np.array([r["metrics"][metric] for r in found])
        cells.append(f"{values.mean():.2f} ± {values.std(ddof=1) if len(values) > 1 else 0.0:.2f}")
    gaps = np.array([refit_gap(r) for r in found])
    flagged = np.sum([warned(r) for r in found], axis=0)
    chosen = collections.Counter(
        ", ".join(f"{k} {v:g}" for k, v in sorted(r["params"].items())) for r in found
    ).most_common()
    return [
        run,
        str(len(found)),
        *cells,
        f"{np.mean([r['fit_time'] for r in found]):.2f}",
        f"{np.nanmin(gaps):.2g}–{np.nanmax(gaps):.2g}",
        f"{flagged[0]} of {flagged[1]}",
        "; ".join(f"{params} ({count})" for params, count in chosen),
    ]


def main() -> None:
    header = ["run", "splits", "macro AUC", "micro F1", "macro F1", "refit s", "refit gap", "warned fits", "chosen"]
    for method in ("cmlfs", "mlfs"):
        for dataset, runs in (("scene", RUNS), ("yeast", RUNS), ("yahoo-arts-19", ARTS)):
            print(f"\n**{method.upper()}, {dataset}**\n")
            print("| " + " | ".join(header) + " |")
            print("|" + " --- |" * len(header))
            for run in runs:
                if not (HERE / "runs" / run / "results.jsonl").exists():
                    continue
                row = summary(run, method, dataset)
                if row is not None:
                    print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
