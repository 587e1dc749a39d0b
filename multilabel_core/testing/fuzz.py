"""A fuzz matrix for registered methods: hostile arrays, hostile parameters, numerical edges.

For a registered method (any plugin's, found through :func:`multilabel_core.list_methods`)
:func:`method_cases` builds a fixed, deterministic list of cases in three categories:

``arrays``
    malformed X, Y and predict-time inputs: NaN and infinity, wrong dimensions,
    mismatched, zero or single rows, zero features, labels outside {0, 1}, one label
    column, constant label columns, object/complex/string/bool/integer/float16/float32
    dtypes, sparse X (CSR, CSC, COO, duplicate or unsorted CSR entries, no stored entry),
    non-contiguous, Fortran-ordered, read-only and big-endian arrays, lists, and predict
    with another feature count than fit; and the declared width of a LibSVM file
    (:data:`WIDE_CASE`, :func:`wide_problem`): a CSR X of 10^6 columns holding 450 values
    (30 rows of 15 features), fitted under a memory
    budget of :data:`WIDE_BUDGET_COPIES` dense (10^6, L) matrices on top of the worker's
    address space and a hang limit of :data:`WIDE_TIMEOUT` seconds (a fit whose cost follows
    the width, not the stored entries, ends in a MemoryError there -- a ``wrong-exception``
    saying so -- or in a ``hang``).
``params``
    for every parameter in ``get_params()``: 0, negative, NaN, +-inf, 1e300, 1e-300,
    strings, None, booleans, a non-integral float, containers; strings and booleans where
    a string or a boolean is expected; ``random_state`` as an int, None, a numpy
    Generator, a RandomState and junk.
``numerics``
    X scaled by 1e300, 1e200, 1e160, 1e-300 and 1e-310 (subnormal), features scaled
    alternately by 1e-8 and 1e8, constant features, duplicate rows with conflicting
    labels, two or three rows, a single positive per label, and -- for a method with a
    ``kernel`` parameter -- precomputed Gram matrices that are not positive
    semi-definite.

Each case runs on a small problem (30 x 5, 3 labels, :func:`make_correlated_multilabel`
with seed 0): build the estimator, ``fit``, then every certificate, ``decision_function``
and ``predict``.  Its outcome is one of :data:`OUTCOMES`:

``ok-fit``
    the fit succeeded, every certificate is honest, and both outputs are finite
    (n, L) arrays, ``predict`` in {0, 1};
``clear-error``
    a ``ValueError`` (``DataFormatError`` and scikit-learn's ``InvalidParameterError``
    are ValueErrors) at construction, fit or predict time;
``wrong-exception``
    any other exception.  The rule of this project is that public input errors are
    ValueError, wrong Python types included (``check_scalar`` refuses the string
    ``"1"`` for C with a ValueError), so a TypeError counts here.  A plugin whose own
    rule lets a wrong Python type raise TypeError passes ``allow_type_error=True``:
    a TypeError then counts as ``clear-error`` (any other type still does not);
``crash``
    the interpreter died (a segmentation fault, an abort, a C-level exit);
``hang``
    the case ran past its timeout (default :data:`DEFAULT_TIMEOUT` seconds; a
    legitimate fit of 30 rows takes milliseconds);
``false-converged``
    a certificate (``certificate_``, each one of a list, and ``step_certificates_``)
    carries a ``gap`` that is not ``primal - dual`` (up to the rounding of that
    subtraction), or says ``converged`` while its primal, dual or gap is not finite, its
    relative gap ``gap / max(1, |primal|)`` lies outside ``[-gap_rtol, gap_rtol]``
    (:data:`DEFAULT_GAP_RTOL`; below ``-gap_rtol`` the dual is above the primal).  The
    KKT violation is not bounded here: its units are the solver's, and the cases that scale
    features by 1e8 make an honest one huge;  The project's stopping rules are KKT or
    relative-gap rules whose defaults leave relative gaps below 1e-3 on this problem;
    a certificate 10 times beyond that, or with a dual above its primal by as much,
    certifies nothing;
``bad-output``
    the fit succeeded but ``decision_function`` or ``predict`` returned NaN or
    infinity, a wrong shape or values outside {0, 1}, or ``predict`` is not the documented
    function of ``decision_function`` (``decision_threshold``, the fitted ``threshold_``
    part, or the sign) while ``predict`` issued no warning (a method may document a
    departure it warns about: the concept network's inference keeps a cycling row's last
    labelling), or (outside the ``numerics`` cases) the model is not the certified
    one: where the parts give the objective, the primal recomputed from the fitted weights
    differs from the certificate's by more than rounding (``check_method``'s certified-model
    check);
``accepted-invalid``
    a fit and predictions on an input the validation contract
    (:mod:`multilabel_core.validation`) refuses: NaN or infinity in X or Y, a non-binary Y,
    a shape mismatch, no rows or features, a wrong number of dimensions, complex or
    string data, a feature count at predict time other than at fit, a NaN or junk
    hyper-parameter.  Such a case is marked ``must_refuse``.

Only ``ok-fit`` and ``clear-error`` pass.

Isolation: cases run in worker subprocesses (``python fuzz.py --worker``), each printing one
JSON line when a case starts and one with its outcome.  The parent kills a worker whose
case exceeds the timeout (a hang inside C code ignores signals), records the case as a
hang, and starts a new worker at the next case; a worker that dies records a crash the
same way.  Workers run with one BLAS thread and an address-space limit
(:data:`DEFAULT_MEMORY_LIMIT`), so a runaway allocation raises MemoryError (a
wrong-exception) instead of exhausting the machine.

A plugin author runs the matrix on a method::

    from multilabel_core.testing.fuzz import assert_fuzz_clean
    assert_fuzz_clean("my_method")

A method registered by hand rather than through an installed entry point is not seen by a
fresh worker; pass the module that registers it: ``plugins=["my_package.my_plugin"]``
(imported in the worker and registered with the plugin manager under its own name).

The table of counts: ``python -m multilabel_core.testing.fuzz`` (``--help`` for options).
This file imports nothing from its own package, so that it can also be run by path against
another installed version of multilabel_core (``python path/to/fuzz.py``).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = [
    "CATEGORIES",
    "DEFAULT_GAP_RTOL",
    "DEFAULT_MEMORY_LIMIT",
    "DEFAULT_TIMEOUT",
    "FAILURES",
    "OUTCOMES",
    "WIDE_BUDGET_COPIES",
    "WIDE_CASE",
    "WIDE_COLUMNS",
    "WIDE_TIMEOUT",
    "Case",
    "assert_fuzz_clean",
    "count_table",
    "format_failures",
    "method_cases",
    "run_method",
    "wide_budget",
    "wide_problem",
    "wide_sparse",
]

OUTCOMES = ("ok-fit", "clear-error", "crash", "hang", "wrong-exception", "false-converged", "bad-output", "accepted-invalid")
FAILURES = OUTCOMES[2:]
CATEGORIES = ("arrays", "params", "numerics")

#: Seconds one case may take before it counts as a hang (``MULTILABEL_CORE_FUZZ_TIMEOUT`` overrides).  A
#: hang is a fit that does not end; a fit that spends its whole iteration budget is not one, and the
#: slowest such case (LIEML at lam = 2**70: 20000 FPC steps) must not depend on the machine's speed nor
#: on a second test worker beside it (``pytest -n auto``), so the limit leaves it a margin of about 3
#: under that load (its times: benchmarks/RESULTS.md, "Timings behind code comments").
DEFAULT_TIMEOUT = float(os.environ.get("MULTILABEL_CORE_FUZZ_TIMEOUT", "60"))
#: Largest relative gap a converged certificate may carry (see the module docstring).
DEFAULT_GAP_RTOL = 1e-2
_U = np.finfo(np.float64).eps / 2
#: Address-space limit of a worker, in bytes.
DEFAULT_MEMORY_LIMIT = 4 * 2**30
_STARTUP_TIMEOUT = 120.0
_MAX_DETAIL = 400
#: The wide case (:data:`WIDE_CASE`): the declared width of its sparse X.
WIDE_COLUMNS = 10**6
#: ... and its memory budget, in dense (width, L) float64 matrices: a linear model is one such
#: matrix, and a fit may hold a few copies of it (iterates, gradients, the scaled copy of a
#: preprocessing step).  What the declared width must not cost is a matrix of width x rows
#: (LIEML's stacked matrix was 10^6 x 30 dense), width x cuts (MLFS kept a width-vector per cut)
#: or width x classes (benchmarks/RESULTS.md, "Timings behind code comments").
WIDE_BUDGET_COPIES = 24
#: ... and its hang limit, in seconds: well above the slowest fit of the 450 stored values and well below
#: every fit whose time follows the width (FISTA's thousands of steps over a 10^6 x 3 W, the ensembles'
#: chains), both measured beside other loads (the times: benchmarks/RESULTS.md, "Timings behind code comments").
WIDE_TIMEOUT = 20.0
WIDE_CASE = "X sparse, 10^6 columns (450 stored values)"


@dataclass(frozen=True)
class Case:
    """One fuzz case: estimator parameters and the data of fit and predict.

    Parameters
    ----------
    category : str
        One of :data:`CATEGORIES`.
    name : str
        What the case feeds the method, in words.
    data : callable
        ``data()`` returns ``(X, Y, X_predict, fit_kwargs)``; ``X_predict`` None means X.
    params : dict, default={}
        Estimator parameters set on top of the method's defaults.
    must_refuse : bool, default=False
        Whether the method must refuse the case with a clear error (a fit that succeeds is
        ``accepted-invalid``).
    memory_budget : int or None, default=None
        Bytes of address space the case may add to the worker's (None: only the worker's limit).
    timeout : float or None, default=None
        Seconds before the case is a hang, when shorter than the run's timeout (None: the run's).
    """

    category: str
    name: str
    data: Callable[[], tuple]
    params: dict = field(default_factory=dict)
    must_refuse: bool = False
    #: Bytes of address space the case may add to the worker's (None: only the worker's limit).
    memory_budget: int | None = None
    #: Seconds before the case is a hang, when shorter than the run's timeout (None: the run's).
    timeout: float | None = None


# -- the problem ----------------------------------------------------------------------


def _problem():
    from multilabel_core.datasets import make_correlated_multilabel

    data = make_correlated_multilabel(30, 5, 3, random_state=0)
    X, Y = np.asarray(data.X, dtype=np.float64), np.asarray(data.Y)
    return X, Y


def _given(X, Y, X_predict=None, **fit_kwargs):
    return X, Y, X_predict, fit_kwargs


def _with(X, where, value):
    X = np.array(X, dtype=np.result_type(X.dtype, type(value)) if isinstance(value, float) else X.dtype)
    X[where] = value
    return X


# -- arrays ---------------------------------------------------------------------------


def _array_cases(X, Y, fit_parameters) -> list[Case]:
    import scipy.sparse as sp

    n, d = X.shape
    Yf = Y.astype(np.float64)

    def case(name, build, must_refuse=False):
        return Case("arrays", name, build, must_refuse=must_refuse)

    def duplicate_csr():
        # Every stored entry split in two halves at the same position, in reversed column order.
        dense = sp.csr_matrix(X)
        rows, cols, vals = [], [], []
        for i in range(n):
            start, stop = dense.indptr[i], dense.indptr[i + 1]
            for k in reversed(range(start, stop)):
                rows += [i, i]
                cols += [dense.indices[k]] * 2
                vals += [dense.data[k] / 2] * 2
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))])
        return sp.csr_matrix((np.array(vals), np.array(cols), indptr), shape=(n, d))

    def unsorted_csr():
        dense = sp.csr_matrix(X)
        indices, data = dense.indices.copy(), dense.data.copy()
        for i in range(n):
            s = slice(dense.indptr[i], dense.indptr[i + 1])
            indices[s], data[s] = indices[s][::-1], data[s][::-1]
        matrix = sp.csr_matrix((data, indices, dense.indptr.copy()), shape=(n, d))
        matrix.has_sorted_indices = False
        return matrix

    def sparse_with_nan():
        matrix = sp.csr_matrix(X)
        matrix.data[0] = np.nan
        return matrix

    def explicit_zeros():
        matrix = sp.csr_matrix(X)
        matrix.data[::3] = 0.0
        return matrix

    def read_only():
        Xr = X.copy()
        Xr.flags.writeable = False
        Yr = Y.copy()
        Yr.flags.writeable = False
        return _given(Xr, Yr)

    def Y_with(value, dtype=np.float64):
        Yb = Y.astype(dtype)
        Yb[0, 0] = value
        return Yb

    def column(j, value):
        Yc = Y.copy()
        Yc[:, j] = value
        return Yc

    cases = [
        case("X nan", lambda: _given(_with(X, (0, 0), np.nan), Y), True),
        case("X inf", lambda: _given(_with(X, (3, 1), np.inf), Y), True),
        case("X -inf", lambda: _given(_with(X, (3, 1), -np.inf), Y), True),
        case("X all nan", lambda: _given(np.full_like(X, np.nan), Y), True),
        case("Y nan", lambda: _given(X, Y_with(np.nan)), True),
        case("Y inf", lambda: _given(X, Y_with(np.inf)), True),
        case("Y value 2", lambda: _given(X, Y_with(2, Y.dtype)), True),
        case("Y value 0.5", lambda: _given(X, Y_with(0.5)), True),
        case("Y value -1 (signs)", lambda: _given(X, 2 * Y.astype(np.int64) - 1), True),
        case("Y one -1 entry", lambda: _given(X, Y_with(-1, np.int64)), True),
        case("X 1-D", lambda: _given(X[:, 0].copy(), Y), True),
        case("X 3-D", lambda: _given(X[:, :, None].copy(), Y), True),
        case("X scalar", lambda: _given(np.float64(1.0), Y), True),
        case("Y 1-D", lambda: _given(X, Y[:, 0].copy()), True),
        case("Y 3-D", lambda: _given(X, Y[:, :, None].copy()), True),
        case("X one row fewer", lambda: _given(X[:-1], Y), True),
        case("Y one row fewer", lambda: _given(X, Y[:-1]), True),
        case("zero rows", lambda: _given(X[:0], Y[:0]), True),
        case("zero features", lambda: _given(X[:, :0], Y), True),
        case("zero label columns", lambda: _given(X, Y[:, :0]), True),
        case("one row", lambda: _given(X[:1], Y[:1])),
        case("two rows", lambda: _given(X[:2], Y[:2])),
        case("one label column", lambda: _given(X, Y[:, :1].copy())),
        case("Y column all 0", lambda: _given(X, column(1, 0))),
        case("Y column all 1", lambda: _given(X, column(1, 1))),
        case("Y all 0", lambda: _given(X, np.zeros_like(Y))),
        case("Y all 1", lambda: _given(X, np.ones_like(Y))),
        case("Y bool", lambda: _given(X, Y.astype(bool))),
        case("Y float", lambda: _given(X, Yf)),
        case("Y float32", lambda: _given(X, Y.astype(np.float32))),
        case("Y object of ints", lambda: _given(X, Y.astype(object))),
        case("Y strings", lambda: _given(X, Y.astype(str)), True),
        case("Y CSR", lambda: _given(X, sp.csr_matrix(Y))),
        case("Y COO", lambda: _given(X, sp.coo_matrix(Y))),
        case("Y list", lambda: _given(X, Y.tolist())),
        case("X object of floats", lambda: _given(X.astype(object), Y)),
        case("X object with a string", lambda: _given(_with(X.astype(object), (0, 0), "a"), Y), True),
        case("X strings", lambda: _given(X.astype(str), Y), True),
        case("X bytes", lambda: _given(X.astype("S8"), Y), True),
        case("X complex", lambda: _given(X + 1j, Y), True),
        case("X complex, zero imaginary", lambda: _given(X.astype(complex), Y), True),
        case("X bool", lambda: _given(X > 0, Y)),
        case("X int", lambda: _given(np.round(10 * X).astype(np.int64), Y)),
        case("X uint8", lambda: _given(np.abs(np.round(10 * X)).astype(np.uint8), Y)),
        case("X float32", lambda: _given(X.astype(np.float32), Y)),
        case("X float16", lambda: _given(X.astype(np.float16), Y)),
        case("X longdouble", lambda: _given(X.astype(np.longdouble), Y)),
        case("X big-endian", lambda: _given(X.astype(">f8"), Y)),
        case("X list", lambda: _given(X.tolist(), Y)),
        case("X ragged list", lambda: _given([list(row[: 1 + i % d]) for i, row in enumerate(X)], Y), True),
        case("X np.matrix", lambda: _given(np.asmatrix(X), Y)),
        case("X CSR", lambda: _given(sp.csr_matrix(X), Y)),
        case("X CSC", lambda: _given(sp.csc_matrix(X), Y)),
        case("X COO", lambda: _given(sp.coo_matrix(X), Y)),
        case("X csr_array", lambda: _given(sp.csr_array(X), Y)),
        case("X CSR duplicate entries", lambda: _given(duplicate_csr(), Y)),
        case("X CSR unsorted indices", lambda: _given(unsorted_csr(), Y)),
        case("X CSR explicit zeros", lambda: _given(explicit_zeros(), Y)),
        case("X CSR nan", lambda: _given(sparse_with_nan(), Y), True),
        case("X sparse, no stored entry", lambda: _given(sp.csr_matrix((n, d)), Y)),
        case("X sparse, zero rows", lambda: _given(sp.csr_matrix((0, d)), Y[:0]), True),
        Case("arrays", WIDE_CASE, lambda: _given(*wide_problem()), memory_budget=wide_budget(Y.shape[1]),
             timeout=WIDE_TIMEOUT),
        case("X sparse int", lambda: _given(sp.csr_matrix(np.round(10 * X).astype(np.int64)), Y)),
        case("X every other row (strided view)", lambda: _given(np.repeat(X, 2, axis=0)[::2], Y)),
        case("X every other column (strided view)", lambda: _given(np.repeat(X, 2, axis=1)[:, ::2], Y)),
        case("X and Y Fortran order", lambda: _given(np.asfortranarray(X), np.asfortranarray(Y))),
        case("X and Y read-only", read_only),
        case("predict with d - 1 features", lambda: _given(X, Y, X[:, :-1]), True),
        case("predict with d + 1 features", lambda: _given(X, Y, np.hstack([X, X[:, :1]])), True),
        case("predict nan", lambda: _given(X, Y, _with(X, (2, 2), np.nan)), True),
        case("predict 1-D", lambda: _given(X, Y, X[0].copy()), True),
        case("predict zero rows", lambda: _given(X, Y, X[:0]), True),
        case("predict one row", lambda: _given(X, Y, X[:1])),
        case("predict sparse after dense fit", lambda: _given(X, Y, sp.csr_matrix(X))),
        case("predict dense after sparse fit", lambda: _given(sp.csr_matrix(X), Y, X)),
        case("predict strings", lambda: _given(X, Y, X.astype(str)), True),
    ]
    if "X_unlabeled" in fit_parameters:
        cases += [
            case("X_unlabeled nan", lambda: _given(X, Y, X_unlabeled=_with(X[:10], (0, 0), np.nan)), True),
            case("X_unlabeled d - 1 features", lambda: _given(X, Y, X_unlabeled=X[:10, :-1]), True),
            case("X_unlabeled zero rows", lambda: _given(X, Y, X_unlabeled=X[:0])),
            case("X_unlabeled sparse", lambda: _given(X, Y, X_unlabeled=sp.csr_matrix(X[:10]))),
            case("X_unlabeled 1-D", lambda: _given(X, Y, X_unlabeled=X[0].copy()), True),
        ]
    return cases


def wide_sparse(X, width: int | None = None):
    """Spread the columns of a dense X evenly over a CSR matrix of ``width`` columns.

    The first and the last column hold X's first and last; every other column not among X's is
    empty, as in a LibSVM file whose largest index declares the width.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The dense rows.
    width : int or None, default=None
        The declared number of columns, at least d (None: :data:`WIDE_COLUMNS`).

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n, width)
        The wide rows, without stored zeros.
    """
    import scipy.sparse as sp

    width = WIDE_COLUMNS if width is None else int(width)
    n, held = X.shape
    columns = np.linspace(0, width - 1, held).astype(np.int64)
    wide = sp.csr_matrix((np.ravel(X), np.tile(columns, n), np.arange(0, n * held + 1, held)), shape=(n, width))
    wide.eliminate_zeros()
    return wide


def wide_problem(width: int | None = None):
    """Build the wide case: 30 rows, 15 features (450 values) over ``width`` columns, 3 labels.

    The shape of the red-team file whose width MLFS once paid for in time and memory (benchmarks/RESULTS.md, "Timings behind code comments"):
    the features of :func:`make_correlated_multilabel` (seed 0), each one a column of the wide CSR.

    Parameters
    ----------
    width : int or None, default=None
        The declared number of columns (None: :data:`WIDE_COLUMNS`).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (30, width)
        The wide rows (:func:`wide_sparse`).
    Y : ndarray of shape (30, 3)
        The {0, 1} labels.
    """
    from multilabel_core.datasets import make_correlated_multilabel

    data = make_correlated_multilabel(30, 15, 3, random_state=0)
    return wide_sparse(np.asarray(data.X, dtype=np.float64), width), np.asarray(data.Y)


def wide_budget(n_labels: int, width: int | None = None) -> int:
    """Give the memory budget of the wide case: :data:`WIDE_BUDGET_COPIES` dense (width, L) float64 matrices.

    Parameters
    ----------
    n_labels : int
        L, the number of labels.
    width : int or None, default=None
        The declared number of columns (None: :data:`WIDE_COLUMNS`).

    Returns
    -------
    int
        The budget in bytes.
    """
    return WIDE_BUDGET_COPIES * 8 * (WIDE_COLUMNS if width is None else int(width)) * int(n_labels)


# -- parameters -----------------------------------------------------------------------

_NUMBER_VALUES = (
    ("0", 0, False), ("-1", -1, False), ("-0.5", -0.5, False), ("nan", math.nan, True), ("inf", math.inf, False),
    ("-inf", -math.inf, False), ("1e300", 1e300, False), ("1e-300", 1e-300, False), ("string 'abc'", "abc", True),
    ("string '1'", "1", False), ("True", True, False), ("2.5", 2.5, False), ("complex 1j", 1j, True),
    ("list [1]", [1], False), ("numpy float64 nan", np.float64("nan"), True), ("2**70", 2**70, False),
)  # fmt: skip
_STRING_VALUES = (
    ("string 'no_such_value'", "no_such_value", True), ("empty string", "", True), ("1.5", 1.5, False),
    ("True", True, False), ("nan", math.nan, True),
)  # fmt: skip
_FLAG_VALUES = (
    ("string 'yes'", "yes", False), ("2", 2, False), ("0.5", 0.5, False), ("nan", math.nan, True),
    ("numpy bool", np.True_, False), ("None", None, False),
)  # fmt: skip


def _random_states():
    return (
        ("int 0", 0, False), ("int 12345", 12345, False), ("None", None, False),
        ("numpy Generator", np.random.default_rng(0), False), ("RandomState", np.random.RandomState(0), False),
        ("SeedSequence", np.random.SeedSequence(0), False), ("-1", -1, False), ("2**70", 2**70, False),
        ("string 'junk'", "junk", True), ("1.5", 1.5, False), ("list [1, 2]", [1, 2], False), ("nan", math.nan, True),
        ("object()", object(), True),
    )  # fmt: skip


def _param_values(name, default):
    if name == "random_state":
        return _random_states()
    if isinstance(default, (bool, np.bool_)):
        return _FLAG_VALUES
    if isinstance(default, str):
        return _STRING_VALUES
    if default is None or isinstance(default, (int, float, np.number)):
        values = _NUMBER_VALUES
        if default is not None:
            values = values + (("None", None, False),)
        return values
    # Objects (a kernel, an order list, ...): the junk every parameter must refuse.
    return (("string 'no_such_value'", "no_such_value", True), ("nan", math.nan, True), ("-1", -1, False))


def _param_cases(X, Y, params) -> list[Case]:
    cases = []
    for name in sorted(params):
        for label, value, must_refuse in _param_values(name, params[name]):
            cases.append(Case("params", f"{name}={label}", lambda: _given(X, Y), {name: value}, must_refuse))
    return cases


# -- numerical edges ------------------------------------------------------------------


def _numeric_cases(X, Y, params) -> list[Case]:
    n, d = X.shape

    def case(name, build, extra=None):
        return Case("numerics", name, build, dict(extra or {}))

    alternate = np.where(np.arange(d) % 2 == 0, 1e-8, 1e8)
    duplicate = np.repeat(X[:1], n, axis=0)
    single_positive = np.zeros_like(Y)
    single_positive[np.arange(Y.shape[1]), np.arange(Y.shape[1])] = 1
    tiny_Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]], dtype=Y.dtype)
    cases = [
        case("X * 1e300", lambda: _given(X * 1e300, Y)),
        case("X * 1e200", lambda: _given(X * 1e200, Y)),
        case("X * 1e160 (squares overflow)", lambda: _given(X * 1e160, Y)),
        case("X * 1e-300", lambda: _given(X * 1e-300, Y)),
        case("X * 1e-310 (subnormal)", lambda: _given(X * 1e-310, Y)),
        case("features scaled 1e-8 / 1e8 alternately", lambda: _given(X * alternate, Y)),
        case("every feature constant", lambda: _given(np.ones_like(X), Y)),
        case("one feature constant", lambda: _given(np.column_stack([X[:, :-1], np.full(n, 3.0)]), Y)),
        case("all rows equal, labels differ", lambda: _given(duplicate, Y)),
        case("every row twice", lambda: _given(np.vstack([X[:15], X[:15]]), np.vstack([Y[:15], Y[:15]]))),
        case("three rows", lambda: _given(X[:3], tiny_Y)),
        case("one positive per label", lambda: _given(X, single_positive)),
        case("X zero", lambda: _given(np.zeros_like(X), Y)),
    ]
    if "kernel" in params:
        K = X @ X.T

        def shifted():
            return K - 10.0 * np.eye(n)

        cases += [
            case("precomputed Gram, indefinite (K - 10 I)", lambda: _given(shifted(), Y, shifted()), {"kernel": "precomputed"}),
            case("precomputed Gram, negative definite (-K - I)", lambda: _given(-K - np.eye(n), Y, -K - np.eye(n)),
                 {"kernel": "precomputed"}),
            case("precomputed Gram, not square", lambda: _given(K[:, :-1], Y, K[:, :-1]), {"kernel": "precomputed"}),
            case("precomputed Gram, asymmetric", lambda: _given(K + np.triu(np.ones((n, n)), 1), Y, K),
                 {"kernel": "precomputed"}),
            case("precomputed Gram * 1e300", lambda: _given(K * 1e300, Y, K * 1e300), {"kernel": "precomputed"}),
        ]  # fmt: skip
    return cases


def method_cases(method: str) -> list[Case]:
    """List the fuzz cases for a registered method (the same list on every call).

    Parameters
    ----------
    method : str
        The registered method's name.

    Returns
    -------
    list of Case
        The array, parameter and numeric cases, in that order.
    """
    import inspect

    from multilabel_core import get_method

    spec = get_method(method)
    params = spec.estimator().get_params(deep=False)
    fit_parameters = inspect.signature(spec.estimator.fit).parameters
    X, Y = _problem()
    return _array_cases(X, Y, fit_parameters) + _param_cases(X, Y, params) + _numeric_cases(X, Y, params)


# -- running one case (in the worker) ---------------------------------------------------


def _certificates(estimator) -> list:
    found = []
    for attribute in ("certificate_", "step_certificates_"):
        value = getattr(estimator, attribute, None)
        if value is None:
            continue
        found += list(value) if isinstance(value, (list, tuple)) else [value]
    return found


def _requested_tolerance(params: dict) -> float:
    """The loosest finite ``tol``/``smo_tol`` the case sets: a looser request may leave a looser gap."""
    values = [v for k, v in params.items() if k in ("tol", "smo_tol")]
    return max([float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)],
               default=0.0)  # fmt: skip


def _dishonest(certificate, gap_rtol: float) -> str | None:
    """What a certificate claims that its own numbers refute (the ``false-converged`` rules), or None."""
    primal, dual, gap = (float(getattr(certificate, f)) for f in ("primal", "dual", "gap"))
    if math.isfinite(primal) and math.isfinite(dual) and math.isfinite(gap):
        # gap is primal - dual rounded once; 8 u (|P| + |D|) covers that subtraction with a margin.
        consistency = 8 * _U * (abs(primal) + abs(dual))
        if not abs(gap - (primal - dual)) <= consistency:
            return (f"certificate claims: gap={gap!r} is not primal - dual = {primal - dual!r} "
                    f"(tolerance {consistency:.3g}; primal={primal!r}, dual={dual!r})")
    if not getattr(certificate, "converged", False):
        return None
    if not (math.isfinite(primal) and math.isfinite(dual) and math.isfinite(gap)):
        return f"certificate claims: converged with primal={primal!r}, dual={dual!r}, gap={gap!r}"
    relative = gap / max(1.0, abs(primal))
    if abs(relative) > gap_rtol:
        return (f"certificate claims: converged with relative gap {relative:.3g} outside [-{gap_rtol:g}, {gap_rtol:g}] "
                f"(gap={gap:.3g}, primal={primal:.3g}, dual={dual:.3g})")
    # No bound on kkt_violation here: its units are the solver's (a gradient entry scales with the
    # features), and the numerics cases scale features by 1e8 (PrBR: 1.4e7 at a primal of 86.5 with
    # a relative gap of 2.3e-5, an honest certificate).
    return None


def _uncertified_model(estimator, X, Y) -> str | None:
    """Why the fitted model is not the one its certificate certifies, or None.

    :func:`multilabel_core.testing.checks.check_method`'s certified-model check (the primal
    recomputed from the fitted weights and the parts equals the certificate's, where the parts
    give the objective), imported from the multilabel_core being fuzzed; None when that version
    has no such check.  Not applied to the ``numerics`` cases: its rounding bound assumes no
    underflow, and those cases scale X down to subnormal numbers.
    """
    try:
        from multilabel_core.testing.checks import check_certified_model
    except ImportError:
        return None
    X = X if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y)
    try:
        check_certified_model(estimator, X, Y)
    except AssertionError as exc:
        return str(exc)
    return None


def _shape(A) -> tuple:
    return A.shape if hasattr(A, "shape") else np.shape(A)


def _check_outputs(estimator, X_predict, n_labels, caught=()) -> str | None:
    n = _shape(X_predict)[0]
    scores = np.asarray(estimator.decision_function(X_predict))
    before = len(caught)
    predictions = np.asarray(estimator.predict(X_predict))
    warned = len(caught) > before
    if scores.shape != (n, n_labels) or predictions.shape != (n, n_labels):
        return f"output shapes {scores.shape} and {predictions.shape}, expected {(n, n_labels)}"
    if not np.issubdtype(scores.dtype, np.number) or not np.all(np.isfinite(scores)):
        return f"decision_function is not finite ({np.sum(~np.isfinite(scores))} entries)"
    if not np.all((predictions == 0) | (predictions == 1)):
        return "predict returned values other than 0 and 1"
    # The exposed model is one model: predict is the documented function of decision_function
    # (a learned per-row threshold, the fitted threshold part, or the sign), exactly -- the same
    # computation on the same rows.
    row_threshold, part = getattr(estimator, "decision_threshold", None), getattr(estimator, "threshold_", None)
    # A label constant on the training rows is predicted at its value (constant_labels_) and scores a
    # constant of that sign; the rule cuts the learned labels' scores (fitted_labels_).
    constant = getattr(estimator, "constant_labels_", None) or {}
    learned = np.asarray(getattr(estimator, "fitted_labels_", np.arange(n_labels)))
    fitted_scores = scores[:, learned]
    if constant and not learned.size:
        expected, rule = np.zeros(scores.shape, dtype=bool), "the constant labels' values"
    elif row_threshold is not None:
        expected, rule = fitted_scores > np.asarray(row_threshold(X_predict))[:, None], "decision_function > decision_threshold"
    elif part is not None and callable(getattr(part, "predict", None)):
        expected, rule = np.asarray(part.predict(fitted_scores)) > 0, "threshold_.predict(decision_function)"
    else:
        expected, rule = fitted_scores > 0, "decision_function > 0"
    if constant:
        full = np.zeros(scores.shape, dtype=bool)
        full[:, learned] = expected if learned.size else False
        for j, value in constant.items():
            if not np.all((scores[:, j] > 0) == bool(value)):
                return f"decision_function: constant label {j} of value {value} scores {scores[0, j]!r}, of the other sign"
            full[:, j] = bool(value)
        expected, rule = full, rule + " on the learned labels, constant_labels_ on the others"
    # A method may document a departure it warns about (the concept network's inference keeps a
    # cycling row's last labelling, with an InferenceWarning): a warning during predict excuses it.
    if not warned and not np.array_equal(predictions.astype(bool), expected):
        return f"predictions: predict is not [{rule}] at {int((predictions.astype(bool) != expected).sum())} entries (tolerance 0)"
    return None


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:_MAX_DETAIL]


def run_case(method: str, case: Case, *, gap_rtol: float = DEFAULT_GAP_RTOL, allow_type_error: bool = False) -> dict:
    """Run one case in this process; the outcome as a dict (see the module docstring)."""
    from multilabel_core import make_method

    stage = "construct"
    result = {"category": case.category, "name": case.name}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            estimator = make_method(method, **case.params)
            X, Y, X_predict, fit_kwargs = case.data()
            stage = "fit"
            estimator.fit(X, Y, **fit_kwargs)
            stage = "certificate"
            for certificate in _certificates(estimator):
                problem = _dishonest(certificate, max(gap_rtol, _requested_tolerance(case.params)))
                if problem is not None:
                    return result | {"outcome": "false-converged", "stage": stage, "detail": problem[:_MAX_DETAIL]}
            stage = "certified model"
            problem = None if case.category == "numerics" else _uncertified_model(estimator, X, Y)
            if problem is not None:
                return result | {"outcome": "bad-output", "stage": stage, "detail": problem[:_MAX_DETAIL]}
            stage = "predict"
            X_predict = X if X_predict is None else X_predict
            problem = _check_outputs(estimator, X_predict, _shape(Y)[1], caught)
        except ValueError as exc:
            return result | {"outcome": "clear-error", "stage": stage, "detail": _describe(exc)}
        except TypeError as exc:
            outcome = "clear-error" if allow_type_error else "wrong-exception"
            return result | {"outcome": outcome, "stage": stage, "detail": _describe(exc)}
        except MemoryError as exc:
            detail = _describe(exc)
            if case.memory_budget is not None:
                detail = (f"MemoryError beyond the case's budget of {case.memory_budget / 2**20:.0f} MiB of address space "
                          f"({WIDE_BUDGET_COPIES} dense copies of the (width, L) model): the cost follows the declared "
                          f"width, not the stored entries; {detail}")
            return result | {"outcome": "wrong-exception", "stage": stage, "detail": detail[:_MAX_DETAIL]}
        except Exception as exc:  # noqa: BLE001 -- the point is to classify every exception
            return result | {"outcome": "wrong-exception", "stage": stage, "detail": _describe(exc)}
        names = sorted({w.category.__name__ for w in caught})
    if problem is not None:
        return result | {"outcome": "bad-output", "stage": stage, "detail": problem}
    if case.must_refuse:
        return result | {"outcome": "accepted-invalid", "stage": stage, "detail": "fitted and predicted; warnings: " + ", ".join(names)}
    return result | {"outcome": "ok-fit", "stage": stage, "detail": ", ".join(names)}


def _worker(method: str, indices: list[int], gap_rtol: float, allow_type_error: bool, plugins: list[str]) -> None:
    # The protocol goes to a private copy of stdout; fd 1 itself is pointed at stderr, so
    # that anything a fit prints (C code included) cannot corrupt it.
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        import resource

        limit = int(os.environ.get("MULTILABEL_CORE_FUZZ_MEMORY", DEFAULT_MEMORY_LIMIT))
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass
    if plugins:
        import importlib

        from multilabel_core.plugins import get_plugin_manager

        manager = get_plugin_manager()
        for name in plugins:
            if manager.get_plugin(name) is None:
                manager.register(importlib.import_module(name), name=name)
    cases = method_cases(method)
    protocol.write(json.dumps({"event": "ready", "n_cases": len(cases)}) + "\n")
    warm = False
    for index in indices:
        if cases[index].memory_budget is not None and not warm:
            # A fit on the plain problem first, before the case's clock and budget start: the imports
            # and BLAS buffers of a first fit are the worker's, not the budgeted case's.
            X, Y = _problem()
            run_case(method, Case("arrays", "warm-up", lambda: _given(X, Y)), gap_rtol=gap_rtol)
            warm = True
        protocol.write(json.dumps({"event": "start", "index": index}) + "\n")
        start = time.perf_counter()
        with _address_space_budget(cases[index].memory_budget):
            result = run_case(method, cases[index], gap_rtol=gap_rtol, allow_type_error=allow_type_error)
        result |= {"event": "result", "index": index, "seconds": round(time.perf_counter() - start, 4)}
        protocol.write(json.dumps(result, default=str) + "\n")


class _address_space_budget:
    """Lower the soft address-space limit to the current size plus ``budget`` bytes for a case; restore it after.

    An allocation beyond it raises MemoryError in the case (the soft limit of an unprivileged
    process may be raised again up to its hard limit).  Without /proc (not Linux) the case runs
    under the worker's limit alone.
    """

    def __init__(self, budget):
        self.budget, self.saved = budget, None

    def __enter__(self):
        if self.budget is None:
            return self
        try:
            import resource

            with open("/proc/self/status") as status:
                size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
            self.saved = resource.getrlimit(resource.RLIMIT_AS)
            hard = self.saved[1]
            soft = size + int(self.budget)
            resource.setrlimit(resource.RLIMIT_AS, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
        except (ImportError, OSError, ValueError, StopIteration):
            self.saved = None
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, self.saved)
        return False


# -- the parent ---------------------------------------------------------------------------


def _worker_env() -> dict:
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        env[name] = "1"
    # A background shell's SIGINT-ignored disposition is inherited; workers need none of it.
    env.setdefault("PYTHONFAULTHANDLER", "1")
    return env


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def _tail(path: str, size: int = 600) -> str:
    with open(path, "rb") as stream:
        stream.seek(0, os.SEEK_END)
        stream.seek(max(0, stream.tell() - size))
        return stream.read().decode("utf-8", "replace").strip()


def _run_chunk(method, cases, indices, *, timeout, python, gap_rtol, allow_type_error, plugins) -> dict[int, dict]:
    results: dict[int, dict] = {}
    pending = list(indices)
    while pending:
        argv = [python, os.path.abspath(__file__), "--worker", method, "--cases", ",".join(map(str, pending)),
                "--gap-rtol", repr(gap_rtol)] + ["--plugin=" + p for p in plugins]  # fmt: skip
        if allow_type_error:
            argv.append("--allow-type-error")
        with tempfile.NamedTemporaryFile("w+b", suffix=".stderr", delete=False) as stderr:
            stderr_path = stderr.name
        try:
            with open(stderr_path, "wb") as stderr:
                process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL,
                                           env=_worker_env(), start_new_session=True, cwd=tempfile.gettempdir())  # fmt: skip
            pending = _follow(process, cases, pending, results, timeout, stderr_path)
        finally:
            os.unlink(stderr_path)
    return results


def _follow(process, cases, pending, results, timeout, stderr_path) -> list[int]:
    """Read a worker's protocol; return the indices still to run when it is killed or dies."""
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    buffer = b""
    current, started = None, time.monotonic()
    deadline = started + _STARTUP_TIMEOUT
    try:
        while True:
            events = selector.select(max(0.0, deadline - time.monotonic()))
            if not events:
                _kill(process)
                if current is None:
                    raise RuntimeError(f"fuzz worker did not start within {_STARTUP_TIMEOUT} s: {_tail(stderr_path)}")
                limit = _case_timeout(cases[current], timeout)
                results[current] = _synthetic(cases[current], "hang", f"no result within {limit:g} s (worker killed)",
                                              time.monotonic() - started)  # fmt: skip
                return pending[pending.index(current) + 1 :]
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                process.wait()
                if current is None:
                    if not any(i in results for i in pending):
                        raise RuntimeError(f"fuzz worker exited (status {process.returncode}): {_tail(stderr_path)}")
                    # Died between two cases: charged to the next one, which it never started.
                    current = next(i for i in pending if i not in results)
                detail = f"worker exited with status {process.returncode}: {_tail(stderr_path, 300)}"
                results[current] = _synthetic(cases[current], "crash", detail, time.monotonic() - started)
                return pending[pending.index(current) + 1 :]
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                message = json.loads(line)
                if message["event"] == "ready":
                    if message["n_cases"] != len(cases):
                        _kill(process)
                        raise RuntimeError("the worker built another case list than the parent")
                elif message["event"] == "start":
                    current, started = message["index"], time.monotonic()
                    deadline = started + _case_timeout(cases[current], timeout)
                else:
                    results[message["index"]] = {k: v for k, v in message.items() if k != "event"}
                    current = None
                    deadline = time.monotonic() + _STARTUP_TIMEOUT
                    if all(i in results for i in pending):
                        process.wait()
                        return []
    finally:
        selector.close()
        process.stdout.close()
        if process.poll() is None:
            _kill(process)


def _case_timeout(case: Case, timeout: float) -> float:
    return timeout if case.timeout is None else min(timeout, case.timeout)


def _synthetic(case: Case, outcome: str, detail: str, seconds: float) -> dict:
    return {"category": case.category, "name": case.name, "outcome": outcome, "stage": "?", "detail": detail[:_MAX_DETAIL],
            "seconds": round(seconds, 4)}  # fmt: skip


def run_method(
    method: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    n_workers: int = 1,
    python: str | None = None,
    gap_rtol: float = DEFAULT_GAP_RTOL,
    allow_type_error: bool = False,
    plugins=(),
    indices=None,
) -> list[dict]:
    """Run the fuzz cases of ``method`` in worker subprocesses.

    Parameters
    ----------
    method : str
        The registered method's name.
    timeout : float, default=DEFAULT_TIMEOUT
        Seconds per case before it is a hang (a case may set a shorter one).
    n_workers : int, default=1
        Worker processes sharing the cases (a case's worker is its index modulo ``n_workers``).
    python : str or None, default=None
        The interpreter of the workers (None: this one).
    gap_rtol : float, default=DEFAULT_GAP_RTOL
        The largest relative gap a converged certificate may carry.
    allow_type_error : bool, default=False
        Whether a TypeError counts as a clear error.
    plugins : iterable of str, default=()
        Modules the workers import to register further components or methods.
    indices : iterable of int or None, default=None
        The cases to run, by index into :func:`method_cases` (None: all).

    Returns
    -------
    list of dict
        One result per case, in case order: ``category``, ``name``, ``outcome`` (one of
        :data:`OUTCOMES`), ``stage``, ``detail``, ``seconds``, ``index`` and ``method``.
    """
    cases = method_cases(method)
    indices = list(range(len(cases))) if indices is None else list(indices)
    chunks = [indices[k::n_workers] for k in range(max(1, n_workers))]
    options = dict(timeout=timeout, python=python or sys.executable, gap_rtol=gap_rtol,
                   allow_type_error=allow_type_error, plugins=list(plugins))  # fmt: skip
    results: dict[int, dict] = {}
    with concurrent.futures.ThreadPoolExecutor(len(chunks)) as pool:
        for part in pool.map(lambda chunk: _run_chunk(method, cases, chunk, **options), [c for c in chunks if c]):
            results.update(part)
    return [results[i] | {"index": i, "method": method} for i in indices]


def format_failures(results: list[dict]) -> str:
    """Format the failing cases, one line each: method, category, case, outcome, stage and detail.

    Parameters
    ----------
    results : list of dict
        What :func:`run_method` returned.

    Returns
    -------
    str
        The lines (empty when no case failed).
    """
    lines = []
    for r in results:
        if r["outcome"] in FAILURES:
            lines.append(f"{r['method']} [{r['category']}] {r['name']}: {r['outcome']} at {r['stage']}: {r['detail']}")
    return "\n".join(lines)


def assert_fuzz_clean(method: str, **options) -> list[dict]:
    """Run the fuzz matrix on ``method`` and fail unless every case passes.

    Parameters
    ----------
    method : str
        The registered method's name.
    **options
        Passed to :func:`run_method`.

    Returns
    -------
    list of dict
        One result per case, in case order: ``category``, ``name``, ``outcome`` (one of
        :data:`OUTCOMES`), ``stage``, ``detail``, ``seconds``, ``index`` and ``method``.

    Raises
    ------
    AssertionError
        Listing every failing case (:func:`format_failures`).
    """
    results = run_method(method, **options)
    failures = format_failures(results)
    if failures:
        n = sum(r["outcome"] in FAILURES for r in results)
        raise AssertionError(f"{n} of {len(results)} fuzz cases of {method!r} failed:\n{failures}")
    return results


def count_table(results: list[dict]) -> str:
    """Tabulate the outcome counts: one row per method and category, one column per outcome.

    Parameters
    ----------
    results : list of dict
        What :func:`run_method` returned (for one or more methods).

    Returns
    -------
    str
        A Markdown-style text table with a total row.
    """
    rows: dict[tuple[str, str], dict[str, int]] = {}
    for r in results:
        rows.setdefault((r["method"], r["category"]), dict.fromkeys(OUTCOMES, 0))[r["outcome"]] += 1
    header = ["method", "category", "cases", *OUTCOMES]
    body = [[m, c, str(sum(counts.values()))] + [str(counts[o]) for o in OUTCOMES] for (m, c), counts in rows.items()]
    totals = dict.fromkeys(OUTCOMES, 0)
    for counts in rows.values():
        for o in OUTCOMES:
            totals[o] += counts[o]
    body.append(["total", "", str(sum(totals.values()))] + [str(totals[o]) for o in OUTCOMES])
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    fmt = lambda row: "| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths)) + " |"  # noqa: E731
    return "\n".join([fmt(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(fmt, body)])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m multilabel_core.testing.fuzz", description=__doc__.split("\n")[0])
    parser.add_argument("--methods", help="comma-separated method names (default: every registered method)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per case before it is a hang")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes at a time")
    parser.add_argument("--gap-rtol", type=float, default=DEFAULT_GAP_RTOL)
    parser.add_argument("--allow-type-error", action="store_true", help="count TypeError as a clear error")
    parser.add_argument("--plugin", action="append", default=[], help="module to register in the workers")
    parser.add_argument("--json", help="write every case's result to this JSON-lines file")
    parser.add_argument("--failures", action="store_true", help="list the failing cases after the table")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--cases", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker(args.worker, [int(i) for i in args.cases.split(",")], args.gap_rtol, args.allow_type_error, args.plugin)
        return 0
    from multilabel_core import list_methods

    methods = args.methods.split(",") if args.methods else [spec.name for spec in list_methods()]
    results = []
    for method in methods:
        results += run_method(method, timeout=args.timeout, n_workers=args.jobs, gap_rtol=args.gap_rtol,
                              allow_type_error=args.allow_type_error, plugins=args.plugin)  # fmt: skip
    if args.json:
        with open(args.json, "w") as stream:
            for r in results:
                stream.write(json.dumps(r, default=str) + "\n")
    print(count_table(results))
    if args.failures:
        print()
        print(format_failures(results) or "no failing case")
    return 1 if any(r["outcome"] in FAILURES for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
