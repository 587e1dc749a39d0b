"""CMLFS Figure 2: macro AUC against the number of selected features, MLFS and CMLFS.

For m in ``--m`` (default 5, 10, 15, 20, 30, 50) MLFS and CMLFS are fitted on the first
``--splits`` splits of the Table 2 protocol (repeated_fixed_train, seed 0: 1000 training rows,
the rest for testing; features standardised on the training part) of scene and yeast, at the
C and mu chosen most often by the Table 2 run's inner cross-validation (read from its results
store, ``--table2``).  The x-axis is the number of features the model uses (the union of the
cutting plane's subsets, ``selected_features_``), which m controls only implicitly, as in the
paper; LaRank SVM on all features is drawn as a line.  Writes ``figure2.png`` and
``figure2.csv`` into ``--out``.

    python benchmarks/reproductions/ranking/figure2.py --data-home ../shared/datasets
"""

from __future__ import annotations

import argparse
import csv
import warnings
from pathlib import Path

import numpy as np

from multilabel_core import ConvergenceWarning, make_method
from multilabel_core.datasets import load_dataset
from multilabel_core.experiments.preprocessing import Standardizer
from multilabel_core.experiments.protocols import repeated_fixed_train
from multilabel_core.metrics import macro_auc

from chosen import chosen_params

HERE = Path(__file__).resolve().parent


def curve(X, Y, splits, method, params, m_values):
    """Rows (m, split, number of selected features, macro AUC) for one method."""
    rows = []
    for k, (train, test) in enumerate(splits):
        scaler = Standardizer().fit(X[train])
        X_train, X_test = scaler.transform(X[train]), scaler.transform(X[test])
        for m in m_values:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model = make_method(method, n_features=m, **params).fit(X_train, Y[train])
            auc = macro_auc(Y[test], model.decision_function(X_test))
            rows.append((m, k, len(model.selected_features_), auc))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=str(HERE.parents[3] / "shared" / "datasets"))
    parser.add_argument("--table2", default=str(HERE / "runs" / "table2" / "results.jsonl"))
    parser.add_argument("--out", default=str(HERE))
    parser.add_argument("--splits", type=int, default=2)
    parser.add_argument("--m", type=int, nargs="+", default=[5, 10, 15, 20, 30, 50])
    args = parser.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = [("dataset", "method", "C", "mu", "m", "split", "n_selected", "macro_auc")]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, dataset in zip(axes, ["scene", "yeast"]):
        data = load_dataset(dataset, data_home=args.data_home)
        X, Y = data.X, np.asarray(data.Y)
        splits = repeated_fixed_train(Y, n_train=1000, n_repeats=args.splits, seed=0)
        for method, marker in (("mlfs", "s-"), ("cmlfs", "o-")):
            params = chosen_params(args.table2, method, dataset, drop=("n_features",))
            rows = curve(X, Y, splits, method, params, args.m)
            table += [(dataset, method, params["C"], params.get("mu", ""), *row) for row in rows]
            by_m = {m: [r for r in rows if r[0] == m] for m in args.m}
            n_sel = [np.mean([r[2] for r in by_m[m]]) for m in args.m]
            auc = [100 * np.mean([r[3] for r in by_m[m]]) for m in args.m]
            label = f"{method.upper()} (C={params['C']:g}" + (f", mu={params['mu']:g})" if "mu" in params else ")")
            ax.plot(n_sel, auc, marker, label=label)
            for m, x, y in zip(args.m, n_sel, auc):
                ax.annotate(f"m={m}", (x, y), textcoords="offset points", xytext=(3, -10), fontsize=7)
        larank = chosen_params(args.table2, "larank", dataset)
        full = []
        for train, test in splits:
            scaler = Standardizer().fit(X[train])
            model = make_method("larank", **larank).fit(scaler.transform(X[train]), Y[train])
            full.append(100 * macro_auc(Y[test], model.decision_function(scaler.transform(X[test]))))
        table += [(dataset, "larank", larank["C"], "", "all", k, X.shape[1], v / 100) for k, v in enumerate(full)]
        ax.axhline(np.mean(full), color="gray", ls="--", label=f"LaRank SVM, all {X.shape[1]} features")
        ax.set(title=f"{dataset} ({args.splits} splits)", xlabel="number of selected features", ylabel="macro AUC (%)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    out = Path(args.out)
    fig.savefig(out / "figure2.png", dpi=120)
    with open(out / "figure2.csv", "w", newline="") as f:
        csv.writer(f).writerows(table)
    print(f"wrote {out / 'figure2.png'} and {out / 'figure2.csv'}")


if __name__ == "__main__":
    main()
