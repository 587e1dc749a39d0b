"""Count how often one fit scans the training array X for validity.

A validity scan reads every entry of X (or of a same-sized copy of it) to check or convert
it: a finiteness test (``np.isfinite``/``np.isnan``/``np.isinf`` over X), a dtype or layout
conversion that copies X (``np.asarray``/``np.array``/``np.ascontiguousarray``/
``np.asfortranarray``/``np.copy`` returning new memory, ``X.astype``, ``X.copy``,
``X.tocsr``), a sparse canonicalisation (``sum_duplicates``, the validation module's
canonical-form pass).  Arithmetic that uses X (``X @ W``, a kernel matrix) is not counted: it
is the method's work, not a check.

The script patches those functions while ``make_method(name).fit(X, Y)`` runs on yeast and
counts the calls whose array argument has X's shape (or its transpose) -- X itself or a copy of
it.  NumPy's conversion functions are wrapped in the numpy namespace (every module reads them
as ``np.<name>`` at call time, the Cython engines included); the array methods (``astype``,
``copy``, ...) are seen through :func:`sys.setprofile`, whose ``c_call`` events carry the bound
method and so the array it was called on.  Calls of the public ``check_X`` are counted apart
(each is one validation pass, made of the scans above).

Run (from anywhere, the package installed)::

    python benchmarks/count_validation.py            # the table
    python benchmarks/count_validation.py --sites    # and where each scan happens

:data:`BEFORE` holds the counts measured at commit d479869, before validation was made to
happen once at the boundary; tests/test_validation_scans.py holds today's counts to
:data:`AFTER` (at most).  The copy of X a kernel model keeps (``X_fit_``, made in ``_store_fit``
so that a caller's later change to X does not change the model) is shown apart: it is not a check.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import sys
import threading
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

#: The methods whose fits are counted.
METHODS = ("br", "bsvm", "mlrl")

#: Validity scans of X per fit on yeast at d479869, before validation was made to happen once: br's
#: estimator check, CD's check_X and its Cython rows' finiteness test; bsvm's and mlrl's estimator
#: check and three kernel checks (resolving the RBF width, the mean pairwise distance, the kernel
#: matrix).  Not counted: the model's own copy of X (X_fit_) that bsvm and mlrl keep, 1 each then and now.
BEFORE = {"br": 3, "bsvm": 4, "mlrl": 4}

#: The counts after: X scanned once, by the estimator's check_X (tests/test_validation_scans.py).
AFTER = {"br": 1, "bsvm": 1, "mlrl": 1}

#: NumPy functions that test every entry of their argument.
_TESTS = ("isfinite", "isnan", "isinf")
#: NumPy functions that copy their argument when it is not already in the asked form.
_CONVERSIONS = ("asarray", "asanyarray", "array", "ascontiguousarray", "asfortranarray", "copy")
#: Array and sparse-matrix methods that read every entry (seen through sys.setprofile).
_METHODS = ("astype", "copy", "tocsr", "tocsc", "toarray", "sum_duplicates", "sort_indices")


def _data_dir() -> Path:
    env = os.environ.get("MULTILABEL_CORE_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


class ScanCounter:
    """Counts the validity scans of arrays shaped like X while active (a context manager)."""

    def __init__(self, X):
        self.shapes = {tuple(X.shape), tuple(X.shape[::-1])}
        # A sparse X is scanned through its stored values: a 1-D array of nnz entries (X.data or a copy).
        self.nnz = X.nnz if sp.issparse(X) else None
        self.scans = collections.Counter()
        self.sites = collections.Counter()
        self.check_X = collections.Counter()
        self._saved = {}
        self._pending = []
        self.model_copies = 0

    def _is_x(self, value) -> bool:
        if sp.issparse(value):
            return tuple(value.shape) in self.shapes
        if isinstance(value, np.ndarray):
            if self.nnz is not None and value.ndim == 1 and value.size == self.nnz and value.dtype.kind == "f":
                return True
            return tuple(value.shape) in self.shapes
        return False

    def _site(self) -> str:
        """The first frame outside this script and numpy/scipy: where the scan was asked for."""
        frame = sys._getframe(2)
        while frame is not None:
            module = frame.f_globals.get("__name__", "")
            if frame.f_code.co_filename != __file__ and not module.startswith(("numpy", "scipy")):
                return f"{module}:{frame.f_code.co_name}:{frame.f_lineno}"
            frame = frame.f_back
        return "?"

    def _count(self, kind: str) -> None:
        site = self._site()
        if ":_store_fit:" in site:
            # The model's own copy of X (X_fit_, kept from a caller's later changes): not a check.
            self.model_copies += 1
            kind = "model copy (X_fit_)"
        else:
            self.scans[kind] += 1
        self.sites[(kind, site)] += 1

    def _test(self, name, function):
        def wrapper(x, *args, **kwargs):
            if self._is_x(x):
                self._count(f"np.{name}")
            return function(x, *args, **kwargs)

        return wrapper

    def _conversion(self, name, function):
        def wrapper(x, *args, **kwargs):
            result = function(x, *args, **kwargs)
            if self._is_x(x) and isinstance(result, np.ndarray) and not np.may_share_memory(result, x):
                self._count(f"np.{name} (copy)")
            return result

        return wrapper

    def _profile(self, frame, event, arg):
        # A method call reads X's entries only when it makes new memory (``astype(float64, copy=False)``
        # on float64 X, ``tocsr()`` on a CSR matrix return X): the traced memory tells, at the call's return.
        if event == "c_call":
            owner = getattr(arg, "__self__", None)
            if getattr(arg, "__name__", None) in _METHODS and owner is not None and self._is_x(owner):
                self._pending.append((arg, tracemalloc.get_traced_memory()[0], owner.shape))
        elif event in ("c_return", "c_exception") and self._pending and self._pending[-1][0] is arg:
            _, before, shape = self._pending.pop()
            grown = tracemalloc.get_traced_memory()[0] - before
            if event == "c_return" and grown >= int(np.prod(shape)):  # at least one byte per entry: a copy
                self._count(f".{arg.__name__}() (copy)")

    def __enter__(self):
        import multilabel_core.validation as validation

        for name in _TESTS + _CONVERSIONS:
            original = getattr(np, name)
            self._saved[(np, name)] = original
            wrap = self._test if name in _TESTS else self._conversion
            setattr(np, name, wrap(name, original))
        # Sparse canonicalisation written in Python (scipy's own methods are seen by the profiler).
        canonical = validation._canonical_sparse
        self._saved[(validation, "_canonical_sparse")] = canonical

        def counted_canonical(X, *args, **kwargs):
            if self._is_x(X):
                self._count("canonical sparse pass")
            return canonical(X, *args, **kwargs)

        validation._canonical_sparse = counted_canonical
        # check_X is imported by name into the modules that use it: count each module's reference.
        original_check = validation.check_X

        is_checked = getattr(validation, "is_checked", lambda X: False)

        def counted_check_X(X, *args, **kwargs):
            if self._is_x(X):
                kind = "check_X, returned at once" if is_checked(X) else "check_X, full pass"
                self.check_X[kind] += 1
                self.sites[(kind, self._site())] += 1
            return original_check(X, *args, **kwargs)

        for module in list(sys.modules.values()):
            if getattr(module, "check_X", None) is original_check:
                self._saved[(module, "check_X")] = original_check
                module.check_X = counted_check_X
        self._tracing = not tracemalloc.is_tracing()
        if self._tracing:
            tracemalloc.start()
        sys.setprofile(self._profile)
        threading.setprofile(self._profile)
        return self

    def __exit__(self, *exc):
        sys.setprofile(None)
        threading.setprofile(None)
        if self._tracing:
            tracemalloc.stop()
        for (owner, name), original in self._saved.items():
            setattr(owner, name, original)
        return False

    @property
    def total(self) -> int:
        return sum(self.scans.values())


def count_fit(name: str, X, Y) -> ScanCounter:
    """The counter after one ``make_method(name).fit(X, Y)`` (warnings silenced: only the scans matter here)."""
    from multilabel_core import make_method

    estimator = make_method(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ScanCounter(X) as counter:
            estimator.fit(X, Y)
    return counter


def load_yeast():
    from multilabel_core.datasets import load_dataset

    data = load_dataset(_data_dir() / "yeast.arff")
    return data.X, data.Y


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", action="store_true", help="list where each scan happens")
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    args = parser.parse_args(argv)
    X, Y = load_yeast()
    print(f"yeast: X {X.shape} {X.dtype}, Y {Y.shape}")
    print(f"{'method':8} {'scans':>5} {'before':>6} {'check_X full/at once':>20} {'model copies':>12}  scans by kind")
    for name in args.methods:
        counter = count_fit(name, X, Y)
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(counter.scans.items()))
        calls = f"{counter.check_X['check_X, full pass']}/{counter.check_X['check_X, returned at once']}"
        print(f"{name:8} {counter.total:5d} {BEFORE.get(name, '?'):>6} {calls:>20} {counter.model_copies:12d}  {kinds}")
        if args.sites:
            for (kind, site), n in sorted(counter.sites.items()):
                print(f"    {n:3d}  {kind:28} {site}")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
