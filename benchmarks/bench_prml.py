"""Privileged multi-label family timings (You, Xu, Wang, Xu & Tao, *Privileged Multi-label Learning*), one run.

1. ``fit``: one PrML fit on bibtex (7395 x 1836 sparse, 159 labels, k = ceil(0.9 L) = 143):
   wall time, rounds, the epochs of every round's W-step and D-step (the certificates in
   ``certificate_``), their converged flags, the time per epoch of each step, and the peak
   memory (tracemalloc for the Python/NumPy allocations, ``getrusage`` maxrss for the
   process).  The full fit (PrML's default rounds and epoch budget) does not fit a short
   run: ``--rounds`` and ``--cd-max-iter`` cap it, and the table says so.
2. ``scaling``: the D-step's epoch cost, O(n k (nnz(x) + L)) per epoch by grouping the
   coordinates example by example, plus the privileged part's O(L^2) per example.
   ``svmplus_cd(X, S, S, embedding=W)`` (random W (k, L), mask 1 - I as PrML's default
   pools, no shrinking, tol so small that every run does exactly ``--epochs`` epochs) on
   random subsamples of n rows of enron and bibtex; the log-log slope of the time per epoch
   against L n (least squares over the sizes; target close to 1).
3. ``price``: PrML against LEML at the same C and k (defaults otherwise), yeast
   (standardised) and enron (sparse): fit times, rounds, epochs, and the ratio PrML / LEML,
   the price of the privileged information, per fit and per epoch.
4. ``wstep``: LEML's W-step, L independent hinge SVMs on the projected rows F = X D^T (x
   with its constant 1, D the first round's random dictionary, as the solver draws it),
   by ``embedded_hinge_cd`` label by label (as the solver runs it) against scikit-learn's
   ``LinearSVC(loss="hinge", dual=True, fit_intercept=False)`` fitted label by label (the
   same problem, the same stopping rule: LIBLINEAR's eps on the dual's projected gradients,
   ``tol`` for both, the same epoch limit).  Ratio ours / LIBLINEAR (below 1 is faster), the
   relative difference of the summed primal objectives and of the weights.
5. ``subsolvers``: PrML, LEML and PrBR on a random yeast half (seed 0, standardised on the
   training half) with ``sub_solver="cd"`` (dual CD, Algorithm 1) against ``"ipm"`` (the
   interior-point method, docs/solvers/ipm.md), C in {0.1, 1}, defaults otherwise: wall time,
   rounds, whether every sub-solve met its gap, the final objective and the test average
   precision.  Ratio ipm / cd of the times (below 1 is faster).
6. ``sparse``: PrBR on a random enron half (seed 0, CSR rows, the labels without a relevant training row
   dropped), C = 1: the same columns as ``subsolvers``.  ``sub_solver="auto"`` takes the interior-point
   method here since it prices sparse rows by their nonzeros (52 systems of 1002 unknowns).
7. ``dstep``: LEML's first-round D-step on corel16k001 (``--dstep-n`` rows of bench_scale.py's training
   permutation, standardised, the labels present in them; k = ceil(0.9 L); C = 1): the first D (the SVD
   start), the W-step by the interior-point method (certified), then the D-step
   ``min 1/2 ||D||^2 + C sum hinge(y w_i^T D x_j)`` by dual CD (``embedded_hinge_cd``, ``--dstep-passes``
   epochs at eps 1e-3, cold as the solver's first round) and by cuts (``embedded_hinge_bundle``, as many cuts,
   from the incoming D): CPU seconds, primal, dual, relative gap, KKT violation.  Beside them the conditioning
   behind CD's stall: the singular values of W and the eigenvalues of X_a^T X_a.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_prml.py [--parts fit,scaling,price,wstep,subsolvers,sparse] [--append]

Run the script by its path (not ``python -c`` from the checkout's root, where a stale
``multilabel_core.egg-info`` may hide the ``prml`` entry point).  BLAS is limited to one
thread (threadpoolctl), so the timings are single-threaded.  Times are wall-clock
(``time.perf_counter``); scaling and wstep take the minimum of ``--repeat`` runs (noise from
other jobs only adds).  ``--append`` appends the markdown tables to RESULTS.md.
"""

from __future__ import annotations

import argparse
import math
import resource
import subprocess
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

from _common import best_time, data_dir, markdown_table, print_table
from multilabel_core import ConvergenceWarning
from multilabel_core.datasets import load_dataset
from multilabel_core.metrics import METRICS
from multilabel_core.validation import to_signs
from multilabel_core_plugins.prml import LEML, PrBR, PrML
from multilabel_core_plugins.prml.bundle import embedded_hinge_bundle
from multilabel_core_plugins.prml.svmplus import embedded_hinge_cd, embedded_hinge_ipm, svmplus_cd

PARTS = ("fit", "scaling", "price", "wstep", "subsolvers", "sparse", "dstep")
MARKDOWN: list[str] = []


def load(name: str):
    dataset = load_dataset(data_dir() / f"{name}.arff")
    X = dataset.X.tocsr() if sp.issparse(dataset.X) else np.asarray(dataset.X, dtype=np.float64)
    if name == "yeast":
        X = StandardScaler().fit_transform(X)
    return X, np.asarray(dataset.Y)


def rank(L: int) -> int:
    return math.ceil(0.9 * L)


def table(title: str, header: list, rows: list) -> None:
    print(f"\n{title}")
    print_table(header, rows)
    MARKDOWN.extend(["", markdown_table(title, header, rows)])


def step_epochs(certificates, name: str) -> tuple[list, list, float]:
    steps = [c.statistics[name] for c in certificates]
    epochs = [s.n_iter for s in steps]
    return epochs, [bool(s.converged) for s in steps], sum(s.time for s in steps)


# -- 1. one PrML fit on bibtex ----------------------------------------------------------------


def part_fit(args) -> None:
    X, Y = load("bibtex")
    model = PrML(C=1.0, rank=0.9, max_iter=args.rounds, cd_max_iter=args.cd_max_iter)
    tracemalloc.start()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the flags are reported below
        model.fit(X, Y)
    wall = time.perf_counter() - start
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux -> GiB
    certificates = model.certificate_
    w_epochs, w_conv, w_time = step_epochs(certificates, "w_step")
    d_epochs, d_conv, d_time = step_epochs(certificates, "d_step")
    print(f"bibtex: n={X.shape[0]}, d={X.shape[1]}, nnz={X.nnz}, L={Y.shape[1]}, k={model.label_weights_.shape[0]}")
    defaults = PrML().get_params()
    capped = args.rounds < defaults["max_iter"] or args.cd_max_iter < defaults["cd_max_iter"]
    table(
        f"1. PrML on bibtex (C = 1, k = 0.9 -> {model.label_weights_.shape[0]}, cd_tol {model.cd_tol:g}; "
        f"max_iter = {args.rounds}, cd_max_iter = {args.cd_max_iter}"
        f"{' (capped; defaults {max_iter}, {cd_max_iter})'.format(**defaults) if capped else ''})",
        ["wall s", "rounds", "W-step epochs", "W conv.", "D-step epochs", "D conv.", "W s / epoch", "D s / epoch",
         "round conv.", "last rel. gap", "tracemalloc peak GiB", "maxrss GiB"],
        [[wall, len(certificates), "/".join(map(str, w_epochs)), "/".join("y" if c else "n" for c in w_conv),
          "/".join(map(str, d_epochs)), "/".join("y" if c else "n" for c in d_conv),
          w_time / max(sum(w_epochs), 1), d_time / max(sum(d_epochs), 1),
          "/".join("y" if c.converged else "n" for c in certificates), certificates[-1].relative_gap,
          traced_peak / 2**30, maxrss]],
    )


# -- 2. D-step epoch cost against L n -----------------------------------------------------------


def dstep_epoch(X, S, W, epochs: int, repeat: int) -> float:
    L = S.shape[1]
    mask = ~np.eye(L, dtype=bool)

    def run():
        return svmplus_cd(X, S, S, 1.0, 1.0, embedding=W, privileged_mask=mask, fit_intercept=True, tol=1e-12,
                          max_iter=epochs, shrinking=False, random_state=0)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the epoch cap is the point here
        seconds, fit = best_time(run, repeat)
    if fit.certificate.n_iter != epochs:
        raise RuntimeError(f"expected {epochs} epochs, the engine ran {fit.certificate.n_iter}")
    return seconds / epochs


def part_scaling(args) -> None:
    rng = np.random.default_rng(0)
    rows, slopes = [], []
    for name, sizes in (("enron", (200, 425, 850, 1702)), ("bibtex", (925, 1850, 3700, 7395))):
        X, Y = load(name)
        S = to_signs(Y)
        L = S.shape[1]
        k = rank(L)
        W = rng.standard_normal((k, L)) / np.sqrt(k)
        pairs, per_epoch = [], []
        for n in sizes:
            sample = np.sort(rng.choice(X.shape[0], n, replace=False))
            Xs = X[sample]
            seconds = dstep_epoch(Xs, S[sample], W, args.epochs, args.repeat)
            nnz = Xs.nnz / n if sp.issparse(Xs) else X.shape[1]
            pairs.append(L * n)
            per_epoch.append(seconds)
            rows.append([name, n, L, k, L * n, nnz, 1e3 * seconds, 1e9 * seconds / (n * k * (nnz + L)),
                         1e9 * seconds / (L * n)])
        slope = float(np.polyfit(np.log(pairs), np.log(per_epoch), 1)[0])
        slopes.append([name, slope])
    table(
        f"2. D-step epoch time against L n: svmplus_cd(embedding = random W (k, L)), {args.epochs} epochs, "
        "no shrinking, min of {0}".format(args.repeat),
        ["data", "n", "L", "k", "L n", "nnz / row", "ms / epoch", "ns / (n k (nnz + L))", "ns / pair"], rows,
    )
    table("2b. log-log slope of the time per epoch against L n (target close to 1)", ["data", "slope"], slopes)


# -- 3. PrML vs LEML --------------------------------------------------------------------------


def part_price(args) -> None:
    rows = []
    for name in ("yeast", "enron"):
        X, Y = load(name)
        fits = {}
        for label, factory in (("PrML", PrML), ("LEML", LEML)):
            model = factory(C=args.C, rank=0.9, cd_max_iter=args.price_cd_max_iter)
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model.fit(X, Y)
            wall = time.perf_counter() - start
            w_epochs, w_conv, _ = step_epochs(model.certificate_, "w_step")
            d_epochs, d_conv, _ = step_epochs(model.certificate_, "d_step")
            fits[label] = (wall, len(model.certificate_), sum(w_epochs) + sum(d_epochs), all(w_conv + d_conv))
        (tp, rp, ep, cp), (tl, rl, el, cl) = fits["PrML"], fits["LEML"]
        rows.append([name, rank(Y.shape[1]), tp, rp, ep, "y" if cp else "n", tl, rl, el, "y" if cl else "n", tp / tl,
                     (tp / ep) / (tl / el)])
    table(
        "3. PrML vs LEML, C = {0}, k = 0.9, tol {tol:g}, max_iter {max_iter}, cd_tol {cd_tol:g}, cd_max_iter {1}".format(
            args.C, args.price_cd_max_iter, **LEML().get_params()),
        ["data", "k", "PrML s", "rounds", "epochs", "all conv.", "LEML s", "rounds", "epochs", "all conv.",
         "PrML / LEML", "per epoch"], rows,
    )


# -- 4. LEML's W-step vs LIBLINEAR --------------------------------------------------------------


def hinge_primal(F, S, C: float, W) -> float:
    return float(0.5 * np.sum(W * W) + C * np.maximum(0.0, 1.0 - S * (F @ W)).sum())


def liblinear(F, S, C: float, tol: float, max_iter: int):
    W = np.empty((F.shape[1], S.shape[1]))
    for label in range(S.shape[1]):
        model = LinearSVC(loss="hinge", dual=True, fit_intercept=False, C=C, tol=tol, max_iter=max_iter,
                          random_state=0)
        W[:, label] = model.fit(F, S[:, label]).coef_[0]
    return W


def ours_per_label(F, S, C: float, tol: float, max_iter: int):
    """The W-step as PrivilegedCDSolver runs it for LEML: one engine solve per label, each with its own stop."""
    fits = [embedded_hinge_cd(F, S[:, [label]], C, embedding=None, tol=tol, max_iter=max_iter, random_state=0)
            for label in range(S.shape[1])]
    W = np.column_stack([fit.solution.coef[:, 0] for fit in fits])
    gap = sum(fit.certificate.gap for fit in fits) / max(1.0, abs(sum(fit.certificate.primal for fit in fits)))
    return W, gap, all(fit.certificate.converged for fit in fits)


def part_wstep(args) -> None:
    rng = np.random.default_rng(0)
    rows = []
    for name in ("yeast", "enron", "bibtex"):
        X, Y = load(name)
        S = to_signs(Y)
        k = rank(S.shape[1])
        dimension = X.shape[1] + 1
        D = rng.standard_normal((k, dimension)) / np.sqrt(dimension)  # the solver's first dictionary
        F = np.ascontiguousarray(np.asarray(X @ D[:, :-1].T) + D[:, -1])
        for tol in (0.1, 1e-3):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # non-convergence is in the table
                t_ours, (W_ours, gap, converged) = best_time(lambda: ours_per_label(F, S, args.C, tol, 1000),
                                                             args.repeat)
                t_peer, W_peer = best_time(lambda: liblinear(F, S, args.C, tol, 1000), args.repeat)
            p_ours, p_peer = hinge_primal(F, S, args.C, W_ours), hinge_primal(F, S, args.C, W_peer)
            rows.append([name, F.shape[0], k, S.shape[1], tol, t_ours, t_peer, t_ours / t_peer,
                         (p_ours - p_peer) / p_peer, float(np.linalg.norm(W_ours - W_peer) / np.linalg.norm(W_peer)),
                         gap, "y" if converged else "n"])
    table(
        f"4. LEML W-step: embedded_hinge_cd per label (the solver's W-step) vs LinearSVC(hinge, dual, no intercept) "
        f"per label, C = {args.C}, "
        "F = [X 1] D^T (random D), max_iter 1000",
        ["data", "n", "k", "L", "tol", "ours s", "liblinear s", "ratio", "rel. primal diff", "rel. |W diff|",
         "our rel. gap", "conv."], rows,
    )


# -- 5. the sub-solvers: dual CD against the interior-point method --------------------------------


def part_subsolvers(args) -> None:
    dataset = load_dataset(data_dir() / "yeast.arff")
    X, Y = np.asarray(dataset.X, dtype=np.float64), np.asarray(dataset.Y)
    order = np.random.default_rng(0).permutation(X.shape[0])
    train, test = order[: X.shape[0] // 2], order[X.shape[0] // 2:]
    scaler = StandardScaler().fit(X[train])
    X_train, X_test = scaler.transform(X[train]), scaler.transform(X[test])
    rows = [_cd_against_ipm(name, factory, C, X_train, Y[train], X_test, Y[test])
            for name, factory in (("PrML", PrML), ("LEML", LEML), ("PrBR", PrBR)) for C in (0.1, 1.0)]
    table(
        "5. Sub-solvers on a yeast half (1208 rows, 14 labels, k = 13): dual CD (cd_tol 1e-3, cd_max_iter 10000) "
        "against the interior-point method (cd_tol 1e-3)",
        SUBSOLVER_HEADER, rows,
    )


def part_sparse(args) -> None:
    X, Y = load("enron")
    order = np.random.default_rng(0).permutation(X.shape[0])
    train, test = order[: X.shape[0] // 2], order[X.shape[0] // 2:]
    labels = (Y[train] > 0).any(axis=0) & (Y[train] <= 0).any(axis=0)
    Y = Y[:, labels]
    row = _cd_against_ipm("PrBR", PrBR, 1.0, X[train], Y[train], X[test], Y[test])
    table(
        f"6. Sub-solvers on sparse rows: PrBR on an enron half ({len(train)} CSR rows, 1001 features, "
        f"{Y.shape[1]} labels), dual CD (cd_tol 1e-3, cd_max_iter 10000) against the interior-point method",
        SUBSOLVER_HEADER, [row],
    )


def part_dstep(args) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_scale import _corel  # the same rows and standardisation as the scale table

    n = args.dstep_n
    X, Y01, _, _ = _corel(n)
    present = (Y01.sum(axis=0) > 0) & (Y01.sum(axis=0) < n)
    Y = to_signs(Y01[:, present])
    L = Y.shape[1]
    k = rank(L)
    Xa = np.column_stack([X, np.ones(n)])
    U, _, _ = np.linalg.svd(Xa.T @ Y, full_matrices=False)
    D = U[:, :k].T  # the solver's SVD start
    F = Xa @ D.T
    start = time.process_time()
    W = np.column_stack([embedded_hinge_ipm(F, Y[:, [i]], 1.0, tol=1e-3 / L, max_iter=200).solution.coef.ravel()
                         for i in range(L)])
    w_time = time.process_time() - start
    singular = np.linalg.svd(W, compute_uv=False)
    eigen = np.linalg.eigvalsh(Xa.T @ Xa)
    rows = []
    for name, run in (
        ("dual CD", lambda: embedded_hinge_cd(X, Y, 1.0, embedding=W, fit_intercept=True, tol=1e-3,
                                              max_iter=args.dstep_passes, random_state=0, warn=False)),
        ("cuts", lambda: embedded_hinge_bundle(X, Y, 1.0, embedding=W, fit_intercept=True, tol=1e-3,
                                               max_iter=args.dstep_passes, M0=D, warn=False)),
    ):
        start = time.process_time()
        fit = run()
        c = fit.certificate
        rows.append([name, c.n_iter, f"{time.process_time() - start:.1f}", f"{c.primal:.4g}", f"{c.dual:.4g}",
                     f"{c.relative_gap:.3g}", f"{c.kkt_violation:.3g}", "y" if c.converged else "n"])
    table(
        f"7. LEML's first D-step on corel16k001, n = {n} (L = {L}, k = {k}, C = 1; W-step by the interior-point "
        f"method {w_time:.1f} CPU-s, certified): sigma(W) {singular[0]:.3g} .. {singular[-1]:.3g}, "
        f"eig(X_a^T X_a) {eigen[-1]:.3g} .. {eigen[0]:.3g}, initial D-step objective "
        f"{0.5 * k + float(np.maximum(0.0, 1.0 - Y * (F @ W)).sum()):.4g}",
        ["D-step by", "passes", "CPU s", "primal", "dual", "rel. gap", "KKT", "certified"], rows,
    )


SUBSOLVER_HEADER = ["method", "C", "CD s", "rounds", "all conv.", "objective", "AP", "IPM s", "rounds", "all conv.",
                    "objective", "AP", "IPM / CD"]


def _cd_against_ipm(name, factory, C, X_train, Y_train, X_test, Y_test) -> list:
    """One row of the sub-solver tables: the same fit with ``sub_solver="cd"`` and ``"ipm"``."""
    measured = {}
    for sub_solver in ("cd", "ipm"):
        model = factory(C=C, sub_solver=sub_solver)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # the table says it
            model.fit(X_train, Y_train)
        wall = time.perf_counter() - start
        steps = [c for c in model.w_step_certificates_ + model.d_step_certificates_ if c is not None]
        ap = METRICS["average_precision"].function(Y_test, model.decision_function(X_test))
        measured[sub_solver] = (wall, len(model.certificate_), all(c.converged for c in steps),
                                float(model.objective_history_[-1]), ap)
    (tc, rc, cc, oc, ac), (ti, ri, ci, oi, ai) = measured["cd"], measured["ipm"]
    return [name, C, tc, rc, "y" if cc else "n", oc, ac, ti, ri, "y" if ci else "n", oi, ai, ti / tc]


def revision() -> str:
    """The checkout's commit, and whether the working tree differed from it (others' edits are measured too)."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "commit unknown"
    return f"at {head}" + (" with uncommitted changes" if dirty else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated subset of {','.join(PARTS)}")
    parser.add_argument("--rounds", type=int, default=2, help="fit: PrML max_iter (rounds; a cap below PrML's default)")
    parser.add_argument("--cd-max-iter", type=int, default=20, help="fit: PrML cd_max_iter (a cap below PrML's default)")
    parser.add_argument("--price-cd-max-iter", type=int, default=PrML().cd_max_iter, help="price: cd_max_iter of both fits")
    parser.add_argument("--epochs", type=int, default=3, help="scaling: epochs per timed D-step")
    parser.add_argument("--repeat", type=int, default=2, help="scaling, wstep: runs per timing (minimum taken)")
    parser.add_argument("--C", type=float, default=1.0, help="price, wstep: C")
    parser.add_argument("--dstep-n", type=int, default=1000, help="dstep: corel16k001 training rows")
    parser.add_argument("--dstep-passes", type=int, default=300, help="dstep: epochs of CD and cuts of the bundle")
    parser.add_argument("--append", action="store_true", help="append the tables to benchmarks/RESULTS.md")
    args = parser.parse_args()
    chosen = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = sorted(set(chosen) - set(PARTS))
    if unknown:
        parser.error(f"unknown parts {unknown}; choose from {','.join(PARTS)}")
    with threadpool_limits(limits=1):
        for part in PARTS:  # the fit first: maxrss is the process's peak so far
            if part in chosen:
                globals()[f"part_{part}"](args)
    if args.append:
        with open(Path(__file__).with_name("RESULTS.md"), "a") as results:
            command = "OPENBLAS_NUM_THREADS=1 python benchmarks/bench_prml.py " + " ".join(sys.argv[1:])
            results.write("\n".join([f"\n### bench_prml.py tables ({time.strftime('%Y-%m-%d %H:%M')}, {revision()}): "
                                     f"`{command}`", *MARKDOWN]) + "\n")


if __name__ == "__main__":
    main()
