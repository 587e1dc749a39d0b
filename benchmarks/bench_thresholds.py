"""Thresholds as a part: micro-F1 and macro-F1 of the kernel methods against BR, and what tuning costs.

Each method at its default hyper-parameters, in 3-fold iterative-stratified cross-validation
(seed 0, the folds ``mlcore evaluate --cv 3`` draws), features standardised on each training
part (``preprocess="standardize"``, as ``mlcore evaluate --preprocess standardize`` does), with every threshold given
by ``--thresholds``.  Labels that take one value in a training part (medical, enron) are
predicted at that value and the method is fitted on the others (the runner's
``constant_labels="predict_constant"``); their number is recorded.

Every (dataset, method, threshold, fold) is one JSON line appended to ``--out`` as soon as it
is measured (a rerun skips the lines already there), so a run cut short keeps what it did.
``--table`` prints the Markdown tables of docs/methods/thresholds.md from that file::

    nohup python benchmarks/bench_thresholds.py --out /tmp/thresholds.jsonl > /tmp/thresholds.log 2>&1 &
    python benchmarks/bench_thresholds.py --out /tmp/thresholds.jsonl --table

BLAS is held to one thread (threadpoolctl) so that the times of the fits with and without
tuning compare on the same footing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import data_dir  # noqa: E402

DATASETS = ("emotions", "yeast", "scene", "medical", "enron")
METHODS = ("br", "bsvm", "mlrl", "mtrl", "concept_network")
THRESHOLDS = ("zero", "tuned_f1", "tuned_micro_f1", "tuned_macro_f1", "proportional_cut", "rank_cut")
N_FOLDS = 3
SEED = 0
#: The threshold the main table compares (micro- and macro-F1 together).
TUNED = "tuned_f1"


def _key(row) -> tuple:
    return row["dataset"], row["method"], row["thresholding"], row["fold"]


def _done(out: Path) -> set:
    if not out.exists():
        return set()
    return {_key(json.loads(line)) for line in out.read_text().splitlines() if line.strip()}


def measure(datasets, methods, thresholds, out: Path) -> None:
    from threadpoolctl import threadpool_limits

    from multilabel_core.experiments.config import load_data
    from multilabel_core.experiments.constant_labels import constant_columns, fit_labels
    from multilabel_core.metrics import evaluate
    from multilabel_core.model_selection import IterativeStratifiedKFold
    from multilabel_core.plugins import make_method

    threadpool_limits(1)
    done = _done(out)
    _warm_up(methods)
    for name in datasets:
        dataset = load_data(str(data_dir() / f"{name}.arff"))
        X, Y = dataset.X, np.asarray(dataset.Y.toarray() if hasattr(dataset.Y, "toarray") else dataset.Y)
        splits = list(IterativeStratifiedKFold(N_FOLDS, shuffle=True, random_state=SEED).split(X, Y))
        for fold, (train, test) in enumerate(splits):
            X_train, X_test, Y_train = X[train], X[test], Y[train]
            n_constant = int(constant_columns(Y_train)[0].size)
            for method in methods:
                for thresholding in thresholds:
                    row = {"dataset": name, "method": method, "thresholding": thresholding, "fold": fold}
                    if _key(row) in done:
                        continue
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        start = time.perf_counter()
                        try:
                            model = fit_labels(
                                lambda Y_columns: make_method(
                                    method, preprocess="standardize", thresholding=thresholding
                                ).fit(X_train, Y_columns),
                                Y_train,
                                "predict_constant",
                            )
                        except Exception as exc:  # recorded, the run goes on
                            row.update(status="failed", error=f"{type(exc).__name__}: {exc}")
                        else:
                            fit_time = time.perf_counter() - start
                            scores, predictions = model.decision_function(X_test), model.predict(X_test)
                            metrics = evaluate(Y[test], scores, predictions, ["micro_f1", "macro_f1"])
                            row.update(
                                status="ok",
                                fit_time=fit_time,
                                empty_rows=float(np.mean(predictions.sum(axis=1) == 0)),
                                **metrics,
                            )
                    row.update(
                        n_constant_labels=n_constant,
                        warnings=sorted({f"{w.category.__name__}: {str(w.message)[:160]}" for w in caught}),
                    )
                    with out.open("a") as handle:
                        handle.write(json.dumps(row) + "\n")
                    shown = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items() if k != "warnings"}
                    print(json.dumps(shown), flush=True)


def _warm_up(methods) -> None:
    """One untimed fit of each method, so that the first timed fit does not pay for imports and first calls."""
    from multilabel_core.datasets import make_correlated_multilabel
    from multilabel_core.plugins import make_method

    data = make_correlated_multilabel(n_samples=60, n_features=5, n_labels=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in methods:
            make_method(method, preprocess="standardize").fit(data.X, data.Y)


def _mean(rows, key):
    values = [r[key] for r in rows if r.get("status") == "ok"]
    return float(np.mean(values)) if values else float("nan")


def table(out: Path, datasets, methods, thresholds) -> str:
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    cells = {}
    for row in rows:
        cells.setdefault((row["dataset"], row["method"], row["thresholding"]), []).append(row)

    def cell(d, m, t):
        group = cells.get((d, m, t), [])
        ok = [r for r in group if r.get("status") == "ok"]
        return group, ok

    lines = []
    # Main table: each method with the tuned threshold against BR (zero and tuned).
    header = ["dataset", "method", "folds", "micro-F1", "/ br", "/ br tuned", "macro-F1", "/ br", "/ br tuned",
              "fit s (zero)", "fit s (tuned)", "x time"]  # fmt: skip
    lines += ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for d in datasets:
        _, br0 = cell(d, "br", "zero")
        _, brt = cell(d, "br", TUNED)
        base = {k: (_mean(br0, k), _mean(brt, k)) for k in ("micro_f1", "macro_f1")}
        for m in methods:
            for t in (["zero", TUNED] if m == "br" else [TUNED]):
                group, ok = cell(d, m, t)
                if not group:
                    continue
                _, zero = cell(d, m, "zero")
                values = []
                for k in ("micro_f1", "macro_f1"):
                    v = _mean(ok, k)
                    r0, rt = v / base[k][0], v / base[k][1]
                    values += [f"{v:.4f}", _ratio(r0), _ratio(rt)]
                t0, tt = _mean(zero, "fit_time"), _mean(ok, "fit_time")
                label = f"{m} ({'zero' if t == 'zero' else 'tuned'})"
                lines.append(
                    "| " + " | ".join([d, label, f"{len(ok)}/{N_FOLDS}", *values, f"{t0:.2f}", f"{tt:.2f}",
                                       f"{tt / t0:.1f}"]) + " |"  # fmt: skip
                )
    lines.append("")
    # Every threshold: micro-F1 / macro-F1 (mean over the folds) and the share of test rows without a label.
    header = ["dataset", "method", *thresholds]
    lines += ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for d in datasets:
        for m in methods:
            row = [d, m]
            for t in thresholds:
                group, ok = cell(d, m, t)
                if not ok:
                    row.append("—" if not group else "failed")
                else:
                    micro, macro, empty = (_mean(ok, key) for key in ("micro_f1", "macro_f1", "empty_rows"))
                    row.append(f"{micro:.3f} / {macro:.3f} ({100 * empty:.0f}%)")
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def _ratio(value: float) -> str:
    if not np.isfinite(value):
        return "—"
    text = f"{value:.3f}"
    return f"**{text}**" if value < 1.0 else text


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="JSON-lines file of the measurements (appended)")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    parser.add_argument("--thresholds", nargs="+", default=list(THRESHOLDS))
    parser.add_argument("--table", action="store_true", help="print the tables from --out instead of measuring")
    args = parser.parse_args(argv)
    if args.table:
        print(table(args.out, args.datasets, args.methods, args.thresholds))
    else:
        measure(args.datasets, args.methods, args.thresholds, args.out)


if __name__ == "__main__":
    main()
