"""How fast Algorithm 2's bound gap closes on scene and yeast, and why (docs/methods/ranking.md).

On split 0 of the Table 2 protocol (repeated_fixed_train, seed 0: 1000 training rows, the
rest for testing; features standardised on the training part), CMLFS at the parameters the
Table 2 run chose most often (``--table2``) and MLFS at the same C and m (mu = 0):

1. the bounds of Theorem 3.5 per cutting-plane iteration (one fit with ``--max-iter``
   iterations), the relative gap (u_t - l_t) / max(1, |u_t|) and the features in the union
   of the subsets; for MLFS also theta*, the optimum of the relaxed problem, solved directly
   over s in the hull {0 <= s <= 1, sum s = m} (projected gradient with an exact alpha-solve
   per point, certified by the dual bound), which splits the gap into u_t - theta* and
   theta* - l_t;
2. the inner problem: the cutting plane's u_10 against the optimum of the same 10-subset
   working set solved tightly (alternation and alpha-steps at 1e-9), and the bounds after
   10 and 20 iterations when every inner problem is solved that tightly;
3. fits with max_iter in ``--budgets``: wall time (median of ``--repeat``), alpha-steps,
   epochs of Algorithm 1, the gap, the features used and the test macro AUC.

Everything here is Kelley's master (``master="kelley"``, Algorithm 2 as printed), the
default before the proximal bundle; the solver itself is timed (before the bundle, the
estimators' fits were: the same solve and the set-size threshold's regression).
``benchmarks/bench_cutting_plane.py`` compares it with the bundle.

Writes ``cutting_plane_gap.md`` into ``--out``.

    OPENBLAS_NUM_THREADS=1 python benchmarks/reproductions/ranking/cutting_plane_gap.py
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

import attrs

from multilabel_core import ConvergenceWarning
from multilabel_core.base import Problem
from multilabel_core.datasets import load_dataset
from multilabel_core.experiments.preprocessing import Standardizer
from multilabel_core.experiments.protocols import repeated_fixed_train
from multilabel_core.kernels import LinearKernel
from multilabel_core.losses import PairwiseRankingHinge
from multilabel_core.metrics import macro_auc
from multilabel_core.regularizers import Frobenius, FrobeniusLabelCovariance
from multilabel_core.relations import Independent, LearnedCovariance
from multilabel_core.solvers import AlternatingSolver
from multilabel_core.testing.reference import spectral_projected_gradient
from multilabel_core.validation import to_signs
from multilabel_core_plugins.ranking import CuttingPlaneSolver, RankingCDSolver, SubsetKernel
from multilabel_core_plugins.ranking.engine import ranking_cd
from multilabel_core_plugins.ranking.subsets import violation_scores

from chosen import chosen_params

HERE = Path(__file__).resolve().parent
SHOWN = (1, 2, 5, 10, 15, 20, 30, 50, 75, 100, 150, 200)
TIGHT = 1e-9


def first_split(dataset, data_home):
    data = load_dataset(dataset, data_home=data_home)
    X, Y = data.X, np.asarray(data.Y)
    train, test = repeated_fixed_train(Y, n_train=1000, n_repeats=1, seed=0)[0]
    scaler = Standardizer().fit(X[train])
    return scaler.transform(X[train]), Y[train], scaler.transform(X[test]), Y[test]


def ranking_problem(X, Y, C, mu) -> Problem:
    regularizer, relation = (Frobenius(), Independent()) if mu == 0 else (FrobeniusLabelCovariance(mu), LearnedCovariance())
    return Problem(X, to_signs(Y), PairwiseRankingHinge(), regularizer, relation, LinearKernel(), C=C)


def quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return function(*args, **kwargs)


def relative(lower, upper):
    return (upper - lower) / max(1.0, abs(upper))


def project_capped_simplex(v, m):
    """argmin ||s - v|| over {0 <= s <= 1, sum s = m}: s = clip(v - theta, 0, 1), theta by bisection."""
    low, high = v.min() - 1.0, v.max()
    for _ in range(100):
        theta = (low + high) / 2.0
        low, high = (theta, high) if np.clip(v - theta, 0.0, 1.0).sum() > m else (low, theta)
    return np.clip(v - (low + high) / 2.0, 0.0, 1.0)


def alpha_solve(problem, s, alpha0):
    """The dual (7) at feature weights s (R = I) to a relative gap of TIGHT: ranking_cd at eps, eps / 10, ..."""
    Y, eps = (problem.Y > 0).astype(np.int8), 0.1
    while True:
        fit = ranking_cd(
            problem.X, Y, problem.C, None, s, fit_intercept=problem.fit_intercept, tol=eps, max_iter=10000,
            random_state=0, alpha0=alpha0,
        )
        if fit.certificate.relative_gap <= TIGHT or eps / 10 < 1e-9:
            return fit
        eps, alpha0 = eps / 10, fit.solution.dual


def relaxed_optimum(problem, m, iterations=400):
    """theta* of MLFS: min over the hull of F(s) = max_alpha f(alpha, s), and its certified lower bound.

    Projected gradient over s with F's gradient -1/2 q (eq. 31 per feature), Barzilai-Borwein
    steps and an exact alpha-solve at every point; the lower bound is the dual at the best
    alpha minimised over the hull, sum alpha - 1/2 (top-m q + q_bias) (certified for mu = 0).
    """
    identity = np.eye(problem.n_labels)

    def evaluate(s, state):
        alpha0, lower = (None, -np.inf) if state is None else state
        fit = quiet(alpha_solve, problem, s, alpha0)
        q, q_bias = violation_scores(problem.X, fit.solution.extras["beta"], identity, problem.fit_intercept)
        dual_bound = float(fit.solution.dual.sum()) - 0.5 * (np.sort(q)[::-1][:m].sum() + q_bias)
        return fit.certificate.primal, -0.5 * q, (fit.solution.dual, max(lower, dual_bound))

    s, value, (_, lower) = spectral_projected_gradient(
        evaluate,
        np.full(problem.X.shape[1], m / problem.X.shape[1]),
        lambda v: project_capped_simplex(v, m),
        converged=lambda _, value, state: value - state[1] <= TIGHT * abs(value),
        first_step=lambda g: 1.0 / np.abs(g).max(),
        max_iter=iterations,
    )
    return value, lower, s


def restricted_optimum(problem, subsets):
    """The inner problem on a fixed working set: the alternating driver and its alpha-steps at TIGHT."""
    inner = AlternatingSolver(inner=RankingCDSolver(tol=TIGHT), tol=TIGHT, max_iter=2000)
    fit = quiet(inner.solve, attrs.evolve(problem, kernel=SubsetKernel(subsets)))
    return fit.history["objective"][-1]


def table(header, rows) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]


def report_setting(name, C, mu, m, data, args) -> list[str]:
    X, Y, X_test, Y_test = data
    problem = ranking_problem(X, Y, C, mu)
    method = "mlfs" if mu == 0 else "cmlfs"
    out = [f"\n## {name}, {method.upper()} (C = {C:g}, mu = {mu:g}, m = {m})\n"]

    start = time.perf_counter()
    fit = quiet(CuttingPlaneSolver(n_features=m, max_iter=args.max_iter, master="kelley").solve, problem)
    long_time = time.perf_counter() - start
    bounds = np.array(fit.history["bounds"])
    subsets = fit.solution.extras["subsets"]
    theta = relaxed_optimum(problem, m) if mu == 0 else None
    header = ["t", "l_t", "u_t", "relative gap", "features in the union"]
    if theta is not None:
        header += ["(u_t - theta*) / theta*", "(theta* - l_t) / theta*"]
    rows = []
    for t in [t for t in SHOWN if t <= len(bounds)]:
        lower, upper = bounds[t - 1]
        row = [t, f"{lower:.4f}", f"{upper:.4f}", f"{relative(lower, upper):.3g}", int(subsets[:t].any(axis=0).sum())]
        if theta is not None:
            row += [f"{(upper - theta[0]) / theta[0]:.2e}", f"{(theta[0] - lower) / theta[0]:.2e}"]
        rows.append(row)
    out += table(header, rows)
    reached = np.flatnonzero((bounds[:, 1] - bounds[:, 0]) <= 1e-3 * np.maximum(1.0, np.abs(bounds[:, 1])))
    out.append(
        f"\n{len(bounds)} iterations in {long_time:.1f} s; gap <= 1e-3 "
        + (f"first at t = {reached[0] + 1}." if reached.size else f"not reached within {len(bounds)} iterations.")
    )
    if theta is not None:
        value, lower, s = theta
        fractional = int(np.sum((s > 1e-6) & (s < 1 - 1e-6)))
        out.append(
            f"theta* = {value:.6f} (certified lower bound {lower:.6f}); the optimal s has "
            f"{int(np.sum(s > 1e-6))} non-zero weights of {len(s)}, {fractional} of them strictly between 0 and 1."
        )

    optimum_10 = restricted_optimum(problem, subsets[:10])
    tight = quiet(
        CuttingPlaneSolver(n_features=m, max_iter=20, tol=TIGHT, cd=RankingCDSolver(tol=1e-8), master="kelley").solve,
        problem,
    )
    tight_bounds = np.array(tight.history["bounds"])
    out.append(
        f"\nInner problem: u_10 = {bounds[9, 1]:.6f} against the optimum of the same 10-subset working set "
        f"{optimum_10:.6f} (relative excess {(bounds[9, 1] - optimum_10) / abs(optimum_10):.1e}). With every inner "
        f"problem solved at {TIGHT:g}: relative gap {relative(*tight_bounds[9]):.3g} after 10 iterations "
        f"(default {relative(*bounds[9]):.3g}) and {relative(*tight_bounds[-1]):.3g} after {len(tight_bounds)} "
        f"(default {relative(*bounds[len(tight_bounds) - 1]):.3g}), in {tight.certificate.time:.1f} s.\n"
    )

    rows = []
    for budget in args.budgets:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            model = quiet(CuttingPlaneSolver(n_features=m, max_iter=budget, master="kelley").solve, problem)
            times.append(time.perf_counter() - start)
        lower, upper = model.history["bounds"][-1]
        rows.append([
            budget, f"{np.median(times):.3f}", len(model.steps), sum(c.n_iter for c in model.steps),
            f"{relative(lower, upper):.3g}", int(model.solution.extras["subsets"].any(axis=0).sum()),
            f"{100 * macro_auc(Y_test, X_test @ model.solution.coef + model.solution.intercept):.2f}",
        ])
    out += table(["max_iter", "fit s", "alpha-steps", "epochs", "relative gap", "features used", "test macro AUC"], rows)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=str(HERE.parents[3] / "shared" / "datasets"))
    parser.add_argument("--table2", default=str(HERE / "runs" / "table2" / "results.jsonl"))
    parser.add_argument("--out", default=str(HERE))
    parser.add_argument("--max-iter", type=int, default=100)
    parser.add_argument("--budgets", type=int, nargs="+", default=[5, 10, 20, 50])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    lines = [
        "# Algorithm 2: the bound gap against the cutting-plane iterations",
        "",
        "Written by `cutting_plane_gap.py` (split 0 of the Table 2 protocol, 1000 training rows, standardised "
        "features; CMLFS at the parameters chosen most often, MLFS at the same C and m). Relative gap = "
        "(u_t - l_t) / max(1, |u_t|); tol = 1e-3 by default.",
    ]
    for dataset in ("scene", "yeast"):
        data = first_split(dataset, args.data_home)
        params = chosen_params(args.table2, "cmlfs", dataset)
        for mu in (params["mu"], 0.0):
            lines += report_setting(dataset, params["C"], mu, params["n_features"], data, args)
            print("\n".join(lines[-12:]), flush=True)
    (Path(args.out) / "cutting_plane_gap.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
