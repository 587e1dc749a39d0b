"""Evidence, not tuning: how close MLRL's fits are to the optimum of problem (6) itself.

Each W-step's SMO certificate bounds (6) only at its fixed Omega.  The dual of the joint problem,
g = sum alpha - lambda_max(B^T K B) / 2 (minimax over Omega, multilabel_core.solvers.alternating),
is a lower bound on the optimum of (6) whatever the path, and the objective at the fitted W with
its best Omega an upper bound: their relative distance (``joint_gap_history_``) bounds how far a fit
can be from the global optimum.  Printed for the whole of emotions, scene and yeast (features
standardised, the paper's RBF width) at the lambdas the supervised searches chose and the paper
grid's smallest point, with the presets' defaults (SMO tolerance 1e-3, outer tolerance 1e-4), and
once with tight tolerances, to show where the remaining gap comes from (docs/methods/mlrl.md).

Then the same for MTRL (Zhang & Yeung, A Convex Formulation for Learning Task Relationships in
Multi-Task Learning, problem (4)), whose joint certificate the driver builds from
FrobeniusLabelCovariance's relation_value and relation_dual, at the (lam1, lam2) the mtrl run's
searches chose (docs/methods/mtrl.md).

    python benchmarks/reproductions/mlrl/joint_gap.py [--data-home DIR]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from multilabel_core import make_method
from multilabel_core.datasets import load_dataset
from multilabel_core.experiments.preprocessing import Standardizer

SETTINGS = [
    ("emotions", (1e-5, 1e-4, 1e-3, 1e-2)),
    ("scene", (1e-5, 1e-4, 1e-2)),
    ("yeast", (1e-5, 1e-4, 1e-2)),
]
TIGHT = {"smo_tol": 1e-6, "tol": 1e-9, "max_iter": 1000}
MTRL_SETTINGS = [
    ("emotions", ((1e-6, 1e-4), (1e-5, 1e-4), (1e-4, 1e-4), (1e-3, 1e-4))),
    ("scene", ((1e-6, 1e-5), (1e-4, 1e-5), (1e-4, 1e-7))),
    ("yeast", ((1e-4, 1e-5), (1e-4, 1e-7))),
]


def fitted(method, X, Y, **params):
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = make_method(method, **params).fit(X, Y)
    return model, time.perf_counter() - start, len(caught)


def row(name, X, Y, lam, **params) -> str:
    model, elapsed, n_warnings = fitted("mlrl", X, Y, lam=lam, **params)
    gaps = model.joint_gap_history_
    settings = "tight" if params else "defaults"
    return (
        f"| {name} | {lam:g} | {settings} | {model.n_iter_} | {gaps[0]:.3g} | {gaps[-1]:.3g} "
        f"| {model.objective_history_[-1]:.6g} | {elapsed:.2f} | {n_warnings} |"
    )


def mtrl_row(name, X, Y, lam1, lam2) -> str:
    model, elapsed, n_warnings = fitted("mtrl", X, Y, lam1=lam1, lam2=lam2)
    gaps = model.joint_gap_history_
    return (
        f"| {name} | {lam1:g} | {lam2:g} | {model.n_iter_} | {gaps[0]:.3g} | {gaps[-1]:.3g} "
        f"| {model.objective_history_[-1]:.6g} | {elapsed:.2f} | {n_warnings} |"
    )


def standardized(name, data_home):
    data = load_dataset(name, data_home=data_home)
    X = Standardizer().fit(data.X).transform(np.asarray(data.X, dtype=np.float64))
    return X, np.asarray(data.Y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    print("| dataset | lambda | tolerances | outer steps | joint gap, step 1 | joint gap, last | objective (6) | fit s | warnings |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, lams in SETTINGS:
        X, Y = standardized(name, args.data_home)
        for lam in lams:
            print(row(name, X, Y, lam), flush=True)
        if name == "emotions":
            print(row(name, X, Y, 1e-2, **TIGHT), flush=True)
    print()
    print("MTRL, the presets' defaults:")
    print()
    print("| dataset | lam1 | lam2 | outer steps | joint gap, step 1 | joint gap, last | objective (4) | fit s | warnings |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, points in MTRL_SETTINGS:
        X, Y = standardized(name, args.data_home)
        for lam1, lam2 in points:
            print(mtrl_row(name, X, Y, lam1, lam2), flush=True)


if __name__ == "__main__":
    main()
