"""The public engine kit, Python side: what a plugin's dual-CD solver calls around its Cython variant.

A family with a new dual writes three things inside its own plugin package: a ``.pyx`` with a
subclass of the engine's coordinate interface (``from multilabel_core.solvers.kit cimport
DualCoordinates, Rows``, declared in ``multilabel_core/solvers/kit.pxd``), a Python wrapper
that validates its inputs and runs the engine on it with the helpers below, and a
:class:`~multilabel_core.base.Solver` plus a preset that register it.  The PrML plugin's SVM+
dual (``multilabel_core_plugins.prml.svmplus``) and the ranking plugin's dual
(``multilabel_core_plugins.ranking.engine``) are built exactly so; docs/solvers/cd.md walks
through one.

The engine's own modules (``_cd``, ``_kernel_cache``, ``_augmented``) are private and may
move; the names here are the supported ones.

Rows and signs
    :func:`as_rows` turns a validated X into the engine's row access (``DenseRows`` /
    ``SparseRows``, optionally with LIBLINEAR's constant feature); :func:`check_signs` turns
    targets into the float64 signs -1/+1 the duals are written in; :func:`index_array`
    validates an integer index array for a variant's constructor.
Running the engine
    :func:`solve_dual` minimises a variant from its current alpha (the GIL released) and
    reports epochs, updates, shrinking and convergence; :func:`warn_not_converged` reports a
    run that stopped at its budget, as every solver does.
Certificates
    :func:`augmented_adjoint` and :func:`augmented_product` give ``X_a^T V`` and ``X_a c`` for
    ``X_a = [X, bias 1]`` without forming it, so a wrapper can compute its primal and dual
    objectives in numpy from the returned alpha.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import ConvergenceWarning, warn_not_converged
from ..validation import check_signs
from ._augmented import adjoint as augmented_adjoint
from ._augmented import product as augmented_product
from ._cd import solve_dual
from .cd import as_rows

__all__ = [
    "ConvergenceWarning",
    "as_rows",
    "augmented_adjoint",
    "augmented_product",
    "check_signs",
    "index_array",
    "solve_dual",
    "warn_not_converged",
]


def index_array(values, name: str, dtype=np.intp) -> np.ndarray:
    """Return a read-only copy of a 1-D integer array as ``dtype``, for a variant's constructor.

    A Cython variant types its index arrays as ``const Py_ssize_t[::1]`` (or ``int``); this
    refuses what such a memoryview would accept wrongly: floats, other shapes, values that
    the target type cannot hold.  The copy is read-only so that the caller's array can
    change afterwards without touching the variant.

    Parameters
    ----------
    values : array-like of int
        The indices.
    name : str
        The parameter's name, for the error message.
    dtype : numpy dtype, default numpy.intp
        The integer type the variant's memoryview expects.

    Returns
    -------
    ndarray of shape (len(values),)
        A C-contiguous, read-only copy as ``dtype``.

    Raises
    ------
    ValueError
        When ``values`` is not a 1-D integer array, or holds values outside ``dtype``'s range
        (naming ``name``).
    """
    values = np.asarray(values)
    if values.ndim != 1 or values.dtype.kind not in "iu":
        raise ValueError(f"{name} must be a 1-D integer array, got dtype {values.dtype} and shape {values.shape}")
    limits = np.iinfo(dtype)
    # Compared as Python ints: a uint64 maximum against an int64 limit must not wrap.
    if values.size and (int(values.max()) > limits.max or int(values.min()) < limits.min):
        raise ValueError(f"{name} holds values beyond the range of {np.dtype(dtype).name}")
    copy = np.ascontiguousarray(values, dtype=dtype).copy()
    copy.setflags(write=False)
    return copy
