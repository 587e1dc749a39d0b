"""Per-step costs of the relation / shrinkage / eigen steps of mlrl, lieml and concept_network (issue: no n^3 per step).

    python benchmarks/bench_steps.py steps [--sizes 1000 2000 4000] [--methods mlrl lieml concept_network]
                                           [--code DIR ...] [--kernel nystroem] [--no-yeast]
    python benchmarks/bench_steps.py grid [--code DIR ...]

``steps``: one default fit of each method on corel16k001 row subsamples (standardised features, the labels
present in the subsample) and on yeast (all 2417 rows), each in its own process: CPU seconds of the fit, peak
resident memory of the process, and the CPU seconds cProfile attributes to dense decompositions (eigh, svd,
cholesky, eigsh, lu) and to the step function named in the table (SMO's dual solve for mlrl, the singular value
shrinkage for lieml, the eigenbasis for concept_network).

``grid``: LIEML's registered grid (lam x epsilon) on one outer split of yeast (the Mulan training part, 1500
rows) by 3-fold inner cross-validation (iterative stratification), each grid point fitted on every inner
training part and scored by average precision on its test part, then the best refitted on the 1500 rows:
total CPU seconds, and per lam the CPU seconds of one inner fit.

``--code DIR`` (repeatable): also run the measurements with the package found in DIR (a directory holding an
older checkout's ``multilabel_core`` and its plugins as ``multilabel_core_plugins``, e.g. made by
``git archive REV multilabel_core plugins``, the plugins folder renamed and the compiled modules copied in), one
column group per code; the default is the installed package.  Every child runs on one BLAS thread, in a temporary
working directory (the checkout's source tree would otherwise shadow an installed package).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap

from _common import data_dir, markdown_table

#: The child of one ``steps`` measurement: fit, profile, report as JSON on the last line of stdout.
STEP_CHILD = textwrap.dedent(
    """
    import cProfile, json, pstats, resource, sys, time, warnings
    import numpy as np
    from multilabel_core.datasets import load_dataset
    from multilabel_core.plugins import make_method

    method, dataset, n, data_home = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    kernel = sys.argv[5] if len(sys.argv) > 5 else "default"
    data = load_dataset(dataset, data_home=data_home)
    X = data.X.toarray() if hasattr(data.X, "toarray") else np.asarray(data.X, dtype=float)
    Y = data.Y.toarray() if hasattr(data.Y, "toarray") else np.asarray(data.Y)
    rows = np.random.default_rng(0).permutation(X.shape[0])[: n or X.shape[0]]
    X, Y = X[rows], Y[rows]
    Y = Y[:, (Y.sum(0) > 0) & (Y.sum(0) < len(rows))]
    sd = X.std(0)
    X = (X - X.mean(0)) / np.where(sd > 0, sd, 1.0)
    estimator = make_method(method) if kernel == "default" else make_method(method, kernel=kernel)
    profile = cProfile.Profile(time.process_time)  # CPU seconds: wall time on shared cores counts the others' work
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        profile.enable()
        estimator.fit(X, Y)
        profile.disable()
    cpu = time.process_time() - start
    stats = pstats.Stats(profile).stats
    decompositions = {"eigh": 0.0, "svd": 0.0, "cholesky": 0.0, "eigsh": 0.0, "lu": 0.0}
    step = {"mlrl": "_solve_dual", "lieml": "singular_value_threshold", "concept_network": "top_eigenpairs",
            "lieml_raw": "irwls_msvr"}[method]
    if kernel in ("nystroem", "rff"):
        # The explicit-feature routes: the eigenbasis from Phi^T Phi, T2's IRWLS in the primal.
        step = {"concept_network": "feature_eigenpairs", "lieml_raw": "irwls_msvr_features"}.get(method, step)
    regressor = "irwls_msvr_features" if kernel in ("nystroem", "rff") else "irwls_msvr"
    step_time, regressor_time, calls = 0.0, 0.0, {}
    for (filename, _, name), (_, ncalls, tottime, cumtime, _) in stats.items():
        for key in decompositions:
            if name in (key, key + "vals", key + "_factor", "eigvalsh" if key == "eigh" else key,
                        "cho_factor" if key == "cholesky" else key) and (
                "linalg" in filename or "arpack" in filename or "_decomp" in filename
            ):
                decompositions[key] += tottime if key != "eigsh" else cumtime
                calls[key] = calls.get(key, 0) + ncalls
        if name == step:
            step_time += cumtime
        if name == regressor:
            regressor_time += cumtime
    print(json.dumps({
        "shape": [int(X.shape[0]), int(X.shape[1]), int(Y.shape[1])], "cpu": cpu,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, "step": step, "step_s": step_time,
        "decompositions": decompositions, "calls": calls, "warnings": len(caught), "kernel": kernel,
        "irwls_s": regressor_time,
    }))
    """
)

#: The child of the ``grid`` measurement.
GRID_CHILD = textwrap.dedent(
    """
    import itertools, json, sys, time, warnings
    import numpy as np
    from multilabel_core.datasets import load_dataset
    from multilabel_core.metrics import average_precision
    from multilabel_core.model_selection import IterativeStratifiedKFold
    from multilabel_core.plugins import get_method, make_method

    data_home = sys.argv[1]
    data = load_dataset("yeast-train", data_home=data_home)
    X = np.asarray(data.X.toarray() if hasattr(data.X, "toarray") else data.X, dtype=float)
    Y = np.asarray(data.Y.toarray() if hasattr(data.Y, "toarray") else data.Y)
    sd = X.std(0)
    X = (X - X.mean(0)) / np.where(sd > 0, sd, 1.0)
    grid = get_method("lieml").param_grid
    points = [dict(zip(grid, values)) for values in itertools.product(*grid.values())]
    folds = list(IterativeStratifiedKFold(3, random_state=0).split(X, Y))
    per_lam, scores, warned = {}, {}, 0
    start = time.process_time()
    for point in points:
        total = []
        for train, test in folds:
            tick = time.process_time()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model = make_method("lieml", **point).fit(X[train], Y[train])
            warned += len(caught)
            per_lam.setdefault(point["lam"], []).append(time.process_time() - tick)
            total.append(average_precision(Y[test], model.decision_function(X[test])))
        scores[json.dumps(point)] = float(np.mean(total))
    best = json.loads(max(scores, key=scores.get))
    tick = time.process_time()
    make_method("lieml", **best).fit(X, Y)
    refit = time.process_time() - tick
    print(json.dumps({
        "cpu": time.process_time() - start, "refit": refit, "best": best, "n_fits": len(points) * len(folds) + 1,
        "per_lam": {str(k): float(np.mean(v)) for k, v in per_lam.items()}, "warnings": warned,
        "ap": scores[json.dumps(best)], "rows": int(X.shape[0]),
    }))
    """
)


def run_child(code: str | None, source: str, *args) -> dict:
    """Run ``source`` in a fresh interpreter (one BLAS thread, cwd a temporary directory) and parse its JSON line."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    if code:
        env["PYTHONPATH"] = os.path.abspath(code)
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run(
            [sys.executable, "-c", source, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True
        )
    if done.returncode != 0:
        raise RuntimeError(f"child failed ({' '.join(map(str, args))}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(title: str, rows: list[dict]) -> str:
    """A markdown table of dict rows (the union of their keys, in first-seen order)."""
    header = list(dict.fromkeys(key for row in rows for key in row))
    return markdown_table(title, header, [[row.get(key, "") for key in header] for row in rows])


def step_cells(label: str, r: dict) -> dict:
    """The cells of one code's measurement (a child's JSON report) in the ``steps`` table."""
    d = r["decompositions"]
    return {
        f"{label} CPU s": round(r["cpu"], 2),
        f"{label} peak MB": round(r["peak_mb"]),
        f"{label} step CPU s": round(r["step_s"], 2),
        f"{label} eigh/svd/eigsh/lu/cholesky CPU s": "/".join(
            f"{d[k]:.2f}" for k in ("eigh", "svd", "eigsh", "lu", "cholesky")
        ),
        f"{label} IRWLS CPU s": round(r.get("irwls_s", 0.0), 2),
    }


def steps(codes, methods, sizes, kernel="default", yeast=True) -> None:
    cases = [("corel16k001", n) for n in sizes] + ([("yeast", 0)] if yeast else [])
    rows = []
    for method in methods:
        for dataset, n in cases:
            row = {"method": method, "kernel": kernel, "data": f"{dataset} n={n}" if n else dataset}
            for label, code in codes:
                r = run_child(code, STEP_CHILD, method, dataset, n, data_dir(), kernel)
                row |= step_cells(label, r) | {"step": r["step"]}
                print(label, row["data"], method, json.dumps(r), file=sys.stderr, flush=True)
            rows.append(row)
    print(table("Per-step costs (CPU seconds of one fit, one BLAS thread)", rows))


def grid(codes) -> None:
    rows = []
    for label, code in codes:
        r = run_child(code, GRID_CHILD, data_dir())
        rows.append({
            "code": label, "fits": r["n_fits"], "CPU s (search + refit)": round(r["cpu"], 1),
            "refit CPU s": round(r["refit"], 1), "best": json.dumps(r["best"]), "inner AP": round(r["ap"], 4),
            **{f"one fit, lam={k} (s)": round(v, 2) for k, v in r["per_lam"].items()},
            "warnings": r["warnings"],
        })  # fmt: skip
        print(label, json.dumps(r), file=sys.stderr, flush=True)
    print(table("LIEML's registered grid, one outer split of yeast, 3-fold inner CV (CPU seconds)", rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("steps", "grid"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000])
    parser.add_argument("--methods", nargs="+", default=["mlrl", "lieml", "concept_network"])
    parser.add_argument("--code", action="append", default=[], help="a directory holding another version's code")
    parser.add_argument("--no-installed", action="store_true", help="measure only the --code directories")
    parser.add_argument("--kernel", default="default",
                        help="steps: the methods' kernel parameter (default: their own; e.g. nystroem)")
    parser.add_argument("--no-yeast", action="store_true", help="steps: corel16k001 subsamples only")
    args = parser.parse_args()
    codes = [(os.path.basename(os.path.normpath(c)), c) for c in args.code] + ([] if args.no_installed else [("now", None)])
    if args.what == "steps":
        steps(codes, args.methods, args.sizes, args.kernel, not args.no_yeast)
    else:
        grid(codes)


if __name__ == "__main__":
    main()
