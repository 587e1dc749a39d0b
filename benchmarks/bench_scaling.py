"""How SMO's fit time and memory grow with n, and its memory on rcv1subset1 (101 labels).

1. BSVM (Omega = I, lambda = 0.01, C = 1/(n lambda), eps = 1e-3) on row subsamples of scene,
   n in {500, 1000, 2000, 4000}, RBF kernel with the width of the full data set (so every
   n sees the same kernel function).  scene has 2407 rows: n = 4000 samples rows *with
   replacement* (duplicate rows, hence pairs with a_jk = 0 and the tau fallback); the
   smaller n sample without replacement.  Reported: median fit time, the tracemalloc peak
   (numpy buffers are traced) and the peak resident set size of the process (ru_maxrss),
   and the log-log slopes of time and traced memory against n.
2. SMO on rcv1subset1 with all 101 labels, linear kernel, sparse X (never densified), the
   default 200 MB kernel budget: K (6000 x 6000, 288 MB) does not fit, so columns go
   through the LRU cache.  Target: peak memory below 1.5 GB.

Each measurement runs in a fresh process that receives its data from this one, so that
ru_maxrss is that fit's own peak (with the interpreter, the libraries and the data, the
baseline printed beside it; reading the ARFF files and the RBF width happen here).

    python benchmarks/bench_scaling.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import os
import resource
import time
import tracemalloc

import numpy as np

from _common import data_dir, print_table
from multilabel_core.datasets import load_dataset
from multilabel_core.kernels import LinearKernel, RBFKernel

SIZES = (500, 1000, 2000, 4000)
LAMBDA = 0.01
MEMORY_LIMIT_MB = 1.5 * 1024


def _megabytes(kilobytes: int) -> float:
    return kilobytes / 1024.0


def _measure(fit, repeat: int) -> dict:
    """Median time of ``fit()`` over ``repeat`` runs; tracemalloc and RSS peaks of the first."""
    baseline = _megabytes(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    tracemalloc.start()
    start = time.perf_counter()
    result = fit()
    times = [time.perf_counter() - start]
    traced_peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    for _ in range(repeat - 1):
        start = time.perf_counter()
        fit()
        times.append(time.perf_counter() - start)
    return {
        "time": float(np.median(times)),
        "traced_mb": traced_peak,
        "rss_mb": _megabytes(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss),
        "baseline_mb": baseline,
        "certificate": result.certificate,
    }


def smo_fit(kernel, X, Y, repeat: int) -> dict:
    """BSVM by SMO on (X, Y) with C = 1/(n lambda); runs in the child process."""
    from multilabel_core.solvers import KernelSource, smo_solve

    C = 1.0 / (X.shape[0] * LAMBDA)
    return _measure(lambda: smo_solve(KernelSource(kernel, X), Y, np.eye(Y.shape[1]), C, tol=1e-3), repeat)


def scene_subsamples():
    """(n, kernel, X, Y) for each n; the kernel's width is that of the whole data set."""
    dataset = load_dataset(data_dir() / "scene.arff")
    X = np.asarray(dataset.X, dtype=np.float64)
    kernel = RBFKernel().resolve(X)
    rng = np.random.default_rng(0)
    for n in SIZES:
        rows = rng.choice(X.shape[0], size=n, replace=n > X.shape[0])
        yield n, kernel, X[rows], 2.0 * dataset.Y[rows] - 1.0


def in_fresh_process(function, *args) -> dict:
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(function, *args).result()


def slope(sizes, values) -> float:
    return float(np.polyfit(np.log(sizes), np.log(values), 1)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed fits per size (median)")
    args = parser.parse_args()
    print(f"SMO scaling on scene subsamples (BSVM, RBF, lambda={LAMBDA}, eps=1e-3); {os.cpu_count()} CPUs")
    results = [in_fresh_process(smo_fit, kernel, X, Y, args.repeat) for n, kernel, X, Y in scene_subsamples()]
    rows = [
        [n, "yes" if n > 2407 else "no", r["time"], r["certificate"].n_iter, r["traced_mb"], r["rss_mb"], r["baseline_mb"]]
        for n, r in zip(SIZES, results)
    ]
    print_table(["n", "replacement", "fit s", "SMO steps", "traced peak MB", "peak RSS MB", "RSS before MB"], rows)
    print(f"log-log slope against n: fit time {slope(SIZES, [r['time'] for r in results]):.2f}, "
          f"traced peak memory {slope(SIZES, [r['traced_mb'] for r in results]):.2f} "
          "(the process RSS grows only once the arrays outgrow what the interpreter already holds)")

    print("\nSMO on rcv1subset1, all labels, linear kernel, sparse X, default 200 MB kernel budget")
    rcv1 = load_dataset(data_dir() / "rcv1subset1.arff")
    r = in_fresh_process(smo_fit, LinearKernel(), rcv1.X, 2.0 * rcv1.Y - 1.0, 1)
    (shape, nnz, n_labels), certificate = (rcv1.X.shape, rcv1.X.nnz, rcv1.Y.shape[1]), r["certificate"]
    statistics = certificate.statistics
    print_table(
        ["X", "nnz", "labels", "fit s", "converged", "steps", "cache hits", "misses", "traced peak MB",
         "peak RSS MB", "RSS before MB"],
        [[f"{shape[0]}x{shape[1]}", nnz, n_labels, r["time"], certificate.converged, certificate.n_iter,
          statistics["cache_hits"], statistics["cache_misses"], r["traced_mb"], r["rss_mb"], r["baseline_mb"]]],
    )
    verdict = "below" if r["rss_mb"] < MEMORY_LIMIT_MB else "ABOVE"
    print(f"peak RSS {r['rss_mb']:.0f} MB is {verdict} the 1.5 GB target")


if __name__ == "__main__":
    main()
