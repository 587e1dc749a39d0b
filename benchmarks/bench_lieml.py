"""LIEML timings (Tao, Xu & Geng): label enhancement's shrinkage routes, IRWLS, and whole fits.

    python benchmarks/bench_lieml.py [--quick]

Prints markdown tables, ratios measured in the same run:
1. label enhancement on a half of yeast and of enron (lambda = 1): the paper's plain FPC with a full SVD per step
   against the truncated (Gram subset) shrinkage, and against truncated + momentum (the default), steps and time;
2. IRWLS iterations and time on the enhanced labels;
3. whole lieml fits on all of enron (1702 x 1001 sparse, 53 labels) and cal500 (502 x 68, 174 labels): time and
   peak resident memory;
4. label-enhancement time against n (row subsamples of yeast and enron) and against t (the most frequent t labels
   of enron), with the log-log slopes (time ~ n^a, ~ t^b), per run and per step;
5. (``--large-lambda``, alone) label enhancement on the enron half at lambda = 100, the value its searches choose:
   the step tau = 3.8 t n / lambda is small, so the last stage's threshold tau mu_min is tiny (1.7e-2 against
   singular values in the thousands) and the shrinkage keeps about 200 triplets; full SVD against the truncated
   route, both with momentum.
6. (``--corel5k``, alone) label enhancement on a half of corel5k (2500 x 499, 374 labels) at each lambda of the
   reproduction's grid: whether the reproduction's protocol fits in time there (per split, the 3-fold search runs
   each lambda three times on two thirds of the half, then the final fit once).
Label enhancement runs on one BLAS thread (it pins it itself).
"""

from __future__ import annotations

import argparse
import resource
import time
import warnings

import numpy as np
from _common import data_dir, markdown_table
from multilabel_core_plugins.lieml import LIEML, enhance_labels

from multilabel_core.datasets import load_dataset
from multilabel_core.kernels import RBFKernel
from multilabel_core.solvers import irwls_msvr


def half(name, rows=None, whole=False):
    """A random half of the data set (or ``rows`` of it, or all of it), constant labels dropped, dense X standardised."""
    data = load_dataset(name, data_home=data_dir())
    Y = np.asarray(data.Y.toarray() if hasattr(data.Y, "toarray") else data.Y)
    order = np.random.default_rng(0).permutation(data.X.shape[0])
    if rows or not whole:
        order = order[: rows or data.X.shape[0] // 2]
    X, Y = data.X[order], Y[order]
    keep = (Y.sum(axis=0) > 0) & (Y.sum(axis=0) < len(order))
    if not hasattr(X, "toarray"):
        X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    return X, Y[:, keep]


def enhancement_rows(names, budget):
    rows = []
    for name in names:
        X, Y = half(name)
        timings = {}
        for label, svt, accelerate in (("paper: full SVD", "full", False), ("truncated", "auto", False),
                                       ("truncated + momentum", "auto", True)):  # fmt: skip
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = time.perf_counter()
                result = enhance_labels(X, Y, lam=1.0, svt=svt, accelerate=accelerate, max_iter=budget)
                timings[label] = time.perf_counter() - start
            c = result.certificate
            rows.append([name, f"{X.shape[0]} x {X.shape[1]}, t = {Y.shape[1]}", label, c.n_iter,
                         f"{timings[label]:.2f}", f"{c.statistics['svt_time']:.2f}",
                         f"{timings['paper: full SVD'] / timings[label]:.2f}", f"{c.relative_gap:.1e}", c.converged])  # fmt: skip
    return rows


def large_lambda_rows():
    X, Y = half("enron")
    rows, seconds = [], {}
    for label, svt in (("full SVD + momentum", "full"), ("truncated + momentum (default)", "auto")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            result = enhance_labels(X, Y, lam=100.0, svt=svt)
            seconds[label] = time.perf_counter() - start
        c = result.certificate
        rows.append([f"{X.shape[0]} x {X.shape[1]}, t = {Y.shape[1]}", label, c.n_iter, result.rank,
                     f"{seconds[label]:.1f}", f"{c.statistics['svt_time']:.1f}", c.statistics["n_full_svt"],
                     f"{seconds['full SVD + momentum'] / seconds[label]:.2f}", f"{c.relative_gap:.1e}", c.converged])  # fmt: skip
    return rows


def corel5k_rows(lambdas=(0.1, 1.0, 10.0, 100.0)):
    X, Y = half("corel5k")
    rows, total = [], 0.0
    for lam in lambdas:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            result = enhance_labels(X, Y, lam=lam)
            seconds = time.perf_counter() - start
        total += seconds
        c = result.certificate
        rows.append([f"{X.shape[0]} x {X.shape[1]}, t = {Y.shape[1]}", lam, c.n_iter, result.rank, f"{seconds:.1f}",
                     f"{c.statistics['svt_time']:.1f}", c.statistics["n_full_svt"], f"{c.relative_gap:.1e}", c.converged])  # fmt: skip
    # The search's fits are on two thirds of the half (fewer rows, cheaper steps): 3 x total bounds them from above.
    rows.append(["one split, at most (3 folds x every lambda + the slowest final fit)", "", "", "",
                 f"{3 * total + max(float(r[4]) for r in rows):.0f}", "", "", "", ""])  # fmt: skip
    return rows


def irwls_rows(names):
    rows = []
    for name in names:
        X, Y = half(name)
        U = enhance_labels(X, Y, lam=1.0).labels
        K = RBFKernel().resolve(X)(X)
        start = time.perf_counter()
        fit = irwls_msvr(K, U, 2.0 * Y - 1.0, gamma1=1.0, gamma2=0.1, epsilon=0.1)
        rows.append([name, X.shape[0], Y.shape[1], fit.certificate.n_iter, f"{time.perf_counter() - start:.2f}",
                     f"{fit.certificate.relative_gap:.1e}"])  # fmt: skip
    return rows


def fit_rows(names):
    rows = []
    for name in names:
        X, Y = half(name, whole=True)
        start = time.perf_counter()
        model = LIEML(lam=1.0).fit(X, Y)
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        rows.append([name, f"{X.shape[0]} x {X.shape[1]}", Y.shape[1], f"{seconds:.1f}", f"{peak:.0f}",
                     model.rank_, model.certificate_.converged])  # fmt: skip
    return rows


def slope(sizes, seconds) -> float:
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def _timed_enhancement(X, Y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        result = enhance_labels(X, Y, lam=1.0)
        return time.perf_counter() - start, result.certificate.n_iter


def scaling_rows(plans):
    """``plans``: (data, what varies, sizes); one row per (data, size) and a slope row per plan."""
    rows = []
    for name, varying, sizes in plans:
        seconds, steps = [], []
        for size in sizes:
            if varying == "n":
                X, Y = half(name, rows=size, whole=True)
            else:
                X, Y = half(name)
                Y = Y[:, np.argsort(-Y.sum(axis=0), kind="stable")[:size]]
            took, n_steps = _timed_enhancement(X, Y)
            seconds.append(took)
            steps.append(n_steps)
            rows.append([name, varying, f"n = {X.shape[0]}, t = {Y.shape[1]}", n_steps, f"{took:.2f}",
                         f"{1000 * took / n_steps:.1f}"])  # fmt: skip
        per_step = np.asarray(seconds) / np.asarray(steps)
        rows.append([name, varying, f"slope in {varying}", f"{slope(sizes, steps):.2f}", f"{slope(sizes, seconds):.2f}",
                     f"{slope(sizes, per_step):.2f}"])  # fmt: skip
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="yeast only, a smaller step budget")
    parser.add_argument("--scaling", action="store_true", help="only the whole fits and the n / t slopes (3 and 4)")
    parser.add_argument("--large-lambda", action="store_true", help="only enron's enhancement at lambda = 100 (5)")
    parser.add_argument("--corel5k", action="store_true", help="only corel5k's enhancement at every lambda (6)")
    args = parser.parse_args()
    if args.corel5k:
        return print(markdown_table("## Label enhancement of a corel5k half at the reproduction's lambdas (truncated + momentum)",
                                    ["data", "lambda", "steps", "rank", "seconds", "SVT s", "full SVDs", "rel. gap", "certified"],
                                    corel5k_rows()))  # fmt: skip
    if args.large_lambda:
        return print(markdown_table("## Label enhancement of the enron half at lambda = 100: full SVD against the truncated route",
                                    ["data", "route", "steps", "rank", "seconds", "SVT s", "full SVDs", "speed-up", "rel. gap",
                                     "certified"], large_lambda_rows()))  # fmt: skip
    names = ["yeast"] if args.quick else ["yeast", "enron"]
    if args.scaling:
        return scaling_tables()
    print(markdown_table("## Label enhancement (lambda = 1), speed-up against the paper's full-SVD FPC", ["data", "shape", "route", "steps", "seconds", "SVT s", "speed-up", "rel. gap", "certified"],
                         enhancement_rows(names, 2000 if args.quick else 20000)))  # fmt: skip
    print()
    print(markdown_table("## IRWLS on the enhanced labels (gamma1 = 1, gamma2 = 0.1, eps = 0.1)", ["data", "n", "t", "iterations", "seconds", "rel. gap"], irwls_rows(names)))
    if not args.quick:
        print()
        scaling_tables()


def scaling_tables():
    print(markdown_table("## Whole lieml fits (lambda = 1)", ["data", "rows x features", "labels", "seconds", "peak RSS MB (process)", "rank of Z",
                          "certified"], fit_rows(["enron", "cal500"])))  # fmt: skip
    print()
    plans = [("yeast", "n", [300, 600, 1200, 2400]), ("enron", "n", [200, 400, 800, 1600]),
             ("enron", "t", [6, 13, 26, 52])]  # fmt: skip
    print(markdown_table("## Label-enhancement time against n and t (lambda = 1; slope rows: log-log slopes of steps, seconds, ms/step)",
                         ["data", "varies", "size", "steps", "seconds", "ms per step"], scaling_rows(plans)))  # fmt: skip


if __name__ == "__main__":
    main()
