"""Set-size threshold variants (CMLFS section 3.8) on the splits of the ranking reproduction.

For the first ``--splits`` splits of the reproduction's protocol (repeated_fixed_train, seed 0:
1000 training rows, the rest for testing; scene and yeast standardised on the training part,
yahoo-arts-19 rows scaled to unit norm, as in ``table2.toml`` and ``arts.toml``), LaRank SVM and
CMLFS are fitted at the parameters the reproduction's inner cross-validation chose for that split
(read from its results stores), and their test label sets predicted with each threshold t(x):

==================  ========================================================================
``scores``          eq. 34's targets on the in-sample training scores, least squares on the
                    label scores (the paper, Elisseeff & Weston; ``threshold="scores"``)
``features``        eq. 34's targets, ridge regression (lambda = 1) on the features x
``scores_cv``       eq. 34's targets and the regression on 5-fold out-of-fold training scores
                    (``threshold="scores", threshold_cv=5``)
``symmetric_diff``  Elisseeff & Weston's target: the t minimising |{k in y_i: f_k <= t}| +
                    |{l in ybar_i: f_l >= t}| (the midpoint of its best interval; among tied
                    intervals the one nearest eq. 34's t), regression on the label scores
``scores_nonempty`` ``scores`` with t(x) capped at the midpoint of the two top scores, so that
                    no row gets an empty set (every training row of these data has a label)
``sorted_scores``   eq. 34's targets, least squares on the sorted scores (the default)
``sorted_cv``       ``sorted_scores`` on 5-fold out-of-fold scores (``threshold_cv=5``)
``oracle_size``     reference, not a predictor: each test row's top-|y_i| labels (its true set
                    size), the F1 a perfect set-size predictor would get from this ranking
==================  ========================================================================

Measures on the test rows: micro F1 and macro F1 (percent), the percentage of rows with an empty
predicted set, and the mean predicted set size (beside the true one).  On yeast, LaRank SVM is also
fitted at each C of ``--c-sweep`` (the ranking's macro AUC and ranking loss beside the F1 of
``scores``, ``sorted_scores`` and ``oracle_size``): the reproduction chose C = 1e-3 by macro AUC.  Writes
``threshold_variants.csv`` (one row per dataset, method, split and variant) and
``threshold_variants.md`` (means over the splits) into ``--out``.

    OPENBLAS_NUM_THREADS=1 python benchmarks/reproductions/ranking/threshold_variants.py
"""

from __future__ import annotations

import argparse
import csv
import json
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from multilabel_core import ConvergenceWarning, make_method
from multilabel_core.datasets import load_dataset
from multilabel_core.experiments.preprocessing import preprocessed
from multilabel_core.experiments.protocols import repeated_fixed_train
from multilabel_core.metrics import macro_auc, macro_f1, micro_f1, ranking_loss
from multilabel_core_plugins.ranking.threshold import threshold_targets

from arts import paper_filter

HERE = Path(__file__).resolve().parent
#: dataset -> (the reproduction run holding its chosen parameters, its preprocessing)
DATASETS = {
    "scene": ("table2", "standardize"),
    "yeast": ("table2", "standardize"),
    "yahoo-arts-19": ("arts", "l2_rows"),
}
METHODS = ("larank", "cmlfs")
VARIANTS = (
    "scores",
    "features",
    "scores_cv",
    "symmetric_diff",
    "scores_nonempty",
    "sorted_scores",
    "sorted_cv",
    "oracle_size",
)
#: The variants the presets implement, as their parameters.
PRESET_VARIANTS = {
    "scores": {"threshold": "scores"},
    "scores_cv": {"threshold": "scores", "threshold_cv": 5},
    "sorted_scores": {"threshold": "sorted_scores"},
    "sorted_cv": {"threshold": "sorted_scores", "threshold_cv": 5},
}
FEATURES_RIDGE = 1.0


def chosen_per_split(results: Path) -> dict:
    """(dataset, method, split) -> the record of the reproduction run (its params and test metrics)."""
    with open(results) as lines:
        records = (json.loads(line) for line in lines)
        return {(r["dataset"], r["method"], r["split"]): r for r in records if r["status"] == "ok"}


def least_squares(Z, t, ridge=0.0) -> np.ndarray:
    """(a, a_0) minimising ||Z a + a_0 - t||^2 + ridge ||a||^2 (the intercept unpenalised)."""
    A = np.hstack([Z, np.ones((Z.shape[0], 1))])
    penalty = ridge * np.diag(np.r_[np.ones(Z.shape[1]), 0.0])
    return np.linalg.lstsq(A.T @ A + penalty, A.T @ t, rcond=None)[0]


def linear(Z, coef) -> np.ndarray:
    return Z @ coef[:-1] + coef[-1]


def symmetric_difference_targets(scores, Y) -> np.ndarray:
    """Elisseeff & Weston's t_i: the midpoint of the interval of t minimising the row's errors.

    Candidates are the midpoints between consecutive distinct scores and one unit beyond each end;
    ties between intervals go to the one nearest eq. 34's target (so a correctly ranked row gets
    eq. 34's value).
    """
    eq_34 = threshold_targets(scores, Y)
    targets = np.empty(len(scores))
    for i, (row, relevant) in enumerate(zip(scores, np.asarray(Y, dtype=bool))):
        values = np.unique(row)
        candidates = np.r_[values[0] - 1.0, 0.5 * (values[:-1] + values[1:]), values[-1] + 1.0]
        errors = (row[relevant, None] <= candidates).sum(axis=0) + (row[~relevant, None] >= candidates).sum(axis=0)
        best = candidates[errors == errors.min()]
        targets[i] = best[np.argmin(np.abs(best - eq_34[i]))]
    return targets


def top_two_midpoint(scores) -> np.ndarray:
    top = np.sort(scores, axis=1)[:, -2:]
    return top.mean(axis=1)


def oracle_prediction(scores, Y) -> np.ndarray:
    rank = np.argsort(np.argsort(-scores, axis=1, kind="stable"), axis=1)
    return (rank < np.asarray(Y).sum(axis=1, keepdims=True)).astype(np.int64)


def measures(Y, P) -> dict:
    sizes = P.sum(axis=1)
    return {
        "micro_f1": 100 * micro_f1(Y, P),
        "macro_f1": 100 * macro_f1(Y, P),
        "empty_pct": 100 * np.mean(sizes == 0),
        "set_size": sizes.mean(),
        "true_set_size": Y.sum(axis=1).mean(),
    }


def fit_variants(method, params, X_train, Y_train) -> dict:
    """variant -> the preset fitted with that variant's threshold parameters (the same W and b for all)."""
    return {
        name: make_method(method, **params, **extra).fit(X_train, Y_train) for name, extra in PRESET_VARIANTS.items()
    }


def predictions(models, X_train, Y_train, X_test, Y_test) -> dict:
    """variant -> the predicted test label sets (n_test, c)."""
    out = {name: model.predict(X_test) for name, model in models.items()}
    paper = models["scores"]
    train, test = paper.decision_function(X_train), paper.decision_function(X_test)
    dense_train, dense_test = (A.toarray() if sp.issparse(A) else A for A in (X_train, X_test))
    t = threshold_targets(train, Y_train)
    thresholds = {
        "features": linear(dense_test, least_squares(dense_train, t, FEATURES_RIDGE)),
        "symmetric_diff": linear(test, least_squares(train, symmetric_difference_targets(train, Y_train))),
        "scores_nonempty": np.minimum(paper.decision_threshold(X_test), top_two_midpoint(test)),
    }
    out.update({name: (test > value[:, None]).astype(np.int64) for name, value in thresholds.items()})
    out["oracle_size"] = oracle_prediction(test, Y_test)
    return out


def correctly_ranked(scores, Y) -> float:
    """Percentage of the rows with both kinds of labels whose every relevant label outscores every irrelevant one."""
    relevant = np.asarray(Y, dtype=bool)
    both = relevant.any(axis=1) & ~relevant.all(axis=1)
    lowest = np.where(relevant, scores, np.inf).min(axis=1)
    highest = np.where(relevant, -np.inf, scores).max(axis=1)
    return 100 * np.mean((lowest > highest)[both])


def diagnostics(models, X_train, Y_train, X_test, Y_test) -> dict:
    """Why thresholds fail: in-sample against test separation, and how well each regression fits eq. 34."""
    train = models["scores"].decision_function(X_train)
    targets = threshold_targets(train, Y_train)
    return {
        "ranked_train_pct": correctly_ranked(train, Y_train),
        "ranked_test_pct": correctly_ranked(models["scores"].decision_function(X_test), Y_test),
        **{
            f"rms_{name}": np.sqrt(np.mean((models[name].threshold_(train) - targets) ** 2))
            for name in ("scores", "sorted_scores")
        },
    }


def c_sweep(X_train, Y_train, X_test, Y_test, values) -> list[dict]:
    """LaRank SVM at each C: the ranking's quality (macro AUC, ranking loss) beside the F1 of three set sizes."""
    rows = []
    for C in values:
        model = make_method("larank", C=C, threshold="scores").fit(X_train, Y_train)
        scores = model.decision_function(X_test)
        sorted_threshold = make_method("larank", C=C).fit(X_train, Y_train)
        row = {"C": C, "macro_auc": 100 * macro_auc(Y_test, scores), "ranking_loss": ranking_loss(Y_test, scores)}
        for variant, P in (
            ("scores", model.predict(X_test)),
            ("sorted_scores", sorted_threshold.predict(X_test)),
            ("oracle_size", oracle_prediction(scores, Y_test)),
        ):
            row.update({f"{variant} {key}": value for key, value in measures(Y_test, P).items()})
        rows.append(row)
    return rows


def load(dataset: str, data_home: str):
    if dataset == "yahoo-arts-19":
        return paper_filter(load_dataset("yahoo-arts", data_home=data_home))
    return load_dataset(dataset, data_home=data_home)


def markdown(rows: list[dict]) -> list[str]:
    lines = []
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        of = [r for r in rows if r["dataset"] == dataset]
        n_splits = len({r["split"] for r in of})
        true = np.mean([r["true_set_size"] for r in of])
        lines += [
            f"**{dataset}** (mean of {n_splits} splits; true mean set size {true:.2f})",
            "",
            "| variant | " + " | ".join(f"{m} micro F1 | macro F1 | empty % | set size" for m in METHODS) + " |",
            "| --- |" + " ---: | ---: | ---: | ---: |" * len(METHODS),
        ]
        for variant in VARIANTS:
            cells = []
            for method in METHODS:
                mine = [r for r in of if r["method"] == method and r["variant"] == variant]
                mean = {
                    key: np.mean([r[key] for r in mine]) for key in ("micro_f1", "macro_f1", "empty_pct", "set_size")
                }
                cells += [
                    f"{mean['micro_f1']:.2f}",
                    f"{mean['macro_f1']:.2f}",
                    f"{mean['empty_pct']:.1f}",
                    f"{mean['set_size']:.2f}",
                ]
            lines.append(f"| `{variant}` | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def diagnostics_markdown(checks: list[dict]) -> list[str]:
    lines = [
        (
            "**Diagnostics** (mean over the splits): rows ranked correctly (every relevant label above every "
            "irrelevant one) in-sample and on the test rows; root mean square residual of the least-squares fit "
            "of eq. 34's training targets on the label scores and on the sorted scores"
        ),
        "",
        "| dataset | method | ranked correctly, train % | test % | RMS residual `scores` | `sorted_scores` |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for dataset, method in dict.fromkeys((c["dataset"], c["method"]) for c in checks):
        mine = [c for c in checks if (c["dataset"], c["method"]) == (dataset, method)]
        mean = {key: np.mean([c[key] for c in mine]) for key in mine[0] if key not in ("dataset", "method")}
        lines.append(
            f"| {dataset} | {method} | {mean['ranked_train_pct']:.1f} | {mean['ranked_test_pct']:.1f} | "
            f"{mean['rms_scores']:.3f} | {mean['rms_sorted_scores']:.3f} |"
        )
    return lines + [""]


def sweep_markdown(rows: list[dict], dataset: str, splits: int) -> list[str]:
    header = "| C | macro AUC | ranking loss | " + " | ".join(
        f"micro F1 `{v}` | macro F1 `{v}`" for v in ("scores", "sorted_scores", "oracle_size")
    )
    lines = [
        f"**LaRank SVM on {dataset} against C** (mean of {splits} splits)",
        "",
        header + " |",
        "| ---: |" + " ---: |" * 8,
    ]
    for C in dict.fromkeys(r["C"] for r in rows):
        mine = [r for r in rows if r["C"] == C]
        mean = {key: np.mean([r[key] for r in mine]) for key in mine[0] if key != "C"}
        cells = [f"{mean['macro_auc']:.2f}", f"{mean['ranking_loss']:.3f}"] + [
            f"{mean[f'{v} {k}']:.2f}"
            for v in ("scores", "sorted_scores", "oracle_size")
            for k in ("micro_f1", "macro_f1")
        ]
        lines.append(f"| {C:g} | " + " | ".join(cells) + " |")
    return lines + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=str(HERE.parents[3] / "shared" / "datasets"))
    parser.add_argument("--runs", default=str(HERE / "runs"))
    parser.add_argument("--out", default=str(HERE))
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument(
        "--c-sweep",
        nargs="*",
        type=float,
        default=[1e-3, 1e-2, 0.1, 1.0],
        help="LaRank SVM's C values for the sweep on yeast (none: no sweep)",
    )
    args = parser.parse_args()

    warnings.simplefilter("ignore", ConvergenceWarning)  # the cutting plane's 10 iterations, as in the reproduction
    rows, checks, sweep = [], [], []
    for dataset in args.datasets:
        run, preprocess = DATASETS[dataset]
        records = chosen_per_split(Path(args.runs) / run / "results.jsonl")
        data = load(dataset, args.data_home)
        Y = np.asarray(data.Y)
        for split, (train, test) in enumerate(repeated_fixed_train(Y, n_train=1000, n_repeats=args.splits, seed=0)):
            X = preprocessed(data.X, train, preprocess)
            for method in METHODS:
                record = records[(dataset, method, split)]
                models = fit_variants(method, record["params"], X[train], Y[train])
                predicted = predictions(models, X[train], Y[train], X[test], Y[test])
                checks.append(
                    {"dataset": dataset, "method": method, **diagnostics(models, X[train], Y[train], X[test], Y[test])}
                )
                for variant in VARIANTS:
                    rows.append(
                        {
                            "dataset": dataset,
                            "method": method,
                            "split": split,
                            "variant": variant,
                            "params": json.dumps(record["params"], sort_keys=True),
                            **measures(Y[test], predicted[variant]),
                        }
                    )
                stored, ours = 100 * record["metrics"]["micro_f1"], 100 * micro_f1(Y[test], predicted["scores"])
                print(
                    f"{dataset} {method} split {split} {record['params']}: micro F1 with `scores` {ours:.2f} "
                    f"(the reproduction's record: {stored:.2f})",
                    flush=True,
                )
            if dataset == "yeast":
                sweep += c_sweep(X[train], Y[train], X[test], Y[test], args.c_sweep)
    out = Path(args.out)
    with open(out / "threshold_variants.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({k: f"{v:.4f}" if isinstance(v, float) else v for k, v in r.items()} for r in rows)
    report = (
        markdown(rows) + diagnostics_markdown(checks) + (sweep_markdown(sweep, "yeast", args.splits) if sweep else [])
    )
    (out / "threshold_variants.md").write_text("\n".join(report))
    print("\n".join(report))
    print(f"wrote {out / 'threshold_variants.csv'} and {out / 'threshold_variants.md'}")


if __name__ == "__main__":
    main()
