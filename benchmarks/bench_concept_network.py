"""Concept network timings (Zhang et al., *Multi-Kernel Multi-Label Learning with Max-Margin Concept Network*), one run.

1. ``time``: fit and predict on scene (the Mulan training file, 1211 rows, standardised, predicting the 1196
   test rows) and yahoo-arts-mkml (the first 2000 rows, sparse, predicting the other 3000; label 17 has no
   relevant row among the first 2000 and is left out for both methods, so L = 25), ``concept_network`` at its
   defaults against ``bsvm`` (the kernel SVM per label by SMO, RBF with the same width convention) at its
   defaults, in the same process.  The concept network's fit is split into its parts: the base kernel (RBF
   Gram of the training rows), the top-m eigendecomposition, the kernel learning (closed forms), and the L
   local duals (coordinate descent); ratios concept_network / bsvm (below 1 is faster).
2. ``scaling``: time against n on random subsamples of yahoo-arts-mkml (sparse rows) for the top-m eigen step
   (``top_eigenpairs`` on the n x n RBF Gram, m = 100) and for the per-label solves (the local duals of a
   fit at the defaults, summed over labels), with the log-log slopes by least squares.  The eigen step
   should grow like n^2 m (ARPACK's matrix-vector products with a dense n x n matrix), the solves like
   n times the epochs.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_concept_network.py [--parts time,scaling] [--repeat 3] [--append]

BLAS is limited to one thread (threadpoolctl).  Times are wall-clock minima over ``--repeat`` runs (noise from
other jobs only adds).  ``--append`` appends the markdown tables to RESULTS.md.
"""

from __future__ import annotations

import argparse
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from _common import best_time, data_dir, markdown_table, print_table
from multilabel_core import make_method
from multilabel_core.datasets import load_dataset
from multilabel_core.kernels import RBFKernel
from multilabel_core_plugins.concept_network import ConceptNetwork, top_eigenpairs

PARTS = ("time", "scaling")


def _datasets():
    home = data_dir()
    scene_train, scene_test = load_dataset("scene-train", data_home=home), load_dataset("scene-test", data_home=home)
    scaler = StandardScaler().fit(scene_train.X)
    scene = ("scene", scaler.transform(scene_train.X), np.asarray(scene_train.Y), scaler.transform(scene_test.X))
    yahoo = load_dataset("yahoo-arts-mkml", data_home=home)
    Y = np.asarray(yahoo.Y)
    both = (Y[:2000].min(axis=0) == 0) & (Y[:2000].max(axis=0) == 1)
    arts = ("yahoo-arts-mkml", yahoo.X[:2000], Y[:2000][:, both], yahoo.X[2000:])
    return [scene, arts]


def part_time(repeat):
    rows = []
    for name, X, Y, X_test in _datasets():
        model = ConceptNetwork()
        fit_cn, model = best_time(lambda: model.fit(X, Y), repeat)
        kernel_s, _ = best_time(lambda: model.kernel_(X), repeat)
        eigen_s = model.basis_.time
        solve_s = model.certificate_.statistics["local_time"]
        predict_cn, _ = best_time(lambda: model.predict(X_test), repeat)
        bsvm = make_method("bsvm")
        fit_b, bsvm = best_time(lambda: bsvm.fit(X, Y), repeat)
        predict_b, _ = best_time(lambda: bsvm.predict(X_test), repeat)
        rows.append([
            name, X.shape[0], Y.shape[1], model.concept_graph_.n_edges, model.basis_.n_components, fit_cn,
            kernel_s, eigen_s, eigen_s / fit_cn, solve_s, predict_cn, fit_b, predict_b, fit_cn / fit_b,
            predict_cn / predict_b, model.certificate_.converged,
        ])  # fmt: skip
    header = ["data", "n", "L", "edges", "m", "CN fit s", "kernel s", "eigen s", "eigen share", "solves s",
              "CN predict s", "bsvm fit s", "bsvm predict s", "fit CN/bsvm", "predict CN/bsvm", "CN converged"]  # fmt: skip
    return "1. concept_network (defaults) against bsvm (defaults), fit on the training rows, predict the test rows", header, rows


def _slope(n, t):
    return float(np.polyfit(np.log(n), np.log(t), 1)[0])


def part_scaling(repeat):
    yahoo = load_dataset("yahoo-arts-mkml", data_home=data_dir())
    X_all, Y_all = yahoo.X, np.asarray(yahoo.Y)
    sizes = [500, 1000, 2000, 4000]
    rows, eigen_times, solve_times, epoch_times = [], [], [], []
    rng = np.random.default_rng(0)
    for n in sizes:
        rows_ = np.sort(rng.permutation(X_all.shape[0])[:n])
        X, Y = X_all[rows_], Y_all[rows_]
        Y = Y[:, (Y.min(axis=0) == 0) & (Y.max(axis=0) == 1)]
        K = RBFKernel().resolve(X)(X)
        eigen_s, basis = best_time(lambda: top_eigenpairs(K, 100), repeat)
        model = ConceptNetwork()
        _, model = best_time(lambda: model.fit(X, Y), 1)
        solve_s = model.certificate_.statistics["local_time"]
        epochs = sum(model.certificate_.statistics["n_epochs"])
        eigen_times.append(eigen_s)
        solve_times.append(solve_s)
        epoch_times.append(solve_s / epochs)
        rows.append([n, Y.shape[1], basis.n_components, basis.method, eigen_s, solve_s, epochs, 1e3 * solve_s / epochs])
    rows.append(["slope", "", "", "", _slope(sizes, eigen_times), _slope(sizes, solve_times), "",
                 _slope(sizes, epoch_times)])  # fmt: skip
    header = ["n", "L", "m", "eigensolver", "eigen s", "solves s", "epochs (sum)", "ms / epoch"]
    return "2. time against n on yahoo-arts-mkml subsamples (log-log slopes in the last row)", header, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--append", action="store_true")
    args = parser.parse_args()
    parts = args.parts.split(",")
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts {sorted(unknown)}; choose from {PARTS}")
    warnings.simplefilter("ignore")  # the clipping counts are in the models; the tables say what converged
    tables = []
    with threadpool_limits(limits=1):
        for part in parts:
            title, header, rows = {"time": part_time, "scaling": part_scaling}[part](args.repeat)
            print(title)
            print_table(header, rows)
            print()
            tables.append(markdown_table(title, header, rows))
    if args.append:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        heading = (f"\n### bench_concept_network.py tables ({time.strftime('%Y-%m-%d %H:%M')}, at {commit}): "
                   f"`OPENBLAS_NUM_THREADS=1 python benchmarks/bench_concept_network.py --parts {args.parts} "
                   f"--repeat {args.repeat} --append`\n\n")  # fmt: skip
        with open(Path(__file__).with_name("RESULTS.md"), "a") as out:
            out.write(heading + "\n\n".join(tables) + "\n")


if __name__ == "__main__":
    main()
