"""The Markdown tables of docs/methods/mlrl.md "Reproduction", from the runs' stores' records.

For each run: per dataset, the five measures of MLRL section 5.3 with the paper's mean +- std beside
ours for the paper's methods, our ecosystem baselines, the t-test markers against the run's
reference method (the report's ``reference_method``; MLRL Tables II-VI: ``•`` the reference is
significantly better than this method, ``◦`` worse, paired t-test at 5%) and against the best
ecosystem baseline (``[•]``/``[◦]``), the win/tie/loss counts (Table VII), and the targets of
Zhang & Yeung's claims (MLRL not significantly worse than BSVM; SSMLRL not below MLRL).

The run ``mtrl`` (MTRL, Zhang & Yeung, A Convex Formulation for Learning Task Relationships in
Multi-Task Learning, beside MLRL, BSVM and the RBF SVC; no paper numbers) adds the (lam1, lam2) each
split chose and, per dataset, the verdict of its target: MTRL's objective contains BSVM's
(lam2 -> 0), so it must never be significantly worse than BSVM in ranking loss or average
precision; and the measures where it is better than both MLRL and BSVM.

    python benchmarks/reproductions/mlrl/tables.py [RUN ...]    # default: every run of run.sh
"""

from __future__ import annotations

import argparse
import math
import tomllib
import sys
from pathlib import Path

from multilabel_core.experiments import read_records
from multilabel_core.experiments.diagnostics import failure_counts, grid_edge_counts
from multilabel_core.experiments.stats import (
    compare_to_best_baseline,
    compare_to_reference,
    read_reference,
    summarize,
)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the reproductions' shared helpers

from stores import require_stores  # noqa: E402

RUNS = ["supervised", "supervised_lowgrid", "semi_supervised", "semi_supervised_lowgrid", "rcv1", "rcv1_lowlam", "mtrl"]
MEASURES = ["hamming_loss", "one_error", "coverage", "ranking_loss", "average_precision"]
SHORT = {"hamming_loss": "HL ↓", "one_error": "OE ↓", "coverage": "Cov ↓", "ranking_loss": "RL ↓",
         "average_precision": "AP ↑"}


def cell(mean: float, std: float) -> str:
    if not math.isfinite(mean):
        return "—"
    return f"{mean:.4f} ± {std:.4f}" if math.isfinite(std) else f"{mean:.4f}"


def run_tables(name: str) -> list[str]:
    config = tomllib.loads((HERE / f"{name}.toml").read_text())
    records = read_records(HERE / "runs" / name)
    reference_method = config["report"]["reference_method"]
    reference = config["report"].get("reference")  # the mtrl run has no paper numbers
    paper = read_reference(HERE.parents[2] / reference) if reference else {}
    summary = {(r["dataset"], r["method"], r["metric"]): r for r in summarize(records, MEASURES)}
    against_ref = compare_to_reference(records, reference_method, metrics=MEASURES)
    against_best = compare_to_best_baseline(records, metrics=MEASURES)
    methods = list(dict.fromkeys(r["method"] for r in records))
    datasets = list(dict.fromkeys(r["dataset"] for r in records))
    lines = [f"### Run `{name}` ({len(records)} records; reference method `{reference_method}`)", ""]
    counts = failure_counts(records)
    lines += [f"Failed fits: {counts['n_failed_fits']} ({counts['n_failed_inner_fits']} inside the searches, "
              f"at {counts['n_failed_points']} grid points); failed splits: {counts['n_failed_splits']}.", ""]
    edges = grid_edge_counts(records)
    if edges:
        lines += ["Chosen values at a grid edge (splits): " + "; ".join(
            f"{e['dataset']} {e['method']} {e['param']} "
            + ", ".join(f"{e[side]} at {side}" for side in ("lowest", "highest") if e[side])
            + f" of {e['n_searched']}" for e in edges) + ".", ""]
    for dataset in datasets:
        best = against_best.best.get(dataset, (None,))[0] if against_best else None
        header = ["measure"]
        for method in methods:
            if any(key[:2] == (method, dataset) for key in paper):
                header.append(f"{method} (paper)")
            header.append(method + (" (best baseline)" if method == best else ""))
        lines += [f"**{dataset}**", "", "| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
        for metric in MEASURES:
            row = [SHORT[metric]]
            for method in methods:
                if (value := paper.get((method, dataset, metric))) is not None:
                    row.append(cell(value.mean, value.std))
                ours = summary.get((dataset, method, metric), {"mean": math.nan, "std": math.nan})
                text = cell(ours["mean"], ours["std"])
                verdict = against_ref.verdict(dataset, method, metric)
                if verdict is not None and verdict.marker:
                    text += " " + verdict.marker
                verdict = against_best.verdict(dataset, method, metric) if against_best else None
                if verdict is not None and verdict.marker:
                    text += f" [{verdict.marker}]"
                row.append(text)
            lines.append("| " + " | ".join(row) + " |")
        if reference_method == "mtrl":
            lines += ["", *mtrl_choices(records, dataset), *mtrl_verdict(against_ref, summary, dataset), ""]
            continue
        chosen = sorted({str(r["params"]) for r in records if r["dataset"] == dataset and r["method"] == reference_method})
        lines += ["", f"{reference_method}'s chosen parameters over the splits: {', '.join(chosen)}", ""]
    lines += win_tie_loss(against_ref, reference_method) + targets(name, summary, against_ref, paper, datasets)
    return lines


def mtrl_choices(records, dataset: str) -> list[str]:
    """The (lam1, lam2) of each split, with the end of the grid it sits at (the BSVM or the MLRL limit)."""
    chosen = sorted((r["split"], r["params"]) for r in records
                    if r["dataset"] == dataset and r["method"] == "mtrl" and r["status"] == "ok")
    grid = {name: sorted({e["params"][name] for r in records if r["dataset"] == dataset and r["method"] == "mtrl"
                          for e in r.get("search") or []}) for name in ("lam1", "lam2")}

    def text(params):
        ends = [limit for name, limit in (("lam2", "BSVM end"), ("lam1", "MLRL end"))
                if grid[name] and params[name] == grid[name][0]]
        return f"({params['lam1']:g}, {params['lam2']:g})" + (f" {'/'.join(ends)}" if ends else "")

    others = {m: sorted({r["params"]["lam"] for r in records if r["dataset"] == dataset and r["method"] == m
                         and r["status"] == "ok"}) for m in ("mlrl", "bsvm")}
    splits: dict = {}
    for split, params in chosen:
        splits.setdefault(text(params), []).append(str(split))
    return [f"mtrl's chosen (lam1, lam2): "
            + "; ".join(f"{point} on splits {', '.join(numbers)}" for point, numbers in splits.items())
            + " (the lowest lam2 of the grid is the BSVM end, the lowest lam1 the MLRL end); "
            + "; ".join(f"{m}'s lam: {', '.join(f'{v:g}' for v in values)}" for m, values in others.items()) + "."]


def mtrl_verdict(comparison, summary, dataset: str) -> list[str]:
    """MTRL's target on one dataset: not significantly worse than BSVM in RL and AP; where it beats MLRL and BSVM."""
    def outcome(method, metric):
        verdict = comparison.verdict(dataset, method, metric)
        return verdict.outcome, verdict.test.pvalue

    worse = [SHORT[m].split()[0] for m in ("ranking_loss", "average_precision") if outcome("bsvm", m)[0] == "loss"]
    tests = ", ".join(f"{SHORT[m].split()[0]} {outcome('bsvm', m)[0]} (p = {outcome('bsvm', m)[1]:.3g})"
                      for m in ("ranking_loss", "average_precision"))
    significant = [SHORT[m].split()[0] for m in MEASURES if all(outcome(o, m)[0] == "win" for o in ("mlrl", "bsvm"))]

    def better(metric, method):
        sign = 1.0 if summary[(dataset, "mtrl", metric)]["greater_is_better"] else -1.0
        return sign * (summary[(dataset, "mtrl", metric)]["mean"] - summary[(dataset, method, metric)]["mean"]) > 0

    in_mean = [SHORT[m].split()[0] for m in MEASURES if better(m, "mlrl") and better(m, "bsvm")]
    return [f"Verdict on {dataset}: MTRL significantly worse than BSVM in RL or AP: "
            f"{'yes (' + ', '.join(worse) + '), target missed' if worse else 'no, target met'} ({tests}). "
            f"Significantly better than both MLRL and BSVM in: {', '.join(significant) or 'none'}; "
            f"better mean than both in: {', '.join(in_mean) or 'none'}."]


def win_tie_loss(comparison, reference_method: str) -> list[str]:
    table = comparison.win_tie_loss()
    lines = [f"Win/tie/loss of `{reference_method}` over the datasets (Table VII):", "",
             "| measure | " + " | ".join(comparison.methods) + " |", "|" + " --- |" * (1 + len(comparison.methods))]
    for row, counts in table.items():
        lines.append(f"| {row} | " + " | ".join(str(counts[m]) for m in comparison.methods) + " |")
    return lines + [""]


def targets(name, summary, comparison, paper, datasets) -> list[str]:
    lines = []
    if comparison.reference in ("mlrl", "mtrl") and "bsvm" in comparison.methods:
        # Both contain BSVM (Omega = I; lam2 -> 0): neither may be significantly worse than it.
        for metric in ("ranking_loss", "average_precision"):
            outcomes = {d: comparison.verdict(d, "bsvm", metric).outcome for d in datasets}
            met = all(o != "loss" for o in outcomes.values())
            lines.append(f"- Target {comparison.reference.upper()} not significantly worse than BSVM in {metric}: "
                         f"{'met' if met else 'missed'} ({', '.join(f'{d} {o}' for d, o in outcomes.items())}).")
    if comparison.reference == "mlrl" and "yeast" in datasets:
        within = [m for m in MEASURES if (v := paper.get(("mlrl", "yeast", m)))
                  and abs(summary[("yeast", "mlrl", m)]["mean"] - v.mean) <= 2 * v.std]
        lines.append(f"- Target MLRL on yeast within two paper stds on >= 3 of 5 measures: "
                     f"{'met' if len(within) >= 3 else 'missed'} ({len(within)}: {', '.join(within) or 'none'}).")
    if comparison.reference == "ssmlrl":
        ap = {(d, m): summary[(d, m, "average_precision")]["mean"]
              for d in datasets for m in ("ssmlrl", "mlrl") if (d, m, "average_precision") in summary}
        better = [d for d in datasets if ap.get((d, "ssmlrl"), math.nan) >= ap.get((d, "mlrl"), math.nan)]
        lines.append(f"- Target SSMLRL >= MLRL in average precision on >= 2 of 3: "
                     f"{'met' if len(better) >= 2 else 'missed'} ({', '.join(better) or 'none'}).")
    return lines + [""] if lines else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", default=RUNS)
    names = parser.parse_args().runs
    require_stores(HERE, names)
    for name in names:
        print("\n".join(run_tables(name)))


if __name__ == "__main__":
    main()
