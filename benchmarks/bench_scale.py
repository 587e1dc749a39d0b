"""Every registered method at scale: fit time, peak memory and test AP against n and against L.

Supersedes ``bench_scaling.py`` for whole fits (that script stays: it measures the SMO engine
alone on scene).  Here every method of ``list_methods()`` is fitted as a user fits it, from the
feature matrix to the fitted model, each fit in a fresh subprocess so that its peak resident
memory (``VmHWM`` of ``/proc/self/status``) is its own, under a wall-time limit (the parent
kills the child's process group) and a memory limit (``RLIMIT_AS`` in the child).  A fit that
exceeds a limit, fails, or cannot be configured is written to the results file with that
status, never dropped.

Data
----
- ``corel16k001`` (13766 x 500, 153 labels), features standardised on the training rows:
  1766 rows (a fixed permutation, seed 0) are held out for the test AP and the training rows are
  the first n of the remaining 12000, n in {1000, 2000, 4000, 8000, 12000} ("all": every row not
  held out).
- ``make_correlated_multilabel`` (100 features, 20 labels, seed 0) with n = 25000 and 50000
  training rows and 2000 held-out rows.
- Label growth (item 7): ``make_correlated_multilabel`` with n = 1000 training rows, 100
  features and L in {153, 500, 1000} (153 = corel16k001's label count, whose real-data point is
  the n = 1000 row of the n table).

Each method runs at its registered defaults, on one BLAS thread (``OPENBLAS_NUM_THREADS=1``:
the targets are stated for one core).  Kernel methods take ``kernel="nystroem"`` (500 uniform
landmarks, the component's default) when ``--kernel nystroem`` is given, or with ``--kernel
auto`` above ``--exact-max`` rows; a method without a ``kernel`` parameter cannot take the
approximation: with ``--kernel nystroem`` it is recorded with status ``no_nystroem``, with ``--kernel
auto`` it is fitted as registered at every size (the linear methods, and the ``ovr_svc`` peer, whose
LIBSVM computes kernel rows on demand).  ``--cache-size`` sets the methods'
``cache_size`` (MB of SMO's kernel-column cache; with the Nystroem kernel the fit's memory is the
n x m features plus that cache) and is part of a result's key, so runs at several sizes sit side by
side in the table.  Test AP is
:func:`multilabel_core.metrics.average_precision` of the held-out rows' decision values (or
probabilities, or predictions for a method with neither).  CPU seconds are the child's user +
system time of the fit alone (data loading excluded); wall seconds are inflated by the load of
other processes, which is recorded beside each fit (``os.getloadavg``).

Results go to a JSONL file, one line per fit; a second invocation skips every fit already in it
(resumable).  ``--table`` prints the Markdown tables from the file.

    python benchmarks/bench_scale.py                       # the full grid (n, then L)
    python benchmarks/bench_scale.py --phase n --sizes 1000 2000 --wall 300
    python benchmarks/bench_scale.py --phase L --methods br bsvm mlrl
    python benchmarks/bench_scale.py --table               # tables from the results file
    python benchmarks/bench_scale.py --table --results a.jsonl b.jsonl   # several runs' files, merged
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_RESULTS = HERE / "runs" / "scale.jsonl"
CACHE = Path(tempfile.gettempdir()) / "bench_scale_cache"
COREL_SIZES = (1000, 2000, 4000, 8000, 12000)
SYNTHETIC_SIZES = (25000, 50000)
LABEL_COUNTS = (153, 500, 1000)
LABEL_N = 1000
HELD_OUT = 1766
SYNTHETIC_TEST = 2000


# --------------------------------------------------------------------------- data (child side)

def _corel(n: int):
    """Standardised corel16k001 training rows (first n of the pool) and the held-out rows."""
    from multilabel_core.datasets import load_dataset

    CACHE.mkdir(parents=True, exist_ok=True)
    cached = CACHE / "corel16k001.npz"
    if cached.exists():
        with np.load(cached) as f:
            X, Y = f["X"], f["Y"]
    else:
        data = load_dataset("corel16k001", data_home="/work/shared/datasets")
        X = data.X.toarray() if hasattr(data.X, "toarray") else np.asarray(data.X, dtype=float)
        Y = np.asarray(data.Y)
        np.savez(cached, X=X, Y=Y)
    order = np.random.default_rng(0).permutation(X.shape[0])
    test, pool = order[:HELD_OUT], order[HELD_OUT:]
    if n > pool.size:
        raise ValueError(f"n = {n} exceeds the {pool.size} training rows of corel16k001")
    train = pool[:n]
    return _standardise(X[train], Y[train], X[test], Y[test])


def _synthetic(n: int, n_labels: int):
    from multilabel_core.datasets import make_correlated_multilabel

    data = make_correlated_multilabel(n + SYNTHETIC_TEST, n_features=100, n_labels=n_labels, random_state=0)
    X, Y = np.asarray(data.X, dtype=float), np.asarray(data.Y)
    return _standardise(X[:n], Y[:n], X[n:], Y[n:])


def _standardise(X, Y, X_test, Y_test):
    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale[scale == 0] = 1.0  # a constant feature stays constant (zero), not NaN
    return (X - mean) / scale, Y, (X_test - mean) / scale, Y_test


def _vm_hwm_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("no VmHWM in /proc/self/status")


def child(spec: dict) -> dict:
    """One fit, in this (fresh) process; returns the measurement."""
    import warnings

    limit = int(spec["memory_gb"] * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from multilabel_core import list_methods
    from multilabel_core.metrics import average_precision

    if spec["data"] == "corel16k001":
        X, Y, X_test, Y_test = _corel(spec["n"])
    else:
        X, Y, X_test, Y_test = _synthetic(spec["n"], spec["L"])
    method = {m.name: m for m in list_methods()}[spec["method"]]
    estimator = method.estimator()
    params = estimator.get_params()
    kernel_note = "exact" if "kernel" in params or "gamma" in params else "linear/none"
    if spec["kernel"] == "nystroem":
        if "kernel" not in params or spec["method"] == "ovr_svc":
            return {"status": "no_nystroem",
                    "reason": f"{spec['method']} has no kernel parameter taking a Kernel component"}
        estimator.set_params(kernel="nystroem")
        kernel_note = "nystroem"
    if spec.get("cache_size") is not None:
        if "cache_size" not in params:
            return {"status": "error", "reason": f"{spec['method']} has no cache_size parameter"}
        estimator.set_params(cache_size=float(spec["cache_size"]))
    baseline = _vm_hwm_mb()
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X, Y)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    peak = _vm_hwm_mb()
    for name in ("decision_function", "predict_proba", "predict"):
        if hasattr(estimator, name):
            try:
                scores = np.asarray(getattr(estimator, name)(X_test), dtype=float)
                break
            except (AttributeError, NotImplementedError):
                continue
    scored = Y_test.sum(axis=0) > 0  # a label with no positive test row has no precision to rank
    ap = average_precision(Y_test, scores) if scored.any() else float("nan")
    return {
        "status": "ok", "cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        "wall_s": wall, "peak_mb": peak, "baseline_mb": baseline, "ap": float(ap), "scored_by": name,
        "kernel_used": kernel_note, "warnings": sorted({type(w.message).__name__ for w in caught}),
        "n_warnings": len(caught),
    }


# --------------------------------------------------------------------------- runner (parent side)

def _key(spec: dict) -> tuple:
    return (spec["method"], spec["data"], spec["n"], spec["L"], spec["kernel"], spec.get("cache_size"))


def _load(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_one(spec: dict, wall_limit: float) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    load = os.getloadavg()[0]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as cwd:  # outside the checkout: the installed package, not the tree
        proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)],
                                cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=wall_limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return {**spec, "status": "over_time", "reason": f"wall > {wall_limit:.0f} s (killed)",
                    "load": load, "elapsed_s": time.perf_counter() - start}
    record = {**spec, "load": load, "elapsed_s": time.perf_counter() - start}
    if proc.returncode == 0 and out.strip():
        return {**record, **json.loads(out.strip().splitlines()[-1])}
    tail = err.strip().splitlines()[-1] if err.strip() else f"exit code {proc.returncode}"
    status = "over_memory" if ("MemoryError" in err or "Cannot allocate" in err
                               or "std::bad_alloc" in err) else "error"
    return {**record, "status": status, "reason": tail[:300]}


def _specs(args) -> list[dict]:
    from multilabel_core import list_methods

    names = args.methods or [m.name for m in list_methods()]
    # "auto" gives the Nystroem kernel to the methods that take a Kernel component; the others (linear,
    # or LIBSVM's kernel names: the ovr_svc peer) are fitted as registered at every size.
    takes_kernel = _kernel_methods() - {"ovr_svc"}
    base = {"memory_gb": args.memory_gb}
    if args.cache_size is not None:
        base["cache_size"] = args.cache_size
    specs = []
    if args.phase in ("n", "all"):
        for n in args.sizes:
            for name in names:
                data = "corel16k001" if n <= 12000 else "synthetic"
                kernel = "nystroem" if args.kernel == "nystroem" or (
                    args.kernel == "auto" and n > args.exact_max and name in takes_kernel) else "exact"
                specs.append({**base, "method": name, "data": data, "n": n, "L": 153 if data == "corel16k001" else 20,
                              "kernel": kernel})
    if args.phase in ("L", "all"):
        for L in LABEL_COUNTS:
            for name in names:
                specs.append({**base, "method": name, "data": "synthetic", "n": LABEL_N, "L": L, "kernel": "exact"})
    return specs


def run(args) -> None:
    path = Path(args.results[0])
    path.parent.mkdir(parents=True, exist_ok=True)
    done = {_key(r) for r in _load(path)}
    over = {}  # method/data/kernel -> the smallest n over budget: larger n are recorded as not attempted
    for r in _load(path):
        if r["status"] in ("over_time", "over_memory") and r["L"] in (20, 153):
            k = (r["method"], r["kernel"], r.get("cache_size"))
            over[k] = min(over.get(k, r["n"]), r["n"])
    for spec in _specs(args):
        if _key(spec) in done:
            continue
        k = (spec["method"], spec["kernel"], spec.get("cache_size"))
        if spec["L"] in (20, 153) and k in over and spec["n"] > over[k]:
            record = {**spec, "status": "skipped", "reason": f"over budget at n = {over[k]}"}
        else:
            record = run_one(spec, args.wall)
            if record["status"] in ("over_time", "over_memory") and spec["L"] in (20, 153):
                over[k] = min(over.get(k, spec["n"]), spec["n"])
        with path.open("a") as f:
            f.write(json.dumps(record) + "\n")
        brief = {key: record.get(key) for key in ("status", "cpu_s", "wall_s", "peak_mb", "ap", "reason")}
        print(spec["method"], spec["data"], spec["n"], spec["L"], spec["kernel"], brief, flush=True)


# --------------------------------------------------------------------------- tables

def _slope(xs, ys) -> float | None:
    pairs = [(x, y) for x, y in zip(xs, ys) if y is not None and y > 0]
    if len(pairs) < 2:
        return None
    x, y = np.log([p[0] for p in pairs]), np.log([p[1] for p in pairs])
    return float(np.polyfit(x, y, 1)[0])


#: Below this many MB allocated by the fit above the pre-fit peak, the growth is hidden by the
#: interpreter's free lists and the data's own peak, so no memory slope is fitted to it.
MEMORY_FLOOR_MB = 16.0


def _memory_slope(xs, records) -> float | None:
    excess = [r["peak_mb"] - r["baseline_mb"] for r in records]
    kept = [(x, e) for x, e in zip(xs, excess) if e >= MEMORY_FLOOR_MB]
    return _slope([x for x, _ in kept], [e for _, e in kept])


def _kernel_methods() -> set[str]:
    from multilabel_core import list_methods

    return {m.name for m in list_methods()
            if m.parts.get("kernel") not in (None, "linear") or "kernel" in m.estimator().get_params()}


def _cell(r: dict | None) -> str:
    if r is None:
        return "not run"
    if r["status"] == "ok":
        return (f"{r['cpu_s']:.1f} / {r['wall_s']:.1f} s, {r['peak_mb']:.0f} MB "
                f"(+{r['peak_mb'] - r['baseline_mb']:.0f}), AP {r['ap']:.3f}")
    return f"{r['status'].replace('_', ' ')} ({r.get('reason', '')})"


def _fmt(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def table(paths: list[Path]) -> str:
    records = {}
    for r in (r for path in paths for r in _load(path)):
        records[_key(r)] = r  # the last record of a fit wins (a rerun after a fix)
    methods = sorted({k[0] for k in records})
    kernels = _kernel_methods()
    sizes = sorted({k[2] for k in records if k[3] in (20, 153)})
    lines = ["Cells: CPU s / wall s of the fit, peak resident MB (VmHWM, with the interpreter and data; in "
             "brackets the MB above the pre-fit peak), test AP. Slopes: log-log least squares over the completed "
             f"sizes (CPU time; memory above the pre-fit peak, over the fits that allocated at least "
             f"{MEMORY_FLOOR_MB:.0f} MB more).", "",
             "| method | kernel | " + " | ".join(f"n = {n}" for n in sizes) + " | CPU slope | memory slope |",
             "| --- | --- |" + " --- |" * (len(sizes) + 2)]
    caches = sorted({k[5] for k in records if k[5] is not None})
    for m in methods:
        for kernel, cache in [("exact", None), ("nystroem", None)] + [("nystroem", c) for c in caches]:
            row = [records.get((m, "corel16k001" if n <= 12000 else "synthetic", n,
                                153 if n <= 12000 else 20, kernel, cache)) for n in sizes]
            if all(r is None for r in row):
                continue
            ok = [(n, r) for n, r in zip(sizes, row) if r is not None and r["status"] == "ok" and n <= 12000]
            cpu = _slope([n for n, _ in ok], [r["cpu_s"] for _, r in ok])
            mem = _memory_slope([n for n, _ in ok], [r for _, r in ok])
            label = kernel if kernel == "nystroem" else ("exact" if m in kernels else "linear/none")
            if cache is not None:
                label += f", cache_size={cache:g}"
            lines.append(f"| {m} | {label} | " + " | ".join(_cell(r) for r in row) + f" | {_fmt(cpu)} | {_fmt(mem)} |")
    label_rows = [(m, [records.get((m, "synthetic", LABEL_N, L, "exact", None)) for L in LABEL_COUNTS])
                  for m in methods]
    label_rows = [(m, row) for m, row in label_rows if any(r is not None for r in row)]
    if label_rows:
        lines += ["", f"Label growth, synthetic n = {LABEL_N}: " + ", ".join(f"L = {L}" for L in LABEL_COUNTS), "",
                  "| method | " + " | ".join(f"L = {L}" for L in LABEL_COUNTS)
                  + " | CPU slope in L | memory slope in L |",
                  "| --- |" + " --- |" * (len(LABEL_COUNTS) + 2)]
        for m, row in label_rows:
            ok = [(L, r) for L, r in zip(LABEL_COUNTS, row) if r is not None and r["status"] == "ok"]
            cpu = _slope([L for L, _ in ok], [r["cpu_s"] for _, r in ok])
            mem = _memory_slope([L for L, _ in ok], [r for _, r in ok])
            lines.append(f"| {m} | " + " | ".join(_cell(r) for r in row) + f" | {_fmt(cpu)} | {_fmt(mem)} |")
    loads = [r["load"] for r in records.values() if "load" in r]
    if loads:
        lines += ["", f"1-minute load average at the start of the fits: {min(loads):.1f}-{max(loads):.1f} "
                  f"(median {np.median(loads):.1f}) on {os.cpu_count()} vCPUs."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--results", nargs="+", default=[str(DEFAULT_RESULTS)],
                        help="JSONL results file (resumable); --table merges several, a later file's record of a fit "
                             "winning")
    parser.add_argument("--phase", choices=("n", "L", "all"), default="all")
    parser.add_argument("--methods", nargs="*", help="registered method names (default: all)")
    parser.add_argument("--sizes", nargs="*", type=int, default=list(COREL_SIZES + SYNTHETIC_SIZES))
    parser.add_argument("--kernel", choices=("exact", "nystroem", "auto"), default="auto")
    parser.add_argument("--exact-max", type=int, default=8000, help="largest n fitted with the exact kernel (auto)")
    parser.add_argument("--wall", type=float, default=1800.0, help="wall-time limit per fit, seconds")
    parser.add_argument("--memory-gb", type=float, default=8.0, help="address-space limit per fit (RLIMIT_AS)")
    parser.add_argument("--cache-size", type=float, default=None,
                        help="the methods' cache_size (MB of kernel columns; default: each method's own)")
    parser.add_argument("--table", action="store_true", help="print the Markdown tables from the results file")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    if args.table:
        print(table([Path(p) for p in args.results]))
        return
    if len(args.results) != 1:
        parser.error("a run writes one results file: give one --results path")
    run(args)


if __name__ == "__main__":
    main()
