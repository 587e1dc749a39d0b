"""BSVM (SMO with Omega = I) against scikit-learn's SVC (LIBSVM) fitted label by label.

Both solve, per label, the SVM dual with C = 1/(n lambda) on the RBF kernel whose width is
the mean pairwise distance of the training rows (MLRL section 5.2); multilabel_core.solvers.smo
explains why BSVM's dual (Zhang & Yeung, *Multi-Label Relationship Learning*, eq. 12) is this
problem, rescaled.  Both stop at LIBSVM's rule with eps = 1e-3.  Three timings per dataset and lambda:

- ours: ``smo_solve`` from the rows (it computes K once, shared by the labels);
- the SVC loop on one precomputed kernel shared by the labels (K computed once, timed
  separately), and ours given the same K: the solvers alone;
- the SVC loop with ``kernel='rbf'`` (LIBSVM computes kernel values on demand per label);
- ours again with ``n_jobs=2`` (the labels' SMO solves on two threads; the same solution bitwise)
  against the same SVC loops, and its speed-up over ``n_jobs=1``.

Ratios are ours / SVC (below 1: ours is faster).  Targets: <= 1.0 against the precomputed
loop, <= 0.3 against the rbf loop, <= 0.5 against the precomputed loop with two threads and a
speed-up >= 1.7 of two threads over one (also timed alternately, :func:`timed_pair`), dual
objectives within 1e-4 (largest relative difference over the labels of
h_i = 1/2 beta_i^T K beta_i - sum |beta_i|, beta_i = y * alpha_i).

    python benchmarks/bench_smo.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from sklearn.svm import SVC

from _common import data_dir, print_table
from multilabel_core.datasets import load_dataset
from multilabel_core.kernels import RBFKernel
from multilabel_core.solvers import KernelSource, smo_solve

TOL = 1e-3


def timed(fn, repeat: int):
    """Median wall-clock and median process CPU seconds of ``fn()`` over ``repeat`` runs, and its result.

    CPU time (all threads of this process) is what other processes sharing the machine
    disturb least; wall-clock time is what a user waits.
    """
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return np.array([np.median(walls), np.median(cpus)]), result


def timed_pair(first, second, repeat: int):
    """Wall-clock medians of ``first()`` and ``second()`` run alternately, and the quartiles of their paired ratios.

    The speed-up of two threads over one is a ratio of two timings; on a shared host the
    memory bandwidth and cache other tenants leave change over seconds, so timing one side's
    runs and then the other's mixes that drift into the ratio.  Alternating the two and taking
    the ratio within each pair cancels what changes slower than a pair.
    """
    firsts, seconds = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        first()
        firsts.append(time.perf_counter() - start)
        start = time.perf_counter()
        second()
        seconds.append(time.perf_counter() - start)
    ratios = np.array(firsts) / np.array(seconds)
    return float(np.median(firsts)), float(np.median(seconds)), np.percentile(ratios, [25, 50, 75])


def label_objectives(K: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """h_i = 1/2 beta_i^T K beta_i - sum_j |beta_ji| for every column i of beta (n, L)."""
    return 0.5 * np.einsum("ji,ji->i", beta, K @ beta) - np.abs(beta).sum(axis=0)


def svc_loop(X, Y, C, **params) -> list[SVC]:
    return [SVC(C=C, tol=TOL, **params).fit(X, Y[:, i]) for i in range(Y.shape[1])]


def svc_betas(models, n: int) -> np.ndarray:
    beta = np.zeros((n, len(models)))
    for i, model in enumerate(models):
        beta[model.support_, i] = model.dual_coef_[0]
    return beta


def relative_difference(ours: np.ndarray, reference: np.ndarray) -> float:
    return float(np.max(np.abs(ours - reference) / np.maximum(np.abs(reference), 1e-300)))


def compare(name: str, lam: float, repeat: int) -> list:
    dataset = load_dataset(data_dir() / f"{name}.arff")
    X = np.asarray(dataset.X, dtype=np.float64)
    Y = 2.0 * dataset.Y - 1.0
    n, n_labels = Y.shape
    kernel = RBFKernel().resolve(X)
    C = 1.0 / (n * lam)
    identity = np.eye(n_labels)

    def ours_from_rows(n_jobs):
        return smo_solve(KernelSource(kernel, X), Y, identity, C, tol=TOL, n_jobs=n_jobs)

    def ours_given_K(n_jobs):
        return smo_solve(K, Y, identity, C, tol=TOL, n_jobs=n_jobs)

    t_kernel, K = timed(lambda: kernel(X), repeat)
    t_ours, ours = timed(lambda: ours_from_rows(1), repeat)
    t_ours2, ours2 = timed(lambda: ours_from_rows(2), repeat)
    t_ours_given_K, _ = timed(lambda: ours_given_K(1), repeat)
    t_ours_given_K2, _ = timed(lambda: ours_given_K(2), repeat)
    paired_1, paired_2, paired = timed_pair(lambda: ours_given_K(1), lambda: ours_given_K(2), max(repeat, 15))
    t_precomputed, precomputed = timed(lambda: svc_loop(K, Y, C, kernel="precomputed"), repeat)
    t_rbf, rbf = timed(lambda: svc_loop(X, Y, C, kernel="rbf", gamma=kernel.gamma), repeat)
    assert np.array_equal(ours.solution.dual, ours2.solution.dual), "n_jobs changed the solution"

    h_ours = label_objectives(K, ours.solution.dual * Y)
    h_precomputed = label_objectives(K, svc_betas(precomputed, n))
    h_rbf = label_objectives(K, svc_betas(rbf, n))
    # The same decisions: the signs of the training decision values, ours against SVC's, over all n x L.
    decisions = np.sign(K @ ours.solution.dual_coef + ours.solution.intercept)
    svc_decisions = np.column_stack([np.sign(model.decision_function(K)) for model in precomputed])
    differing = int(np.count_nonzero(decisions != svc_decisions))
    ratios = [t_ours / (t_kernel + t_precomputed), t_ours_given_K / t_precomputed, t_ours / t_rbf]
    threaded = [t_ours2 / (t_kernel + t_precomputed), t_ours_given_K2 / t_precomputed, t_ours2 / t_rbf]
    return {
        "wall": [name, n, n_labels, lam, t_ours[0], t_kernel[0] + t_precomputed[0], ratios[0][0],
                 t_ours_given_K[0], t_precomputed[0], ratios[1][0], t_rbf[0], ratios[2][0],
                 relative_difference(h_ours, h_precomputed), relative_difference(h_ours, h_rbf), differing],
        "threads": [name, lam, t_ours_given_K[0], t_ours_given_K2[0], t_ours_given_K[0] / t_ours_given_K2[0],
                    t_precomputed[0], threaded[1][0], t_ours2[0], threaded[0][0], threaded[2][0]],
        "paired": [name, lam, paired_1, paired_2, paired[1], f"{paired[0]:.2f}-{paired[2]:.2f}"],
        "cpu": [name, lam] + [ratio[1] for ratio in ratios],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per measurement (median)")
    args = parser.parse_args()
    results = [compare(name, lam, args.repeat) for name in ["yeast", "scene", "emotions"] for lam in (0.01, 1.0)]
    print(f"BSVM by SMO vs SVC per label; eps = {TOL}; median of {args.repeat} runs; {os.cpu_count()} CPUs")
    print("\nwall-clock seconds")
    print_table(
        ["data", "n", "L", "lambda",
         "ours s", "K + SVC pre s", "ratio", "ours(K) s", "SVC pre s", "ratio(K)",
         "SVC rbf s", "ratio rbf", "dh pre", "dh rbf", "diff. decisions"],
        [result["wall"] for result in results],
    )
    print("\nlabel threads: ours with n_jobs=1 and 2 (bitwise the same solution), wall-clock seconds")
    print_table(
        ["data", "lambda", "ours(K) 1 thr s", "ours(K) 2 thr s", "speed-up", "SVC pre s", "ratio(K) 2 thr",
         "ours 2 thr s", "ratio 2 thr", "ratio rbf 2 thr"],
        [result["threads"] for result in results],
    )
    print("\nthe speed-up again, n_jobs=1 and 2 alternated (max(repeat, 15) pairs; the ratio taken within each pair)")
    print_table(
        ["data", "lambda", "1 thr median s", "2 thr median s", "paired speed-up median", "interquartile range"],
        [result["paired"] for result in results],
    )
    print("\nthe same ratios in process CPU time")
    print_table(["data", "lambda", "ratio", "ratio(K)", "ratio rbf"], [result["cpu"] for result in results])
    print("\nratio = ours (from the rows) / (computing K + the precomputed SVC loop); "
          "diff. decisions = training decisions (signs, n x L) where ours and SVC's differ; "
          "ratio(K) = ours / SVC, both given K; ratio rbf = ours / the rbf SVC loop; "
          "dh = max_i |h_i - h_i^SVC| / |h_i^SVC|.")


if __name__ == "__main__":
    main()
