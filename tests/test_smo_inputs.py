"""Input validation of smo_solve and KernelSource, and fuzzing of the Cython entry points.

Malformed inputs (wrong dtypes, non-contiguous arrays, mismatched lengths, NaN) must
raise a clear Python exception, never crash the interpreter; a failing kernel callback
or Ctrl-C must interrupt a solve.
"""

import signal
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from multilabel_core.kernels import LinearKernel, PrecomputedKernel, RBFKernel
from multilabel_core.solvers._kernel_cache import KernelColumns
from multilabel_core.solvers._smo import solve_dual
from multilabel_core.solvers.smo import KernelSource, smo_solve


def small_problem(n=6, n_labels=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    Y = np.where(np.arange(n)[:, None] % 2 == 0, 1.0, -1.0) * np.ones((1, n_labels))
    return RBFKernel(gamma=0.5)(X), Y, np.eye(n_labels)


def replaced(index, value):
    """The arguments of small_problem's smo_solve call with one replaced."""
    K, Y, omega = small_problem()
    arguments = [K, Y, omega, 1.0]
    arguments[index] = value
    return arguments


@pytest.mark.parametrize(
    "arguments, options, message",
    [
        (replaced(0, np.ones((3, 4))), {}, "square"),
        (replaced(0, np.full((6, 6), np.nan)), {}, "NaN"),
        (replaced(0, np.triu(np.ones((6, 6)))), {}, "symmetric"),
        (replaced(0, sp.eye(6, format="csr")), {}, "dense"),
        (replaced(0, RBFKernel()), {}, "KernelSource"),
        (replaced(1, np.ones((5, 2))), {}, "Y has 5 rows"),
        (replaced(1, np.zeros((6, 2))), {}, "signs"),
        (replaced(1, np.full((6, 2), np.nan)), {}, "signs"),
        (replaced(1, np.full((6, 2), "a")), {}, "dtype"),
        (replaced(2, np.eye(3)), {}, r"omega must have shape \(2, 2\)"),
        (replaced(2, np.array([[1.0, np.inf], [np.inf, 1.0]])), {}, "omega contains NaN"),
        (replaced(2, np.array([[1.0, 0.5], [0.0, 1.0]])), {}, "omega must be symmetric"),
        (replaced(3, -1.0), {}, "C must be >= 0"),
        (replaced(3, np.ones((6, 3))), {}, "C must be a number or an array of shape"),
        (replaced(3, np.full((6, 2), np.nan)), {}, "C must be finite"),
        (replaced(3, 1.0), {"alpha0": np.full((6, 2), 2.0)}, "box"),
        (replaced(3, 1.0), {"alpha0": np.eye(6, 2)}, "equality constraints"),
        (replaced(3, 1.0), {"alpha0": np.zeros((6, 3))}, "alpha0 must have shape"),
        (replaced(3, 1.0), {"alpha0": np.full((6, 2), np.nan)}, "alpha0 contains NaN"),
        (replaced(3, 1.0), {"tol": 0.0}, "tol must be > 0"),
        (replaced(3, 1.0), {"max_iter": -1}, "max_iter must be >= 0"),
        (replaced(3, 1.0), {"max_iter": 2.5}, "max_iter must be a Integral"),
        (replaced(3, 1.0), {"cache_size": 0.0}, "cache_size must be > 0"),
        (replaced(3, 1.0), {"shrinking": "yes"}, "shrinking must be a bool"),
        ([1e300 * (np.ones((2, 2)) + np.eye(2)), np.array([[1.0], [-1.0]]), np.eye(1), 1e10],
         {"alpha0": np.full((2, 1), 1e10)}, "overflowed"),
    ],
)
def test_bad_inputs_raise_value_errors(arguments, options, message):
    with pytest.raises(ValueError, match=message):
        smo_solve(*arguments, **options)


def test_non_contiguous_and_other_dtypes_are_converted():
    K, Y, omega = small_problem()
    reference = smo_solve(K, Y, omega, 1.0, tol=1e-10)
    converted = smo_solve(np.asfortranarray(K).astype(np.float32).astype(np.float64), Y.astype(np.int8),
                          np.asfortranarray(omega), np.full((6, 2), 1.0)[:, ::1], tol=1e-10)
    strided = smo_solve(np.repeat(np.repeat(K, 2, axis=0), 2, axis=1)[::2, ::2], Y[:, ::1].T.copy().T, omega,
                        1.0, tol=1e-10)
    for result in (converted, strided):
        np.testing.assert_allclose(result.solution.dual, reference.solution.dual, atol=1e-12)


def test_kernel_source_checks_its_kernel():
    X = np.ones((4, 2))
    with pytest.raises(ValueError, match="precomputed kernel is passed to smo_solve as the matrix"):
        KernelSource(PrecomputedKernel(), X)
    with pytest.raises(TypeError):
        KernelSource("rbf", X)
    with pytest.raises(ValueError, match="NaN"):
        KernelSource(LinearKernel(), np.full((4, 2), np.nan))

    class NoDiagonal(LinearKernel):
        diagonal = None

    with pytest.raises(ValueError, match="diagonal"):
        KernelSource(NoDiagonal(), X)


def test_unresolved_kernel_fails_clearly():
    X = np.random.default_rng(0).standard_normal((6, 2))
    Y = np.array([[1.0], [-1.0]] * 3)
    with pytest.raises(ValueError, match="resolve"):
        smo_solve(KernelSource(RBFKernel(), X), Y, np.eye(1), 1.0)


# -- the Cython entry points ------------------------------------------------------------

DTYPES = st.sampled_from([np.float64, np.float32, np.int64, np.int8, np.complex128])


@st.composite
def malformed_arrays(draw, shape):
    """An array meant to have ``shape``: maybe another dtype, layout, shape, or a NaN."""
    kind = draw(st.sampled_from(["good", "dtype", "fortran", "strided", "shape", "nan"]))
    shape = tuple(shape)
    if kind == "shape":
        shape = tuple(max(0, s + draw(st.integers(-1, 1))) for s in shape) + draw(st.sampled_from([(), (1,)]))
    array = draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([-1.0, 1.0])))
    if kind == "dtype":
        array = array.astype(draw(DTYPES))
    elif kind == "fortran" and array.ndim == 2:
        array = np.asfortranarray(array.T.copy()).T if array.shape[0] > 1 else np.asfortranarray(array)
    elif kind == "strided":
        array = np.repeat(array, 2, axis=-1)[..., ::2]
    elif kind == "nan" and array.size:
        array = array.copy()
        array.flat[draw(st.integers(0, array.size - 1))] = np.nan
    return array


@given(st.integers(1, 5), st.integers(1, 3), st.data())
def test_solve_dual_never_crashes(n, n_labels, data):
    y = data.draw(malformed_arrays((n_labels, n)), label="y")
    omega = data.draw(malformed_arrays((n_labels, n_labels)), label="omega")
    C = np.abs(data.draw(malformed_arrays((n_labels, n)), label="C"))
    alpha = data.draw(st.sampled_from([np.zeros((n_labels, n)), np.ones((n_labels, n)), np.zeros((n, n_labels))]))
    try:
        outcome = solve_dual(KernelColumns(np.eye(n)), y, omega, C, alpha, 1e-6, 1000)
    except (ValueError, TypeError):
        return
    # Accepted inputs were well formed: a real solution came back.
    assert outcome["f"].shape == (y.shape[0], n) and np.all(np.isfinite(outcome["f"]))


@given(st.integers(1, 5), st.data())
def test_kernel_columns_never_crash(n, data):
    matrix = data.draw(malformed_arrays((n, n)), label="K")
    try:
        columns = KernelColumns(matrix)
    except (ValueError, TypeError):
        return
    assert columns.n_samples == matrix.shape[0] and np.array_equal(columns.get_column(0), matrix[:, 0])


@pytest.mark.parametrize(
    "arguments, error",
    [
        (dict(matrix=np.ones((2, 3))), ValueError),
        (dict(matrix=np.ones((0, 0))), ValueError),
        (dict(matrix=np.ones((3, 3), dtype=np.float32)), ValueError),
        (dict(matrix=np.asfortranarray(np.arange(9.0).reshape(3, 3) + np.arange(9.0).reshape(3, 3).T)[:, ::-1]), ValueError),
        (dict(), ValueError),
        (dict(matrix=np.eye(2), compute=print), ValueError),
        (dict(compute=print), ValueError),
        (dict(compute=1, diagonal=np.ones(3), capacity=2), ValueError),
        (dict(compute=print, diagonal=np.ones(3), capacity=1), ValueError),
        (dict(compute=print, diagonal=np.array([1.0, np.nan]), capacity=2), ValueError),
        (dict(compute=print, diagonal=np.ones((2, 2)), capacity=2), ValueError),
    ],
)
def test_kernel_columns_refuses_malformed_input(arguments, error):
    with pytest.raises(error):
        KernelColumns(**arguments)


def test_solve_dual_refuses_a_missing_kernel_and_bad_scalars():
    y = np.array([[1.0, -1.0]])
    args = (y, np.eye(1), np.ones((1, 2)), np.zeros((1, 2)))
    with pytest.raises(TypeError):
        solve_dual(None, *args, 1e-3, 10)
    with pytest.raises(ValueError, match="tol"):
        solve_dual(KernelColumns(np.eye(2)), *args, float("nan"), 10)
    with pytest.raises(ValueError, match="max_iter"):
        solve_dual(KernelColumns(np.eye(2)), *args, 1e-3, -5)
    alpha = np.zeros((1, 2))
    alpha.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        solve_dual(KernelColumns(np.eye(2)), *args[:3], alpha, 1e-3, 10)


def test_a_failing_kernel_callback_stops_the_solve_and_leaves_the_cache_usable():
    K, Y, omega = small_problem()
    calls = []

    def compute(j, out):
        calls.append(j)
        if len(calls) == 3:
            raise RuntimeError("kernel failed")
        out[:] = K[:, j]

    columns = KernelColumns(compute=compute, diagonal=np.diag(K).copy(), capacity=2)
    with pytest.raises(RuntimeError, match="kernel failed"):
        solve_dual(columns, Y.T.copy(), omega, np.ones((2, 6)), np.zeros((2, 6)), 1e-8, 1000)
    for j in range(6):
        np.testing.assert_array_equal(columns.get_column(j), K[:, j])
    with pytest.raises(IndexError):
        columns.get_column(6)


def test_lru_cache_evicts_the_least_recently_used_column():
    K = np.arange(16.0).reshape(4, 4)
    K = K + K.T
    computed = []

    def compute(j, out):
        computed.append(j)
        out[:] = K[:, j]

    columns = KernelColumns(compute=compute, diagonal=np.diag(K).copy(), capacity=2)
    for j in [0, 1, 0, 2, 0, 1]:
        np.testing.assert_array_equal(columns.get_column(j), K[:, j])
    # 2 evicts 1 (0 was used more recently), then 1 evicts 2.
    assert computed == [0, 1, 2, 1]
    assert (columns.hits, columns.misses) == (2, 4)


def test_ctrl_c_interrupts_a_long_solve(python_sigint_handler):
    rng = np.random.default_rng(3)
    n = 1000
    X = rng.standard_normal((n, 10))
    Y = np.where(rng.random((n, 2)) < 0.5, -1.0, 1.0)
    K = RBFKernel(gamma=0.05)(X)
    timer = threading.Timer(0.2, signal.raise_signal, (signal.SIGINT,))
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            # The finest tolerance accepted, on random labels with a wide kernel and C = 1e5: the solve
            # runs its 2e6 steps (about 7 s here), far past the 0.2 s of the signal.
            smo_solve(K, Y, np.eye(2), 1e5, tol=1e-15, max_iter=2 * 10**6)
    finally:
        timer.cancel()
    assert time.perf_counter() - start < 5.0


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("where", [(0, 0), (5, 700), (1099, 3), (1099, 1099), (1030, 1070)])
@pytest.mark.parametrize("defect", ["nan", "inf", "asymmetry"])
def test_the_tiled_check_finds_a_defect_anywhere_on_any_thread_count(where, defect, n_jobs):
    # 1100 rows: past the size (1024) where the check runs on threads, 18 tile rows of 64 with a
    # partial last one; each thread claims rows as it goes, so every row must be covered once.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1100, 4))
    K = RBFKernel(gamma=0.3)(X)
    KernelColumns(K, n_jobs=n_jobs)  # the clean matrix passes
    i, j = where
    if defect == "asymmetry":
        if i == j:  # the diagonal cannot be asymmetric: its neighbour in the same tile
            j = j - 1
        K[i, j] += 1e-3
        message = "symmetric"
    else:
        K[i, j] = np.nan if defect == "nan" else np.inf
        message = "NaN or infinity"
    with pytest.raises(ValueError, match=message):
        KernelColumns(K, n_jobs=n_jobs)


def test_the_tiled_check_reports_the_largest_asymmetry_whatever_the_threads():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((1300, 3))
    K = RBFKernel(gamma=0.5)(X)
    K[1290, 17] += 0.25
    K[40, 900] += 0.5
    messages = set()
    for n_jobs in (1, 2, 3):
        with pytest.raises(ValueError, match="symmetric") as error:
            KernelColumns(K, n_jobs=n_jobs)
        messages.add(str(error.value))
    assert messages == {"the kernel matrix must be symmetric (largest |K_ij - K_ji| = 0.5)"}
