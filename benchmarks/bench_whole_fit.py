"""Whole fits as a user times them, beside the peer's whole path, in one run: ratios ours / peer.

"Whole fit": from the user's arrays to a fitted model -- validation, the kernel matrix (or the
checks of the kernel matrix the user passes), the solve -- for ours and for the peer alike.
Each pair is timed in alternation (ours, peer, ours, peer, ...; ``--repeat`` pairs, default 3)
and the ratio taken within each pair, so that load which changes slower than a pair cancels;
the tables give the median times, the median ratio and the range of the per-pair ratios, and
the load average of the machine when the row was timed (``os.getloadavg``, 1 minute).

Sections (``--parts``, comma-separated; default all):

- ``bsvm``: BSVM (one RBF SVM per label, SMO) on yeast and scene at every lambda of the
  registered grid, against scikit-learn's ``rbf_kernel`` plus one ``SVC(kernel="precomputed")``
  per label at the same C = 1/(n lambda), tol = 1e-3 and kernel width (the mean pairwise
  distance of the rows, computed once beforehand and given to both as gamma); "from X": ours
  ``BSVM(kernel="rbf", gamma=g).fit(X, Y)`` against ``rbf_kernel`` + the SVC loop; "precomputed":
  ``BSVM(kernel="precomputed").fit(K, Y)`` against the SVC loop on the same K.  "agree": the
  fraction of the n x L training decisions with the same sign.
- ``br``: BR (squared hinge, regularised bias feature 1, dual CD, tol 1e-3) against one-vs-rest
  ``LinearSVC(loss="squared_hinge", dual=True, tol=1e-3)`` at C = 1 on rcv1subset1, enron, bibtex;
  LibMultiLabel's one-vs-rest when ``libmultilabel`` imports (the row says so otherwise).
- ``mlknn``: ML-kNN (k = 10) against scikit-multilearn-ng's ``MLkNN(k=10)`` when it imports.
- ``kernels``: every registered kernel's training matrix ``k(X)`` (resolve + call) against
  scikit-learn's equivalent (``linear_kernel``, ``rbf_kernel``, ``polynomial_kernel``;
  ``Nystroem`` and ``RBFSampler`` ``fit_transform`` then ``Phi Phi^T``, at the same m and gamma),
  on dense and CSR rows.
- ``approx``: BSVM's test average precision and fit time with the exact RBF kernel and with the
  Nystroem and random-Fourier approximations at their default size, on the standard yeast and
  scene train/test files (features standardised by the training rows' mean and deviation).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_whole_fit.py [--parts bsvm,br,...] [--repeat 3] [--lambdas 1e-4,1e-2]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import data_dir, markdown_table  # noqa: E402

import multilabel_core  # noqa: E402
from multilabel_core.datasets import load_dataset  # noqa: E402
from multilabel_core.kernel_approximation import DEFAULT_COMPONENTS, DEFAULT_RANDOM_FEATURES  # noqa: E402
from multilabel_core.kernels import RBFKernel, make_kernel, mean_pairwise_distance  # noqa: E402
from multilabel_core.metrics import average_precision  # noqa: E402

TOL = 1e-3


def _load(name):
    dataset = load_dataset(data_dir() / f"{name}.arff")
    Y = dataset.Y.toarray() if sp.issparse(dataset.Y) else np.asarray(dataset.Y)
    return dataset.X, Y.astype(int)


def load() -> float:
    return os.getloadavg()[0]


def alternated(ours, peer, repeat: int):
    """Median wall and CPU seconds of ``ours()`` and ``peer()`` timed in alternation; per-pair wall ratios.

    One untimed call of each first (imports, thread pools, page faults of the first arrays).
    """
    ours_result, peer_result = ours(), peer()
    walls = {"ours": [], "peer": []}
    cpus = {"ours": [], "peer": []}
    for _ in range(repeat):
        for side, fn in (("ours", ours), ("peer", peer)):
            wall, cpu = time.perf_counter(), time.process_time()
            result = fn()
            walls[side].append(time.perf_counter() - wall)
            cpus[side].append(time.process_time() - cpu)
            if side == "ours":
                ours_result = result
            else:
                peer_result = result
    ratios = np.array(walls["ours"]) / np.array(walls["peer"])
    cpu_ratios = np.array(cpus["ours"]) / np.array(cpus["peer"])
    return {
        "ours": float(np.median(walls["ours"])),
        "peer": float(np.median(walls["peer"])),
        "ratio": float(np.median(ratios)),
        "range": f"{ratios.min():.2f}-{ratios.max():.2f}",
        "cpu_ratio": float(np.median(cpu_ratios)),
        "results": (ours_result, peer_result),
    }


# -- bsvm ------------------------------------------------------------------------------------------


def part_bsvm(repeat: int, lambdas) -> str:
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.svm import SVC

    rows = []
    for name in ("yeast", "scene"):
        X, Y = _load(name)
        X = np.ascontiguousarray(X, dtype=np.float64)
        n = X.shape[0]
        gamma = 1.0 / (2.0 * mean_pairwise_distance(X) ** 2)
        K_user = RBFKernel(gamma=gamma)(X)
        for lam in lambdas:
            C = 1.0 / (n * lam)

            def svc_loop(K):
                return [SVC(kernel="precomputed", C=C, tol=TOL).fit(K, Y[:, j]) for j in range(Y.shape[1])]

            def peer_from_X():
                K = rbf_kernel(X, gamma=gamma)
                return K, svc_loop(K)

            def ours_from_X():
                return multilabel_core.make_method("bsvm", lam=lam, gamma=gamma).fit(X, Y)

            def ours_precomputed():
                return multilabel_core.make_method("bsvm", lam=lam, kernel="precomputed").fit(K_user, Y)

            for mode, ours, peer in (
                ("from X", ours_from_X, peer_from_X),
                ("precomputed", ours_precomputed, lambda: (K_user, svc_loop(K_user))),
            ):
                before = load()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    timing = alternated(ours, peer, repeat)
                model, (K, svcs) = timing["results"]
                ours_sign = np.sign(model.decision_function(X if mode == "from X" else K_user))
                peer_sign = np.column_stack([np.sign(svc.decision_function(K)) for svc in svcs])
                agree = float(np.mean(ours_sign == peer_sign))
                rows.append([name, f"{lam:g}", mode, timing["ours"], timing["peer"], f"{timing['ratio']:.2f}",
                             timing["range"], f"{timing['cpu_ratio']:.2f}", f"{agree:.5f}",
                             f"{(before + load()) / 2:.1f}"])
                print("  bsvm", rows[-1], flush=True)
    return markdown_table(
        "BSVM whole fit against rbf_kernel + SVC(precomputed) per label (target: from X <= 0.5, precomputed <= 0.6)",
        ["data", "lambda", "input", "ours s", "peer s", "ratio", "ratio range", "CPU ratio", "agree", "load"],
        rows,
    )


# -- br --------------------------------------------------------------------------------------------


def part_br(repeat: int) -> str:
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import LinearSVC

    try:
        import libmultilabel  # noqa: F401

        have_lml = True
    except ImportError:
        have_lml = False
    rows = []
    for name in ("rcv1subset1", "enron", "bibtex"):
        if not (data_dir() / f"{name}.arff").exists():
            rows.append([name, "absent from the datasets folder", "", "", "", "", "", "", ""])
            continue
        X, Y = _load(name)
        X = sp.csr_matrix(X, dtype=np.float64)
        # LinearSVC refuses a label with one class: both fit the labels with both classes.
        Y = Y[:, (Y.min(axis=0) == 0) & (Y.max(axis=0) == 1)]

        def ours():
            return multilabel_core.make_method("br", C=1.0, tol=TOL).fit(X, Y)

        def peer():
            return OneVsRestClassifier(LinearSVC(C=1.0, loss="squared_hinge", dual=True, tol=TOL, max_iter=10000)).fit(X, Y)

        before = load()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            timing = alternated(ours, peer, repeat)
        model, svc = timing["results"]
        agree = float(np.mean(np.sign(model.decision_function(X)) == np.sign(svc.decision_function(X))))
        rows.append([name, f"{X.shape[0]} x {X.shape[1]}, L = {Y.shape[1]}", timing["ours"], timing["peer"],
                     f"{timing['ratio']:.2f}", timing["range"], f"{timing['cpu_ratio']:.2f}", f"{agree:.5f}",
                     f"{(before + load()) / 2:.1f}"])
        print("  br", rows[-1], flush=True)
    note = "" if have_lml else " (LibMultiLabel: not importable here, `import libmultilabel` fails; no LibMultiLabel rows)"
    return markdown_table(
        "BR (dual CD, squared hinge) whole fit against one-vs-rest LinearSVC, C = 1, tol 1e-3" + note,
        ["data", "shape", "ours s", "LinearSVC s", "ratio", "ratio range", "CPU ratio", "agree", "load"],
        rows,
    )


# -- mlknn -----------------------------------------------------------------------------------------


def part_mlknn(repeat: int) -> str:
    try:
        from skmultilearn.adapt import MLkNN
    except ImportError as exc:
        return f"ML-kNN: scikit-multilearn-ng is not importable ({exc}); no rows."
    rows = []
    for name in ("yeast", "scene"):
        X, Y = _load(name)
        X = np.ascontiguousarray(X, dtype=np.float64)

        def ours():
            return multilabel_core.make_method("mlknn", k=10).fit(X, Y)

        def peer():
            return MLkNN(k=10).fit(X, Y)

        before = load()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            timing = alternated(ours, peer, repeat)
        rows.append([name, timing["ours"], timing["peer"], f"{timing['ratio']:.2f}", timing["range"],
                     f"{timing['cpu_ratio']:.2f}", f"{(before + load()) / 2:.1f}"])
        print("  mlknn", rows[-1], flush=True)
    return markdown_table(
        "ML-kNN (k = 10) fit against scikit-multilearn-ng's MLkNN(k=10) (its rule counts a training row among its "
        "own neighbours: docs/methods, baselines)",
        ["data", "ours s", "peer s", "ratio", "ratio range", "CPU ratio", "load"],
        rows,
    )


# -- kernels ---------------------------------------------------------------------------------------


def _peers(X, gamma: float, m: int, D: int):
    from sklearn.kernel_approximation import Nystroem, RBFSampler
    from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

    def gram(Phi):
        return Phi @ Phi.T

    return {
        "linear": lambda: linear_kernel(X),
        "rbf": lambda: rbf_kernel(X, gamma=gamma),
        "poly": lambda: polynomial_kernel(X, degree=3, gamma=gamma, coef0=1.0),
        "nystroem": lambda: gram(Nystroem(kernel="rbf", gamma=gamma, n_components=m, random_state=0).fit_transform(X)),
        "rff": lambda: gram(RBFSampler(gamma=gamma, n_components=D, random_state=0).fit_transform(X)),
    }


def part_kernels(repeat: int) -> str:
    names = sorted(spec.name for spec in multilabel_core.list_components("kernel"))
    rows = []
    for data, fmt in (("scene", "dense"), ("scene", "CSR"), ("yeast", "dense"), ("enron", "CSR")):
        X, _ = _load(data)
        X = sp.csr_matrix(X, dtype=np.float64) if fmt == "CSR" else np.ascontiguousarray(
            X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        gamma = 1.0 / (2.0 * mean_pairwise_distance(X) ** 2)
        peers = _peers(X, gamma, DEFAULT_COMPONENTS, DEFAULT_RANDOM_FEATURES)
        for name in names:
            if name not in peers:
                rows.append([data, fmt, name, "", "", "", "", "", "no scikit-learn equivalent (the input is K)"])
                continue
            params = {} if name == "linear" else {"gamma": gamma}
            kernel = make_kernel(name, **params)

            def ours(kernel=kernel):
                return kernel.resolve(X)(X)

            before = load()
            timing = alternated(ours, peers[name], repeat)
            rows.append([data, fmt, name, timing["ours"], timing["peer"], f"{timing['ratio']:.2f}", timing["range"],
                         f"{(before + load()) / 2:.1f}", f"{X.shape[0]} x {X.shape[1]}"])
            print("  kernel", rows[-1], flush=True)
    return markdown_table(
        f"Kernel matrices k(X) against scikit-learn (target <= 1.0; approximations at m = {DEFAULT_COMPONENTS}, "
        f"D = {DEFAULT_RANDOM_FEATURES})",
        ["data", "rows", "kernel", "ours s", "scikit-learn s", "ratio", "ratio range", "load", "shape / note"],
        rows,
    )


# -- approx ----------------------------------------------------------------------------------------


def part_approx(repeat: int) -> str:
    rows = []
    for name in ("yeast", "scene"):
        X, Y = _load(f"{name}-train")
        X_test, Y_test = _load(f"{name}-test")
        X, X_test = (np.asarray(A.toarray() if sp.issparse(A) else A, dtype=np.float64) for A in (X, X_test))
        mean, deviation = X.mean(axis=0), X.std(axis=0)
        deviation[deviation == 0.0] = 1.0
        X, X_test = (X - mean) / deviation, (X_test - mean) / deviation
        results = {}
        for kernel in ("rbf", "nystroem", "rff"):
            times, model = [], None
            for _ in range(repeat):
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = multilabel_core.make_method("bsvm", kernel=kernel).fit(X, Y)
                times.append(time.perf_counter() - start)
            ap = average_precision(Y_test, model.decision_function(X_test))
            results[kernel] = (float(np.median(times)), ap)
        exact_time, exact_ap = results["rbf"]
        for kernel, (seconds, ap) in results.items():
            rows.append([name, f"{X.shape[0]} x {X.shape[1]}", kernel, seconds, f"{seconds / exact_time:.2f}",
                         f"{ap:.4f}", f"{ap - exact_ap:+.4f}", f"{load():.1f}"])
            print("  approx", rows[-1], flush=True)
    return markdown_table(
        f"BSVM (defaults: lambda 1e-4, RBF width = mean pairwise distance) with the exact kernel and its approximations "
        f"(m = {DEFAULT_COMPONENTS}, D = {DEFAULT_RANDOM_FEATURES}); test AP on the standard split (target: within 0.01 of "
        f"exact)",
        ["data", "train", "kernel", "fit s", "time / exact", "test AP", "AP - exact", "load"],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="bsvm,br,mlknn,kernels,approx")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lambdas", default=None, help="comma-separated; default the registered bsvm grid")
    args = parser.parse_args()
    lambdas = (
        [float(v) for v in args.lambdas.split(",")]
        if args.lambdas
        else list(multilabel_core.get_method("bsvm").param_grid["lam"])
    )
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"bench_whole_fit.py, {started}, load {load():.1f}, OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, repeat {args.repeat}", flush=True)
    tables = []
    for part in args.parts.split(","):
        if part == "bsvm":
            tables.append(part_bsvm(args.repeat, lambdas))
        elif part == "br":
            tables.append(part_br(args.repeat))
        elif part == "mlknn":
            tables.append(part_mlknn(args.repeat))
        elif part == "kernels":
            tables.append(part_kernels(args.repeat))
        elif part == "approx":
            tables.append(part_approx(args.repeat))
        else:
            raise SystemExit(f"unknown part {part!r}")
    print()
    print("\n\n".join(tables))


if __name__ == "__main__":
    main()
