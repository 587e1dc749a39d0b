"""Label-ranking family timings (Gu, Li & Han, *Correlated Multi-Label Feature Selection*: LaRank SVM
epochs, CMLFS fits), all ratios measured in one run.

1. LaRank SVM epoch cost, O(c^2 n s) by section 3.7: LaRank SVM (C = 1, rows scaled to unit
   norm) fitted on random subsamples of n rows of yahoo-arts and rcv1subset1 (sparse), both
   restricted to the labels with at least 100 relevant rows (the paper's filter, so c is fixed and
   every label occurs in every subsample: 19 and the count printed for rcv1subset1).  Per n:
   the fit's wall time, the epochs of Algorithm 1 summed over its solves, the time per epoch (the
   solves' own time over their epochs), the coordinate visits per epoch (an epoch's work: the
   pairs not shrunk away), the steps taken per epoch, and the time per visit (O(s) by the
   analysis, whatever n).  The log-log slopes against n (least squares) of the time per epoch
   (target: close to 1) and of the visits per epoch are printed; the pairs per row (the c^2
   factor) too.
2. CMLFS with the hyper-parameters the reproduction chose most often
   (benchmarks/reproductions/ranking/runs/*/results.jsonl), fitted on the 1000 training rows of
   the protocol's first split of yeast, scene and yahoo-arts-19 (features preprocessed as in the
   run): total time, cutting-plane iterations (the paper: within 10), inner solves of Algorithm
   1 and the time per inner solve; beside BR (linear SVM per label) with our dual CD engine and
   scikit-learn's LinearSVC one-vs-rest, at BR's chosen C, on the same rows.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_ranking.py [--repeat 3]

OPENBLAS_NUM_THREADS=1: the family's small dense products (X^T beta for the certificates and
eq. 32's scores) run between Cython solves; OpenBLAS's idle worker threads keep spinning after
each call and, on a machine with few shared cores, make fits 2-5 times slower.  Time is
wall-clock (``time.perf_counter``), median of ``--repeat`` fits; read the ratios.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from _common import data_dir, median_time, print_table
from multilabel_core import ConvergenceWarning, make_method
from multilabel_core.datasets import load_dataset
from multilabel_core.experiments.preprocessing import RowNormalizer, Standardizer
from multilabel_core.experiments.protocols import repeated_fixed_train

RANKING = Path(__file__).resolve().parent / "reproductions" / "ranking"
sys.path.insert(0, str(RANKING))
from arts import paper_filter  # noqa: E402
from chosen import chosen_params  # noqa: E402

RUNS = {"scene": "table2", "yeast": "table2", "yahoo-arts-19": "arts"}


def load(name, filtered=False):
    """X and Y of ``name``; ``filtered``: only the labels with 100 relevant rows or more (arts.py's filter)."""
    data = load_dataset(name, data_home=data_dir())
    if filtered:
        data = paper_filter(data)
    return data.X, np.asarray(data.Y)


def quiet_fit(estimator, X, Y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X, Y)


def pairs_per_row(Y) -> float:
    relevant = Y.sum(axis=1)
    return float(np.mean(relevant * (Y.shape[1] - relevant)))


def epoch_cost(name: str, sizes, repeat: int) -> None:
    # The label filter keeps c fixed across n and every label present in every subsample.
    X, Y = load(name, filtered=True)
    X = RowNormalizer().fit(X).transform(X)
    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        sample = np.sort(rng.choice(X.shape[0], size=min(n, X.shape[0]), replace=False))
        Xs, Ys = X[sample], Y[sample]
        fits = [larank_fit(Xs, Ys) for _ in range(repeat)]
        fit_time, solve_time = np.median([f[0] for f in fits]), np.median([f[1] for f in fits])
        epochs, visits, updates = fits[-1][2:]  # the same in every fit (fixed seed)
        rows.append([len(sample), pairs_per_row(Ys), fit_time, epochs, 1e3 * solve_time / epochs, visits / epochs,
                     updates / epochs, 1e9 * solve_time / visits])
    print(f"\n## LaRank SVM epoch cost on {name} (C = 1, unit-norm rows, {Y.shape[1]} labels with >= 100 rows)\n")
    print_table(["n", "pairs/row", "fit s", "epochs", "ms/epoch", "visits/epoch", "updates/epoch", "ns/visit"], rows)
    table = np.array(rows, dtype=float)
    slopes = [np.polyfit(np.log(table[:, 0]), np.log(table[:, column]), 1)[0] for column in (4, 2, 5)]
    print("log-log slope against n: time per epoch {:.2f}, fit time {:.2f}, visits per epoch {:.2f}".format(*slopes))


def larank_fit(X, Y):
    """One LaRank SVM fit: its wall time, its solves' own time, and their epochs, visits and steps."""
    start = time.perf_counter()
    model = quiet_fit(make_method("larank", C=1.0), X, Y)
    seconds = time.perf_counter() - start
    certificates = model.certificate_
    counts = [sum(c.statistics[key] for c in certificates) for key in ("n_visits", "n_updates")]
    return seconds, sum(c.time for c in certificates), sum(c.n_iter for c in certificates), *counts


def first_split(name):
    X, Y = load("yahoo-arts", filtered=True) if name == "yahoo-arts-19" else load(name)
    train, test = repeated_fixed_train(Y, n_train=1000, n_repeats=1, seed=0)[0]
    scaler = RowNormalizer() if name == "yahoo-arts-19" else Standardizer()
    scaler.fit(X[train])
    return scaler.transform(X[train]), Y[train]


def cmlfs_against_br(names, repeat: int) -> None:
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import LinearSVC

    sys.path.insert(0, str(RANKING.parent))
    from stores import require_stores

    # The parameters come from the reproduction's stores, which are not in version control.
    require_stores(RANKING, sorted({RUNS[name] for name in names}))
    rows = []
    for name in names:
        results = RANKING / "runs" / RUNS[name] / "results.jsonl"
        cmlfs_params = chosen_params(results, "cmlfs", name)
        br_C = chosen_params(results, "br", name)["C"]
        X, Y = first_split(name)
        t_cmlfs, model = median_time(lambda: quiet_fit(make_method("cmlfs", **cmlfs_params), X, Y), repeat)
        t_br, _ = median_time(lambda: quiet_fit(make_method("br", C=br_C, solver="cd"), X, Y), repeat)
        t_svc, _ = median_time(lambda: OneVsRestClassifier(LinearSVC(C=br_C, dual=True, max_iter=10000)).fit(X, Y), repeat)
        solves = len(model.certificate_)
        lower, upper = model.bound_history_[-1]
        rows.append([
            name, str(cmlfs_params), t_cmlfs, model.n_iter_, solves, 1e3 * t_cmlfs / solves,
            (upper - lower) / max(1.0, abs(upper)), len(model.selected_features_), br_C, t_br, t_svc,
            t_cmlfs / t_br,
        ])
    print("\n## CMLFS beside BR (linear SVM per label), 1000 training rows of split 0\n")
    print_table(
        ["dataset", "cmlfs params", "cmlfs s", "cp iters", "inner solves", "ms/solve", "rel. gap",
         "features", "br C", "br cd s", "LinearSVC s", "cmlfs/br"],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    start = time.perf_counter()
    epoch_cost("yahoo-arts", [500, 1000, 2000, 4000, 7441], args.repeat)
    epoch_cost("rcv1subset1", [750, 1500, 3000, 6000], args.repeat)
    cmlfs_against_br(["yeast", "scene", "yahoo-arts-19"], args.repeat)
    print(f"\n(total {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
