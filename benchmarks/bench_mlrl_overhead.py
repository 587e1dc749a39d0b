"""Where an MLRL fit spends its time: the SMO engine against everything around it.

A synthetic problem of n = 2000 rows and 10 labels (multilabel_core.datasets.make_correlated_multilabel,
RBF kernel, lambda = 1e-3), timed: the fit's wall time, the time inside the SMO engine (the Cython
``solve_dual``, timed by wrapping it where smo.py calls it), and the rest -- the kernel, the relation steps' bookkeeping
(W^T W and the joint certificate's H = B^T K B) and validation.  Run it with two installs side by
side to compare versions:

    python benchmarks/bench_mlrl_overhead.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from multilabel_core import make_method
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.solvers import smo

ENGINE_SECONDS = []


def _timed(engine):
    def solve_dual(*args, **kwargs):
        start = time.perf_counter()
        try:
            return engine(*args, **kwargs)
        finally:
            ENGINE_SECONDS.append(time.perf_counter() - start)

    return solve_dual


def profile_once(X, Y) -> tuple[float, float, int]:
    ENGINE_SECONDS.clear()
    start = time.perf_counter()
    model = make_method("mlrl", lam=1e-3).fit(X, Y)
    return time.perf_counter() - start, sum(ENGINE_SECONDS), model.n_iter_


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    smo.solve_dual = _timed(smo.solve_dual)
    data = make_correlated_multilabel(n_samples=2000, n_features=20, n_labels=10, random_state=0)
    X, Y = data.X, np.asarray(data.Y)
    make_method("mlrl", lam=1e-3).fit(X[:200], Y[:200])  # imports and first-call costs out of the way
    runs = [profile_once(X, Y) for _ in range(args.repeat)]
    total, engine, steps = (float(np.median([run[i] for run in runs])) for i in range(3))
    print("| fit s | SMO engine s | everything else s | outer steps |")
    print("| --- | --- | --- | --- |")
    print(f"| {total:.2f} | {engine:.2f} | {total - engine:.2f} | {steps:.0f} |")


if __name__ == "__main__":
    main()
