"""Dual CD on a hard problem: binary relevance's L2-SVMs on standardised cal500, gap against epochs.

The problem (the issue's): the first 400 rows of cal500, standardised on those rows, the labels
that are constant on them dropped (174 of 174 kept), squared hinge with the bias as a constant
feature of value 1 -- ``BinaryRelevance(C)``'s problem, solved by ``linear_svm_cd`` with its
defaults (tol = 1e-3 on the projected gradients, max_iter = 10000 epochs).  400 rows and 69
weights: the dual has more free coordinates than X has rank, which is what makes it hard
(docs/solvers/cd.md, "Hard problems").

1. Gap against epochs at C = 1: the solve from alpha = 0 stopped after E epochs, for growing E,
   with the face steps (the default) and without (the epochs alone, as before them).  Reported:
   the worst relative duality gap over labels, ``(P_l - D_l) / max(1, |P_l|)``, the labels whose
   solve converged, the epochs and face steps over labels, and the time.
2. Ours against one-vs-rest ``LinearSVC(dual=True)`` on the same problem, timed in the same run,
   interleaved, best of ``--repeat``: LinearSVC at its defaults (tol = 1e-4, max_iter = 1000) and
   at ours (tol = 1e-3, max_iter = 10000).  LinearSVC has no certificate: its column is the worst
   over labels of ``(P_l(LinearSVC) - D_l(ours)) / max(1, |P_l|)``, a bound on how far its
   objective is above the optimum (our dual is a lower bound on it); "conv." counts the labels
   fitted without a ConvergenceWarning.

Run: ``python benchmarks/bench_cd_hard.py [--repeat 3] [--part gap,peer] [--append]``
(cal500 from $MULTILABEL_CORE_DATA or ../shared/datasets; ``--append`` adds the tables to
RESULTS.md).  Without ``face_steps`` in ``linear_svm_cd`` (a build before them) part 1 runs the
epochs alone and part 2 times that build.
"""

from __future__ import annotations

import argparse
import datetime
import inspect
import subprocess
import time
import warnings
from pathlib import Path

import multilabel_core
import numpy as np
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.svm import LinearSVC

from _common import data_dir, markdown_table, print_table
from multilabel_core.datasets import load_dataset
from multilabel_core.experiments.preprocessing import Standardizer
from multilabel_core.solvers import linear_svm_cd
from multilabel_core.validation import to_signs

RESULTS = Path(__file__).with_name("RESULTS.md")
HAS_FACE_STEPS = "face_steps" in inspect.signature(linear_svm_cd).parameters


def cal500_problem(n_rows: int = 400):
    """The first n_rows of cal500, standardised on them, without the labels constant on them: X, signs."""
    dataset = load_dataset("cal500", str(data_dir()))
    X = dataset.X.toarray() if hasattr(dataset.X, "toarray") else np.asarray(dataset.X)
    Y = dataset.Y.toarray() if hasattr(dataset.Y, "toarray") else np.asarray(dataset.Y)
    X, Y = np.asarray(X[:n_rows], dtype=np.float64), np.asarray(Y[:n_rows])
    Y = Y[:, Y.min(axis=0) != Y.max(axis=0)]
    return np.ascontiguousarray(Standardizer().fit(X).transform(X)), to_signs(Y)


def squared_hinge_primal(X, signs, C, coef, intercept) -> np.ndarray:
    """Per label, 1/2 (||w||^2 + b^2) + C sum_i max(0, 1 - y_i (w^T x_i + b))^2 (intercept_scaling 1)."""
    margins = signs * (X @ coef + intercept)
    return 0.5 * (np.sum(coef**2, axis=0) + intercept**2) + C * np.sum(np.maximum(0.0, 1.0 - margins) ** 2, axis=0)


def ours(X, signs, C, max_iter=10000, face_steps=True):
    extra = {"face_steps": face_steps} if HAS_FACE_STEPS else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # non-convergence is a column of the tables
        return linear_svm_cd(X, signs, C, loss="squared_hinge", fit_intercept=True, tol=1e-3, max_iter=max_iter,
                             random_state=0, **extra)


def label_gaps(certificate) -> np.ndarray:
    primal, dual = np.array(certificate.statistics["primal"]), np.array(certificate.statistics["dual"])
    return (primal - dual) / np.maximum(1.0, np.abs(primal))


def gap_against_epochs(X, signs, C: float, budgets) -> list:
    rows = []
    for face_steps in ((True, False) if HAS_FACE_STEPS else (False,)):
        for budget in budgets:
            start = time.perf_counter()
            fit = ours(X, signs, C, max_iter=budget, face_steps=face_steps)
            seconds = time.perf_counter() - start
            statistics = fit.certificate.statistics
            rows.append([
                "yes" if face_steps else "no", budget, float(label_gaps(fit.certificate).max()),
                f"{sum(statistics['converged'])} / {signs.shape[1]}", sum(statistics["n_epochs"]),
                sum(statistics.get("n_face_steps", [0])), seconds,
            ])
    return rows


def linearsvc(X, signs, C, tol, max_iter):
    coef, intercept, converged = np.empty((X.shape[1], signs.shape[1])), np.empty(signs.shape[1]), 0
    for label in range(signs.shape[1]):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SklearnConvergenceWarning)
            model = LinearSVC(C=C, dual=True, tol=tol, max_iter=max_iter, random_state=0).fit(X, signs[:, label])
        converged += not any(issubclass(w.category, SklearnConvergenceWarning) for w in caught)
        coef[:, label], intercept[label] = model.coef_[0], model.intercept_[0]
    return coef, intercept, converged


def versus_linearsvc(X, signs, C: float, peer_tol: float, peer_max_iter: int, repeat: int) -> list:
    ours_times, peer_times = [], []
    for _ in range(repeat):  # interleaved: the load of other jobs falls on both alike
        start = time.perf_counter()
        fit = ours(X, signs, C)
        ours_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        coef, intercept, peer_converged = linearsvc(X, signs, C, peer_tol, peer_max_iter)
        peer_times.append(time.perf_counter() - start)
    dual = np.array(fit.certificate.statistics["dual"])
    peer_primal = squared_hinge_primal(X, signs, C, coef, intercept)
    L = signs.shape[1]
    return [
        C, f"{peer_tol:g} / {peer_max_iter}", min(ours_times), min(peer_times), min(ours_times) / min(peer_times),
        float(label_gaps(fit.certificate).max()), f"{sum(fit.certificate.statistics['converged'])} / {L}",
        float(np.max((peer_primal - dual) / np.maximum(1.0, np.abs(peer_primal)))), f"{peer_converged} / {L}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--part", default="gap,peer")
    parser.add_argument("--append", action="store_true")
    args = parser.parse_args()
    X, signs = cal500_problem()
    package = Path(multilabel_core.__file__).parent
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    print(f"cal500, first {X.shape[0]} rows standardised: d={X.shape[1]}, L={signs.shape[1]}; "
          f"face steps {'available' if HAS_FACE_STEPS else 'absent (a build before them)'}")
    tables = []
    if "gap" in args.part:
        header = ["face steps", "max_iter", "worst label rel. gap", "labels conv.", "epochs", "face steps taken", "s"]
        rows = gap_against_epochs(X, signs, 1.0, (10, 30, 100, 300, 1000, 3000, 10000))
        print("\n1. C = 1: stopped after max_iter epochs")
        print_table(header, rows)
        tables.append(markdown_table("C = 1, the solve stopped after `max_iter` epochs (one run):", header, rows))
    if "peer" in args.part:
        header = ["C", "LinearSVC tol / max_iter", "ours s", "LinearSVC s", "ratio", "our worst rel. gap",
                  "our labels conv.", "LinearSVC worst rel. gap bound", "LinearSVC labels conv."]
        settings = [(0.01, 1e-4, 1000), (0.1, 1e-4, 1000), (1.0, 1e-4, 1000), (1.0, 1e-3, 10000), (10.0, 1e-4, 1000)]
        rows = [versus_linearsvc(X, signs, C, tol, max_iter, args.repeat) for C, tol, max_iter in settings]
        print(f"\n2. ours (tol 1e-3, max_iter 10000) against one-vs-rest LinearSVC, best of {args.repeat}, interleaved")
        print_table(header, rows)
        tables.append(markdown_table(
            f"Ours (tol 1e-3, max_iter 10000) against one-vs-rest `LinearSVC(dual=True)`, best of {args.repeat}, "
            "interleaved:", header, rows))
    if args.append and tables:
        stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        with RESULTS.open("a") as out:
            build = "face steps on by default" if HAS_FACE_STEPS else f"a build without face steps ({package})"
            out.write(f"\n### bench_cd_hard.py tables ({stamp}, script at {commit}, {build}): "
                      f"`python benchmarks/bench_cd_hard.py --repeat {args.repeat} --part {args.part} --append`\n\n")
            out.write("\n\n".join(tables) + "\n")


if __name__ == "__main__":
    main()
