"""Malformed inputs to the CD engine's Cython entry points and wrappers: a clear exception, never a crash."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from multilabel_core.losses import Logistic
from multilabel_core.solvers import _cd, box_kernel_cd, linear_svm_cd

#: What a malformed input may raise: memoryview typing gives ValueError (dtype, contiguity,
#: read-only) or TypeError (not a buffer); our checks give ValueError.
REFUSED = (ValueError, TypeError)

X = np.array([[1.0, 0.0, 2.0], [0.0, -1.0, 0.5], [3.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
Y = np.array([1.0, -1.0, 1.0, -1.0])
CSR = sp.csr_matrix(X)


def rows():
    return _cd.DenseRows(X)


def linear(**changes):
    arguments = {"rows": rows(), "y": Y, "alpha": np.zeros(4), "w": np.zeros(3), "upper": 1.0, "diagonal": 0.0}
    arguments |= changes
    return _cd.LinearSVMDual(*arguments.values())


def kernel(**changes):
    arguments = {"K": X @ X.T, "y": Y, "alpha": np.zeros(4), "scores": np.zeros(4), "upper": 1.0, "diagonal": 0.0}
    arguments |= changes
    return _cd.BoxKernelDual(*arguments.values())


def sparse_rows(**changes):
    arguments = {"data": CSR.data, "indices": CSR.indices, "indptr": CSR.indptr, "n_columns": 3, "bias": 0.0}
    arguments |= changes
    return _cd.SparseRows(*arguments.values())


MALFORMED = {
    "dense float32": lambda: _cd.DenseRows(X.astype(np.float32)),
    "dense int": lambda: _cd.DenseRows(X.astype(np.int64)),
    "dense Fortran order": lambda: _cd.DenseRows(np.asfortranarray(X)),
    "dense strided": lambda: _cd.DenseRows(X[:, ::2]),
    "dense 1-D": lambda: _cd.DenseRows(X[0]),
    "dense NaN": lambda: _cd.DenseRows(np.where(X > 2, np.nan, X)),
    "dense inf": lambda: _cd.DenseRows(np.where(X > 2, np.inf, X)),
    "dense None": lambda: _cd.DenseRows(None),
    "dense object": lambda: _cd.DenseRows(X.astype(object)),
    "negative bias": lambda: _cd.DenseRows(X, -1.0),
    "NaN bias": lambda: _cd.DenseRows(X, np.nan),
    "sparse float indices": lambda: sparse_rows(indices=CSR.indices.astype(float)),
    "sparse index out of range": lambda: sparse_rows(indices=np.where(CSR.indices == 2, 3, CSR.indices)),
    "sparse negative index": lambda: sparse_rows(indices=np.where(CSR.indices == 2, -1, CSR.indices)),
    "sparse unsorted row": lambda: sparse_rows(indices=np.array([2, 0, 1, 2, 0, 1, 2])),
    "sparse duplicate index": lambda: sparse_rows(indices=np.array([0, 0, 1, 2, 0, 1, 2])),
    "sparse short indices": lambda: sparse_rows(indices=CSR.indices[:-1]),
    "sparse indptr not from 0": lambda: sparse_rows(indptr=CSR.indptr + 1),
    "sparse indptr decreasing": lambda: sparse_rows(indptr=np.array([0, 3, 2, 6, 7])),
    "sparse indptr past nnz": lambda: sparse_rows(indptr=np.array([0, 2, 4, 6, 9])),
    "sparse empty indptr": lambda: sparse_rows(indptr=np.array([], dtype=np.int64)),
    "sparse 2-D indptr": lambda: sparse_rows(indptr=CSR.indptr[None, :]),
    "sparse NaN data": lambda: sparse_rows(data=np.where(CSR.data > 2, np.nan, CSR.data)),
    "sparse negative columns": lambda: sparse_rows(n_columns=-1),
    "sparse columns beyond 32-bit indices": lambda: sparse_rows(n_columns=2**31),
    "sparse index beyond 32 bits": lambda: sparse_rows(
        indices=np.where(CSR.indices == 2, np.int64(2**32 + 2), CSR.indices.astype(np.int64))
    ),
    "sparse float32 data": lambda: sparse_rows(data=CSR.data.astype(np.float32)),
    "y too short": lambda: linear(y=Y[:3]),
    "y not signs": lambda: linear(y=np.array([1.0, 0.0, 1.0, -1.0])),
    "y NaN": lambda: linear(y=np.array([1.0, np.nan, 1.0, -1.0])),
    "y int": lambda: linear(y=Y.astype(np.int64)),
    "y strided": lambda: linear(y=np.repeat(Y, 2)[::2]),
    "alpha too long": lambda: linear(alpha=np.zeros(5)),
    "alpha negative": lambda: linear(alpha=np.array([0.0, -0.1, 0.0, 0.0])),
    "alpha above upper": lambda: linear(alpha=np.array([0.0, 1.5, 0.0, 0.0])),
    "alpha NaN": lambda: linear(alpha=np.array([0.0, np.nan, 0.0, 0.0])),
    "alpha read-only": lambda: linear(alpha=_read_only(4)),
    "w wrong length": lambda: linear(w=np.zeros(4)),
    "upper zero": lambda: linear(upper=0.0),
    "upper negative": lambda: linear(upper=-1.0),
    "upper NaN": lambda: linear(upper=np.nan),
    "upper inf without a diagonal": lambda: linear(upper=np.inf),
    "upper text": lambda: linear(upper="1"),
    "diagonal negative": lambda: linear(diagonal=-0.5),
    "diagonal NaN": lambda: linear(diagonal=np.nan),
    "diagonal inf": lambda: linear(diagonal=np.inf, upper=np.inf),
    "diagonal text": lambda: linear(diagonal="0"),
    "kernel upper inf without a diagonal": lambda: kernel(upper=np.inf),
    "kernel diagonal negative": lambda: kernel(diagonal=-1.0),
    "rows None": lambda: linear(rows=None),
    "rows of the wrong type": lambda: linear(rows=X),
    "K not square": lambda: kernel(K=np.ones((4, 3))),
    "K asymmetric": lambda: kernel(K=np.triu(X @ X.T)),
    "K negative diagonal": lambda: kernel(K=-(X @ X.T)),
    "K NaN": lambda: kernel(K=np.where(X @ X.T > 5, np.nan, X @ X.T)),
    "K and y mismatched": lambda: kernel(y=Y[:3]),
    "scores too short": lambda: kernel(scores=np.zeros(3)),
    "K float32": lambda: kernel(K=(X @ X.T).astype(np.float32)),
}


def _read_only(size):
    array = np.zeros(size)
    array.setflags(write=False)
    return array


@pytest.mark.parametrize("build", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_constructor_arguments_are_refused(build):
    with pytest.raises(REFUSED):
        build()


@pytest.mark.parametrize(
    "settings",
    [{"tol": -1.0}, {"tol": np.nan}, {"tol": np.inf}, {"max_iter": 0}, {"seed": -1}, {"seed": 2**64}, {"tol": "x"}],
)
def test_malformed_engine_settings_are_refused(settings):
    with pytest.raises(REFUSED + (OverflowError,)):
        _cd.solve_dual(linear(), **({"tol": 0.1, "max_iter": 10, "shrinking": True, "seed": 0} | settings))


def test_an_unset_or_missing_problem_is_refused():
    with pytest.raises(REFUSED):
        _cd.solve_dual(None, tol=0.1, max_iter=10, shrinking=True, seed=0)
    with pytest.raises(ValueError, match="not initialised"):
        _cd.solve_dual(_cd.LinearSVMDual.__new__(_cd.LinearSVMDual), tol=0.1, max_iter=10, shrinking=True, seed=0)


WRAPPER_CASES = {
    "X with NaN": lambda: linear_svm_cd(np.where(X > 2, np.nan, X), Y[:, None]),
    "X 1-D": lambda: linear_svm_cd(X[0], Y[:, None]),
    "Y 1-D": lambda: linear_svm_cd(X, Y),
    "Y of 0/1": lambda: linear_svm_cd(X, (Y[:, None] > 0).astype(float)),
    "Y rows mismatch": lambda: linear_svm_cd(X, Y[:3, None]),
    "Y of text": lambda: linear_svm_cd(X, np.array([["a"], ["b"], ["a"], ["b"]])),
    "C negative": lambda: linear_svm_cd(X, Y[:, None], -1.0),
    "C per label of the wrong length": lambda: linear_svm_cd(X, Y[:, None], np.ones(2)),
    "C per label with a zero": lambda: linear_svm_cd(X, np.column_stack([Y, Y]), np.array([1.0, 0.0])),
    "C per label with NaN": lambda: linear_svm_cd(X, np.column_stack([Y, Y]), np.array([1.0, np.nan])),
    "C per label of text": lambda: linear_svm_cd(X, np.column_stack([Y, Y]), np.array(["a", "b"])),
    "unknown loss": lambda: linear_svm_cd(X, Y[:, None], loss="logistic"),
    "loss object without dual_diagonal": lambda: linear_svm_cd(X, Y[:, None], loss=Logistic()),
    "alpha0 outside one label's box": lambda: linear_svm_cd(
        X, np.column_stack([Y, Y]), np.array([2.0, 1.0]), alpha0=np.full((4, 2), 1.5)
    ),
    "tol zero": lambda: linear_svm_cd(X, Y[:, None], tol=0.0),
    "max_iter float": lambda: linear_svm_cd(X, Y[:, None], max_iter=1.5),
    "shrinking text": lambda: linear_svm_cd(X, Y[:, None], shrinking="no"),
    "bad random_state": lambda: linear_svm_cd(X, Y[:, None], random_state="seed"),
    "alpha0 shape": lambda: linear_svm_cd(X, Y[:, None], alpha0=np.zeros(4)),
    "alpha0 outside box": lambda: linear_svm_cd(X, Y[:, None], alpha0=np.full((4, 1), 2.0)),
    "alpha0 NaN": lambda: linear_svm_cd(X, Y[:, None], alpha0=np.full((4, 1), np.nan)),
    "intercept_scaling zero": lambda: linear_svm_cd(X, Y[:, None], fit_intercept=True, intercept_scaling=0.0),
    "fit_intercept text": lambda: linear_svm_cd(X, Y[:, None], fit_intercept="yes"),
    "K not square": lambda: box_kernel_cd(np.ones((4, 3)), Y[:, None]),
    "K stack of the wrong size": lambda: box_kernel_cd(np.stack([X @ X.T] * 3), np.column_stack([Y, Y])),
    "K complex": lambda: box_kernel_cd((X @ X.T).astype(complex), Y[:, None]),
    "K of text": lambda: box_kernel_cd(np.full((4, 4), "a"), Y[:, None]),
    "K asymmetric": lambda: box_kernel_cd(np.triu(X @ X.T), Y[:, None]),
}


@pytest.mark.parametrize("call", WRAPPER_CASES.values(), ids=WRAPPER_CASES.keys())
def test_malformed_wrapper_arguments_raise_value_errors(call):
    with pytest.raises(ValueError):
        call()


# -- fuzzing: arbitrary arrays into every constructor, then the engine --------------------

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.int8, np.bool_, np.complex128]


@st.composite
def arbitrary_arrays(draw, max_dims=2):
    """Any small array: any of DTYPES, 0 to ``max_dims`` dimensions, maybe strided, maybe with NaN/inf."""
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=5))
    elements = None
    if np.issubdtype(dtype, np.floating):
        elements = st.floats(allow_nan=True, allow_infinity=True, width=np.dtype(dtype).itemsize * 8)
    array = draw(hnp.arrays(dtype, shape, elements=elements))
    if array.ndim and draw(st.booleans()):
        array = array[::2]
    return array


def signs_or_garbage(n):
    return st.one_of(arbitrary_arrays(max_dims=1), st.just(np.where(np.arange(n) % 2 == 0, 1.0, -1.0)))


def vectors_or_garbage(n):
    return st.one_of(arbitrary_arrays(max_dims=1), st.just(np.zeros(n)))


costs = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3), st.none())
# Valid diagonals of the losses' scale, and garbage; a valid but vanishing diagonal with no bound
# (D = 1e-320, upper = inf) overflows a step by design and is not a malformed input.
diagonals = st.one_of(
    st.sampled_from([0.0, 0.5, 2.0, np.nan, np.inf]), st.floats(max_value=0.0), st.integers(-3, 3), st.none()
)


def run_if_built(build):
    """Build; when the arguments were accepted, the engine must run and report finite numbers."""
    try:
        problem = build()
    except REFUSED:
        return
    report = _cd.solve_dual(problem, tol=1e-3, max_iter=50, shrinking=True, seed=0)
    assert np.isfinite(report["kkt_violation"]) and np.isfinite(report["objective"])


@given(arbitrary_arrays(), st.booleans(), signs_or_garbage(4), vectors_or_garbage(4), vectors_or_garbage(3), costs)
def test_fuzz_linear_dual(X_like, sparse, y, alpha, w, C):
    def build():
        source = sparse_rows() if sparse else _cd.DenseRows(X_like)
        return _cd.LinearSVMDual(source, y, alpha, w, C, 0.0)

    run_if_built(build)


@given(arbitrary_arrays(max_dims=1), arbitrary_arrays(max_dims=1), arbitrary_arrays(max_dims=1), st.integers(-2, 5))
def test_fuzz_sparse_rows(data, indices, indptr, n_columns):
    def build():
        source = _cd.SparseRows(data, indices, indptr, n_columns, 1.0)
        n = source.n_rows
        return _cd.LinearSVMDual(source, np.ones(n), np.zeros(n), np.zeros(source.dimension), np.inf, 0.5)

    run_if_built(build)


@given(arbitrary_arrays(), signs_or_garbage(4), vectors_or_garbage(4), vectors_or_garbage(4), costs, diagonals)
def test_fuzz_kernel_dual(K, y, alpha, scores, upper, diagonal):
    run_if_built(lambda: _cd.BoxKernelDual(K, y, alpha, scores, upper, diagonal))
