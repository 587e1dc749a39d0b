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
from . import _cd
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


def solve_dual(problem, *, tol: float, max_iter: int, shrinking: bool, seed: int, record_dual: bool = False,
               face_steps: bool = True) -> dict:
    """Run the dual coordinate-descent engine on a variant from its current alpha, the GIL released.

    LIBLINEAR's dual coordinate descent (Hsieh, Chang, Lin, Keerthi & Sundararajan, *A dual
    coordinate descent method for large-scale linear SVM*, ICML 2008, Algorithm 3): a random
    permutation of the active coordinates per epoch, shrinking, and a stop when every projected
    gradient of a full pass lies in [-tol, tol] (docs/solvers/cd.md, "The engine").

    Parameters
    ----------
    problem : DualCoordinates
        The variant (a ``cdef class`` deriving from ``multilabel_core.solvers.kit.DualCoordinates``),
        constructed, so that its alpha and maintained vectors are set; alpha is updated in place.
    tol : float
        The projected-gradient tolerance (finite, >= 0).
    max_iter : int
        Most epochs (>= 1); reaching it leaves ``converged`` False.
    shrinking : bool
        Drop coordinates stuck at a bound (restored before the final check).
    seed : int
        Seed of this call's own random stream (0 <= seed < 2**64).
    record_dual : bool, default False
        Record f after every epoch.
    face_steps : bool, default True
        Interleave the variant's face steps, when it offers them.

    Returns
    -------
    dict
        ``n_epochs``, ``n_updates``, ``n_visits``, ``n_shrunk``, ``n_resets``, ``min_active``,
        ``spread`` (PGmax - PGmin of the last epoch), ``n_face_steps``, ``converged``,
        ``kkt_violation`` (max |PG| over all coordinates at the end), ``objective`` (f at the
        end, minimisation form) and ``dual_trace`` (f after every epoch with ``record_dual``,
        else None).

    Raises
    ------
    ValueError
        For an uninitialised variant, a ``tol`` or ``max_iter`` out of range, or a coordinate
        with zero curvature whose bound in its descent direction is infinite (f unbounded below).
    KeyboardInterrupt
        On Ctrl-C, or the cancellation of the label-thread pool running the solve.
    """
    return _cd.solve_dual(problem, tol=tol, max_iter=max_iter, shrinking=shrinking, seed=seed,
                          record_dual=record_dual, face_steps=face_steps)
