"""The red-team counts: every registered method through the fuzz matrix, and the malformed-file corpus.

    python benchmarks/fuzz_matrix.py [--methods br,mlrl] [--jobs 2] [--timeout 10] [--failures] [--no-files]

Part 1 is :mod:`multilabel_core.testing.fuzz` (docs/testing.md, The fuzz matrix): one row per
method and category, one column per outcome.  Part 2 runs every case of
:mod:`multilabel_core.testing.malformed_files` through ``load_dataset`` and through
``mlcore describe``, each case in its own subprocess (a timeout, an address-space limit):

- ``load_dataset``: ``ok-load`` (the expected shape), ``clear-error`` (DataFormatError, where
  the corpus expects one), ``accepted-invalid`` (loaded where the corpus expects an error),
  ``bad-output`` (another shape), ``wrong-exception`` (any other exception, a plain
  ValueError included: bad files raise DataFormatError), ``crash``, ``hang``;
- ``mlcore describe``: ``ok-load`` (exit 0, statistics printed), ``clear-error`` (exit 2 and
  exactly one line on stderr), ``accepted-invalid`` (exit 0 on a file the corpus refuses),
  ``wrong-exception`` (any other exit status, or more than one line: a traceback),
  ``crash``, ``hang``.

Both harness files are loaded from this checkout by path, so that the script measures any
installed version of multilabel_core: run it from outside the checkout with that version's
interpreter (``cd /tmp && /path/to/venv/bin/python /path/to/checkout/benchmarks/fuzz_matrix.py``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TESTING = Path(__file__).resolve().parent.parent / "multilabel_core" / "testing"
FILE_TIMEOUT = 60.0
FILE_MEMORY = 3 * 2**30
FILE_OUTCOMES = ("ok-load", "clear-error", "crash", "hang", "wrong-exception", "bad-output", "accepted-invalid")

LOAD = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from multilabel_core.datasets import DataFormatError, load_dataset
try:
    ds = load_dataset(sys.argv[1])
    print(json.dumps({{"shape": [ds.n_samples, ds.n_features, ds.n_labels]}}))
except DataFormatError as exc:
    print(json.dumps({{"error": "DataFormatError", "message": str(exc)[:300]}}))
except BaseException as exc:
    print(json.dumps({{"error": type(exc).__name__, "message": str(exc)[:300]}}))
"""

DESCRIBE = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from multilabel_core.cli import main
sys.exit(main(["describe", sys.argv[1]]))
"""


def load_by_path(name: str):
    spec = importlib.util.spec_from_file_location(f"_fuzz_matrix_{name}", TESTING / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


def run_file_case(corpus, case) -> list[dict]:
    with tempfile.TemporaryDirectory() as folder:
        path = corpus.write_case(case, folder)
        return [_load(corpus, case, path), _describe(corpus, case, path)]


def _child(code: str, path) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run([sys.executable, "-c", code.format(limit=FILE_MEMORY), str(path)], capture_output=True,
                              text=True, errors="replace", timeout=FILE_TIMEOUT, cwd=tempfile.gettempdir())  # fmt: skip
    except subprocess.TimeoutExpired:
        return None


def _result(case, what, outcome, detail="") -> dict:
    return {"method": what, "category": case.format, "name": case.name, "outcome": outcome, "detail": detail[:300]}


def _load(corpus, case, path) -> dict:
    done = _child(LOAD, path)
    if done is None:
        return _result(case, "load_dataset", "hang", f"no result within {FILE_TIMEOUT:g} s")
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return _result(case, "load_dataset", "crash", f"status {done.returncode}: {done.stderr[-200:]}")
    got = json.loads(lines[-1])
    if "shape" in got:
        if case.expectation == corpus.ERROR:
            return _result(case, "load_dataset", "accepted-invalid", f"loaded with shape {got['shape']}")
        if tuple(got["shape"]) != tuple(case.expectation):
            return _result(case, "load_dataset", "bad-output", f"shape {got['shape']}, expected {case.expectation}")
        return _result(case, "load_dataset", "ok-load")
    detail = f"{got['error']}: {got['message']}"
    if got["error"] == "DataFormatError":
        return _result(case, "load_dataset", "clear-error" if case.expectation == corpus.ERROR else "bad-output", detail)
    return _result(case, "load_dataset", "wrong-exception", detail)


def _describe(corpus, case, path) -> dict:
    done = _child(DESCRIBE, path)
    if done is None:
        return _result(case, "mlcore describe", "hang", f"no result within {FILE_TIMEOUT:g} s")
    if done.returncode < 0:
        return _result(case, "mlcore describe", "crash", f"signal {-done.returncode}")
    stderr = done.stderr.strip()
    if done.returncode == 0:
        if case.expectation == corpus.ERROR:
            return _result(case, "mlcore describe", "accepted-invalid", "exit 0")
        return _result(case, "mlcore describe", "ok-load")
    if done.returncode == 2 and stderr.count("\n") == 0 and stderr.startswith("mlcore: error:"):
        outcome = "clear-error" if case.expectation == corpus.ERROR else "bad-output"
        return _result(case, "mlcore describe", outcome, stderr)
    return _result(case, "mlcore describe", "wrong-exception", f"exit {done.returncode}: {stderr[-300:]}")


def file_table(results: list[dict]) -> str:
    rows: dict[tuple[str, str], dict[str, int]] = {}
    for r in results:
        rows.setdefault((r["method"], r["category"]), dict.fromkeys(FILE_OUTCOMES, 0))[r["outcome"]] += 1
    header = ["reader", "format", "cases", *FILE_OUTCOMES]
    body = [[m, c, str(sum(n.values()))] + [str(n[o]) for o in FILE_OUTCOMES] for (m, c), n in sorted(rows.items())]
    totals = [sum(int(row[i]) for row in body) for i in range(2, len(header))]
    body.append(["total", ""] + [str(t) for t in totals])
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    fmt = lambda row: "| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths)) + " |"  # noqa: E731
    return "\n".join([fmt(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(fmt, body)])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--methods", help="comma-separated method names (default: every registered method)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=None, help="seconds per fuzz case before it is a hang")
    parser.add_argument("--failures", action="store_true", help="list the failing cases after each table")
    parser.add_argument("--no-files", action="store_true", help="skip the malformed-file corpus")
    parser.add_argument("--json", help="write every result to this JSON-lines file")
    args = parser.parse_args(argv)

    import multilabel_core

    fuzz = load_by_path("fuzz")
    print(f"multilabel_core {getattr(multilabel_core, '__version__', '?')} from {Path(multilabel_core.__file__).parent}\n")
    methods = args.methods.split(",") if args.methods else [spec.name for spec in multilabel_core.list_methods()]
    options = {"n_workers": args.jobs} | ({"timeout": args.timeout} if args.timeout else {})
    results = [r for method in methods for r in fuzz.run_method(method, **options)]
    print("Fuzz matrix (multilabel_core.testing.fuzz)\n")
    print(fuzz.count_table(results))
    if args.failures:
        print("\n" + (fuzz.format_failures(results) or "no failing case"))
    failing = sum(r["outcome"] in fuzz.FAILURES for r in results)

    file_results = []
    if not args.no_files:
        corpus_path = TESTING / "malformed_files.py"
        if corpus_path.exists():
            corpus = load_by_path("malformed_files")
            with ThreadPoolExecutor(args.jobs) as pool:
                for pair in pool.map(lambda case: run_file_case(corpus, case), corpus.CASES):
                    file_results += pair
            print(f"\nMalformed files (multilabel_core.testing.malformed_files, {len(corpus.CASES)} cases)\n")
            print(file_table(file_results))
            bad = [r for r in file_results if r["outcome"] not in ("ok-load", "clear-error")]
            if args.failures:
                print()
                for r in bad:
                    print(f"{r['method']} [{r['category']}] {r['name']}: {r['outcome']}: {r['detail']}")
                if not bad:
                    print("no failing case")
            failing += len(bad)
        else:
            print(f"\n(no malformed-file corpus at {corpus_path})")
    if args.json:
        with open(args.json, "w") as stream:
            for r in results + file_results:
                stream.write(json.dumps(r, default=str) + "\n")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
