"""Malformed inputs to the SVM+ variant: a clear Python exception every time, never a crash.

Two entry points: the validated wrapper :func:`svmplus_cd` (ValueError naming the problem) and the
Cython constructor :class:`SVMPlusDual` (ValueError or TypeError before any nogil code runs).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core.solvers._cd import DenseRows, SparseRows, solve_dual
from multilabel_core_plugins.prml._cd_svmplus import SVMPlusDual
from multilabel_core_plugins.prml.svmplus import svmplus_cd
from multilabel_core.testing.strategies import feature_matrices, sign_matrices


@st.composite
def valid_calls(draw):
    n, n_labels = draw(st.integers(2, 6)), draw(st.integers(1, 3))
    X = draw(feature_matrices(n, st.integers(1, 3), sparse=None))
    X_priv = draw(feature_matrices(n, st.integers(1, 3), sparse=None))
    return {
        "X": X, "X_priv": X_priv, "Y": draw(sign_matrices(n, n_labels)), "C": 1.0, "gamma": 1.0,
        "embedding": np.ones((2, n_labels)), "privileged_mask": np.ones((n_labels, X_priv.shape[1]), dtype=bool),
        "alpha0": np.zeros((n, n_labels)), "beta0": np.zeros((n, n_labels)), "tol": 0.1, "max_iter": 10,
    }


def _dense(matrix):
    return matrix.toarray() if sp.issparse(matrix) else np.asarray(matrix)


def _with(name, value):
    return lambda call: dict(call, **{name: value})


def _first_entry(name, value):
    def corrupt(call):
        array = np.array(_dense(call[name]), dtype=np.float64)
        array.flat[0] = value
        return dict(call, **{name: array})
    return corrupt


WRAPPER_CORRUPTIONS = {
    "X with NaN": _first_entry("X", np.nan),
    "X 1-D": lambda call: dict(call, X=np.ravel(_dense(call["X"]))),
    "X of strings": lambda call: dict(call, X=np.full(call["X"].shape, "a")),
    "X complex": lambda call: dict(call, X=_dense(call["X"]) + 1j),
    "X_priv with infinity": _first_entry("X_priv", np.inf),
    "X_priv rows mismatch": lambda call: dict(call, X_priv=_dense(call["X_priv"])[:-1]),
    "Y with a 0": _first_entry("Y", 0.0),
    "Y with NaN": _first_entry("Y", np.nan),
    "Y rows mismatch": lambda call: dict(call, Y=call["Y"][:-1]),
    "Y 3-D": lambda call: dict(call, Y=call["Y"][:, :, None]),
    "C zero": _with("C", 0.0),
    "C NaN": _with("C", np.nan),
    "gamma negative": _with("gamma", -1.0),
    "gamma infinite": _with("gamma", np.inf),
    "tol zero": _with("tol", 0.0),
    "max_iter zero": _with("max_iter", 0),
    "privileged_intercept not a flag": _with("privileged_intercept", 1),
    "embedding wrong shape": lambda call: dict(call, embedding=np.ones((2, call["Y"].shape[1] + 1))),
    "embedding NaN": _first_entry("embedding", np.nan),
    "embedding 1-D": lambda call: dict(call, embedding=np.ones(call["Y"].shape[1])),
    "embedding of strings": lambda call: dict(call, embedding=np.full((2, call["Y"].shape[1]), "a")),
    "mask wrong shape": lambda call: dict(call, privileged_mask=call["privileged_mask"][:, :-1]),
    "mask with a 2": _first_entry("privileged_mask", 2.0),
    "mask NaN": _first_entry("privileged_mask", np.nan),
    "alpha0 wrong shape": lambda call: dict(call, alpha0=call["alpha0"][:-1]),
    "alpha0 negative": _first_entry("alpha0", -1.0),
    "beta0 NaN": _first_entry("beta0", np.nan),
    "random_state string": _with("random_state", "seed"),
}


@pytest.mark.parametrize("corruption", sorted(WRAPPER_CORRUPTIONS))
@given(call=valid_calls())
def test_the_wrapper_refuses_malformed_input_with_a_value_error(call, corruption):
    with pytest.raises(ValueError):
        svmplus_cd(**WRAPPER_CORRUPTIONS[corruption](call))


@st.composite
def valid_parts(draw):
    """Arguments SVMPlusDual accepts: dense or CSR rows, privileged rows with their constant feature, A or I."""
    n, n_labels = draw(st.integers(2, 6)), draw(st.integers(1, 3))
    d, d_priv = draw(st.integers(1, 3)), draw(st.integers(2, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.standard_normal((n, d))
    matrix = sp.csr_matrix(X)
    rows = SparseRows(matrix.data, matrix.indices, matrix.indptr, d) if draw(st.booleans()) else DenseRows(X)
    A = rng.standard_normal((2, n_labels)) if draw(st.booleans()) else None
    k = n_labels if A is None else 2
    return {
        "rows": rows, "privileged": DenseRows(rng.standard_normal((n, d_priv)), 1.0),
        "y": np.where(rng.random((n, n_labels)) < 0.5, 1.0, -1.0), "A": A,
        # label i drops privileged column i % d_priv
        "excluded_indptr": np.arange(n_labels + 1), "excluded": np.arange(n_labels) % d_priv,
        "C": 1.0, "gamma": 1.0, "eta": np.zeros(2 * n * n_labels), "M": np.zeros((d, k)),
        "W_tilde": np.zeros((n_labels, d_priv + 1)),
    }


def _replace(name, make):
    return lambda parts: dict(parts, **{name: make(parts[name])})


CONSTRUCTOR_CORRUPTIONS = {
    "rows None": _replace("rows", lambda a: None),
    "privileged None": _replace("privileged", lambda a: None),
    "rows not Rows": _replace("rows", lambda a: np.zeros((a.n_rows, a.n_columns))),
    "rows of another size": _replace("rows", lambda a: DenseRows(np.ones((a.n_rows + 1, a.n_columns)))),
    "y with a 0": _replace("y", lambda a: np.where(np.arange(a.size).reshape(a.shape) == 0, 0.0, a)),
    "y NaN": _replace("y", lambda a: np.full_like(a, np.nan)),
    "y float32": _replace("y", lambda a: a.astype(np.float32)),
    "y Fortran order": _replace("y", lambda a: np.asfortranarray(np.hstack([a, a]))),
    "y one row short": _replace("y", lambda a: a[:-1].copy()),
    "A wrong width": lambda parts: dict(parts, A=np.ones((2, parts["y"].shape[1] + 1))),
    "A NaN": lambda parts: dict(parts, A=np.full((2, parts["y"].shape[1]), np.nan),
                                M=np.zeros((parts["M"].shape[0], 2))),
    "excluded_indptr short": _replace("excluded_indptr", lambda a: a[:-1]),
    "excluded_indptr falling": _replace("excluded_indptr", lambda a: a[::-1].copy()),
    "excluded_indptr float": _replace("excluded_indptr", lambda a: a.astype(np.float64)),
    "excluded negative": _replace("excluded", lambda a: a - 10),
    "excluded past the columns": _replace("excluded", lambda a: a + 10),
    "excluded one short": _replace("excluded", lambda a: a[:-1]),
    "C zero": _replace("C", lambda a: 0.0),
    "C NaN": _replace("C", lambda a: np.nan),
    "gamma zero": _replace("gamma", lambda a: 0.0),
    "gamma infinite": _replace("gamma", lambda a: np.inf),
    "eta negative": _replace("eta", lambda a: np.full_like(a, -1.0)),
    "eta NaN": _replace("eta", lambda a: np.full_like(a, np.nan)),
    "eta half": _replace("eta", lambda a: a[: a.size // 2].copy()),
    "eta not contiguous": _replace("eta", lambda a: np.repeat(a, 2)[::2]),
    "M wrong shape": _replace("M", lambda a: np.zeros((a.shape[0] + 1, a.shape[1]))),
    "W_tilde without the constant column": _replace("W_tilde", lambda a: a[:, :-1].copy()),
    "W_tilde None": _replace("W_tilde", lambda a: None),
}


@pytest.mark.parametrize("corruption", sorted(CONSTRUCTOR_CORRUPTIONS))
@given(parts=valid_parts())
def test_the_cython_constructor_refuses_malformed_input(parts, corruption):
    parts = CONSTRUCTOR_CORRUPTIONS[corruption](parts)
    with pytest.raises((ValueError, TypeError)):
        SVMPlusDual(**parts)


@given(valid_parts())
def test_the_valid_parts_construct_and_solve(parts):
    """The corruptions above start from arguments the constructor accepts and the engine solves."""
    report = solve_dual(SVMPlusDual(**parts), tol=1e-3, max_iter=100_000, shrinking=True, seed=0)
    assert report["converged"] and np.all(parts["eta"] >= 0.0)
    excluded_of_label = parts["excluded"]  # one excluded column per label here
    assert np.all(parts["W_tilde"][np.arange(excluded_of_label.size), excluded_of_label] == 0.0)


@given(valid_parts())
def test_the_indices_are_copied_at_construction(parts):
    pristine = dict(parts, excluded=parts["excluded"].copy(), eta=parts["eta"].copy(), M=parts["M"].copy(),
                    W_tilde=parts["W_tilde"].copy())
    problem = SVMPlusDual(**parts)
    parts["excluded"][:] = 10**9  # would write far outside w~ if the variant kept the caller's array
    solve_dual(problem, tol=1e-3, max_iter=1000, shrinking=False, seed=0)
    solve_dual(SVMPlusDual(**pristine), tol=1e-3, max_iter=1000, shrinking=False, seed=0)
    np.testing.assert_array_equal(parts["eta"], pristine["eta"])  # exact: same code, equal inputs, one process
