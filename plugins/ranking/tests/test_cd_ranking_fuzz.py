"""Malformed inputs to the ranking variant: a clear Python exception every time, never a crash.

Two entry points: the validated wrapper :func:`ranking_cd` (ValueError naming the problem) and the
Cython constructor :class:`RankingDual` (ValueError or TypeError before any nogil code runs).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core.solvers._cd import DenseRows, SparseRows, solve_dual
from multilabel_core.losses import ranking_pairs
from multilabel_core_plugins.ranking._cd_ranking import RankingDual
from multilabel_core_plugins.ranking.engine import ranking_cd
from multilabel_core.testing.strategies import multilabel_problems


def valid_call(X, Y):
    n_pairs = ranking_pairs(Y)[0].size
    return {"X": X, "Y": Y, "C": 1.0, "R_inv": np.eye(Y.shape[1]), "feature_weights": np.ones(X.shape[1]),
            "alpha0": np.zeros(n_pairs), "tol": 0.1, "max_iter": 10}


def _with(name, value):
    return lambda call: dict(call, **{name: value})


def _dense(matrix):
    return matrix.toarray() if sp.issparse(matrix) else np.asarray(matrix)


def _replace_first(name, value):
    def corrupt(call):
        array = np.array(_dense(call[name]))
        array.flat[0] = value
        return dict(call, **{name: array})
    return corrupt


def _nan_in(name):
    def corrupt(call):
        array = np.array(_dense(call[name]), dtype=np.float64)
        array.flat[0] = np.nan
        return dict(call, **{name: array})
    return corrupt


WRAPPER_CORRUPTIONS = {
    "X with NaN": _nan_in("X"),
    "X 1-D": lambda call: dict(call, X=np.ravel(_dense(call["X"]))),
    "X of strings": lambda call: dict(call, X=np.full(call["X"].shape, "a")),
    "X complex": lambda call: dict(call, X=_dense(call["X"]) + 1j),
    "Y with a 2": _replace_first("Y", 2),
    "Y with NaN": _nan_in("Y"),
    "Y rows mismatch": lambda call: dict(call, Y=call["Y"][:-1]),
    "Y one label": lambda call: dict(call, Y=call["Y"][:, :1], R_inv=np.eye(1)),
    "Y 1-D": lambda call: dict(call, Y=call["Y"][:, 0]),
    "C zero": _with("C", 0.0),
    "C negative": _with("C", -1.0),
    "C NaN": _with("C", np.nan),
    "C string": _with("C", "1"),
    "tol zero": _with("tol", 0.0),
    "max_iter zero": _with("max_iter", 0),
    "max_iter float": _with("max_iter", 2.5),
    "shrinking not a flag": _with("shrinking", "yes"),
    "R_inv wrong shape": lambda call: dict(call, R_inv=np.eye(call["Y"].shape[1] + 1)),
    "R_inv asymmetric": lambda call: dict(call, R_inv=np.eye(call["Y"].shape[1]) + np.eye(call["Y"].shape[1], k=1)),
    "R_inv not positive definite": lambda call: dict(call, R_inv=-np.eye(call["Y"].shape[1])),
    "R_inv NaN": _nan_in("R_inv"),
    "weights wrong length": lambda call: dict(call, feature_weights=np.ones(call["X"].shape[1] + 1)),
    "weights negative": lambda call: dict(call, feature_weights=-np.ones(call["X"].shape[1])),
    "weights NaN": _nan_in("feature_weights"),
    "weights all zero": lambda call: dict(call, feature_weights=np.zeros(call["X"].shape[1])),
    "alpha0 wrong length": lambda call: dict(call, alpha0=np.zeros(call["alpha0"].size + 1)),
    "alpha0 negative": lambda call: dict(call, alpha0=np.full(max(call["alpha0"].size, 1), -1.0)),
    "alpha0 above the box": lambda call: dict(call, alpha0=np.full(max(call["alpha0"].size, 1), 2.0)),
    "random_state string": lambda call: dict(call, random_state="seed"),
}


@pytest.mark.parametrize("corruption", sorted(WRAPPER_CORRUPTIONS))
@given(problem=multilabel_problems(n_labels=st.integers(2, 4), sparse=None, both_classes=False))
def test_the_wrapper_refuses_malformed_input_with_a_value_error(problem, corruption):
    call = WRAPPER_CORRUPTIONS[corruption](valid_call(*problem))
    with pytest.raises(ValueError):
        ranking_cd(**call)


@st.composite
def valid_parts(draw):
    """Arguments RankingDual accepts: dense or CSR rows, pairs in every row."""
    n, n_labels, d = draw(st.integers(2, 6)), draw(st.integers(2, 4)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.standard_normal((n, d))
    rows = SparseRows(*(lambda m: (m.data, m.indices, m.indptr))(sp.csr_matrix(X)), d) if draw(st.booleans()) \
        else DenseRows(X)
    Y = np.zeros((n, n_labels), dtype=np.int8)
    Y[:, 0] = 1  # every row has pairs, so there are at least two
    if n_labels > 2:
        Y[::2, 1] = 1
    pair_row, pair_k, pair_l = ranking_pairs(Y)
    return {
        "rows": rows, "pair_row": pair_row, "pair_k": pair_k, "pair_l": pair_l, "box": np.ones(n),
        "R_inv": np.eye(n_labels), "alpha": np.zeros(pair_row.size), "U": np.zeros((n_labels, d)),
        "W": np.zeros((n_labels, d)),
    }


def _replace(name, make):
    return lambda parts: dict(parts, **{name: make(parts[name])})


CONSTRUCTOR_CORRUPTIONS = {
    "pair_row int32": _replace("pair_row", lambda a: a.astype(np.int32)),
    "pair_k float": _replace("pair_k", lambda a: a.astype(np.float64)),
    "pair_row not contiguous": _replace("pair_row", lambda a: np.repeat(a, 2)[::2]),
    "pair_l shorter": _replace("pair_l", lambda a: a[:-1]),
    "pair_row negative": _replace("pair_row", lambda a: a - a.max() - 1),
    "pair_row past the rows": _replace("pair_row", lambda a: a + 100),
    "pair_k past the labels": _replace("pair_k", lambda a: a + 7),
    "pair k equals l": lambda parts: dict(parts, pair_l=parts["pair_k"].copy()),
    "box NaN": _replace("box", lambda a: np.full_like(a, np.nan)),
    "box zero": _replace("box", np.zeros_like),
    "box wrong length": _replace("box", lambda a: a[:-1]),
    "R_inv not square": _replace("R_inv", lambda a: a[:, :-1].copy()),
    "R_inv NaN": _replace("R_inv", lambda a: np.where(a == 1.0, np.nan, a)),
    "R_inv asymmetric": _replace("R_inv", lambda a: a + np.triu(np.ones_like(a), 1)),
    "R_inv singular": _replace("R_inv", np.ones_like),
    "R_inv Fortran order": _replace("R_inv", lambda a: np.asfortranarray(a + np.ones_like(a).T * 0.1)),
    "alpha NaN": _replace("alpha", lambda a: np.full_like(a, np.nan)),
    "alpha negative": _replace("alpha", lambda a: np.full_like(a, -1.0)),
    "alpha above the box": _replace("alpha", lambda a: np.full_like(a, 5.0)),
    "alpha wrong length": _replace("alpha", lambda a: np.zeros(a.size + 1)),
    "alpha float32": _replace("alpha", lambda a: a.astype(np.float32)),
    "U wrong shape": _replace("U", lambda a: np.zeros((a.shape[0], a.shape[1] + 1))),
    "W wrong shape": _replace("W", lambda a: np.zeros((a.shape[0] + 1, a.shape[1]))),
    "U None": _replace("U", lambda a: None),
    "rows None": _replace("rows", lambda a: None),
    "rows not Rows": _replace("rows", lambda a: np.zeros((a.n_rows, a.n_columns))),
}


@pytest.mark.parametrize("corruption", sorted(CONSTRUCTOR_CORRUPTIONS))
@given(parts=valid_parts())
def test_the_cython_constructor_refuses_malformed_input(parts, corruption):
    parts = CONSTRUCTOR_CORRUPTIONS[corruption](parts)
    with pytest.raises((ValueError, TypeError)):
        RankingDual(**parts)


@given(valid_parts())
def test_the_valid_parts_construct_and_solve(parts):
    """The corruptions above start from arguments the constructor accepts and the engine solves."""
    report = solve_dual(RankingDual(**parts), tol=1e-3, max_iter=100_000, shrinking=True, seed=0)
    assert report["converged"] and np.all(parts["alpha"] >= 0.0)


@given(valid_parts())
def test_the_indices_are_copied_at_construction(parts):
    pristine = dict(parts, pair_row=parts["pair_row"].copy(), alpha=parts["alpha"].copy(), U=parts["U"].copy(),
                    W=parts["W"].copy())
    problem = RankingDual(**parts)
    parts["pair_row"][:] = 10**9  # would index far outside the rows if the variant kept the caller's array
    solve_dual(problem, tol=1e-3, max_iter=1000, shrinking=False, seed=0)
    solve_dual(RankingDual(**pristine), tol=1e-3, max_iter=1000, shrinking=False, seed=0)
    np.testing.assert_array_equal(parts["alpha"], pristine["alpha"])  # exact: same code, equal inputs, one process


def test_an_uninitialised_variant_is_refused():
    with pytest.raises(ValueError, match="not initialised"):
        solve_dual(RankingDual.__new__(RankingDual), tol=0.1, max_iter=10, shrinking=True, seed=0)
