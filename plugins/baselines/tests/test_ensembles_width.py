"""LP, RAkEL, ECC (and label_partition over LP) fit the columns that hold a value.

The default classifier is an L2-penalised logistic regression: a column that is 0 in every
training row has weight 0 at its optimum, so the model fitted on the held columns must score
any rows -- with any values in the other columns -- as the model fitted on every column does.
That is what lets the fuzz matrix's wide case (10^6 declared columns, 450 values) cost what
the values cost.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression

from multilabel_core import make_method
from multilabel_core_plugins.baselines.ensembles import held_columns

METHODS = {
    "label_powerset": {},
    "rakel": {"labelset_size": 2},
    "ecc": {"n_chains": 3},
}


def _data(seed: int, n: int = 40, d: int = 4, n_labels: int = 3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d, n_labels))
    Y = (X @ W + 0.3 * rng.normal(size=(n, n_labels)) > 0).astype(np.int8)
    Y[0], Y[1] = 1, 0  # every label of both classes, in every bootstrap the tries find
    return X, Y


def _widen(X, places):
    """X with all-zero columns inserted before the columns ``places`` name (sorted, with repeats)."""
    for where in sorted(places, reverse=True):
        X = np.insert(X, where, 0.0, axis=1)
    return X


@pytest.mark.parametrize("method", sorted(METHODS))
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**16), places=st.lists(st.integers(0, 4), min_size=1, max_size=6), sparse=st.booleans())
def test_the_held_columns_model_scores_as_the_full_one(method, seed, places, sparse):
    X, Y = _data(seed)
    wide = _widen(X, places)
    rng = np.random.default_rng(seed + 1)
    new_rows = rng.normal(size=(10, wide.shape[1]))  # values in the columns empty in training too
    fit_on = sp.csr_matrix(wide) if sparse else wide
    reduced = make_method(method, random_state=3, **METHODS[method]).fit(fit_on, Y)
    # The same logistic regression given as the user's classifier sees every column.
    full = make_method(method, random_state=3, classifier=LogisticRegression(max_iter=1000), **METHODS[method])
    full.fit(fit_on, Y)
    assert full.columns_ is None and reduced.columns_ is not None
    assert np.array_equal(reduced.columns_, np.flatnonzero(np.any(wide != 0, axis=0)))
    rows = sp.csr_matrix(new_rows) if sparse else new_rows
    # Two lbfgs runs on the same problem, one with zero coordinates more: the same iterates up to rounding.
    np.testing.assert_allclose(reduced.decision_function(rows), full.decision_function(rows), atol=1e-6)
    np.testing.assert_array_equal(reduced.predict(rows), full.predict(rows))


def test_label_partition_over_the_label_powerset_fits_held_columns():
    X, Y = _data(0, n_labels=4)
    wide = sp.hstack([sp.csr_matrix(X), sp.csr_matrix((X.shape[0], 10**6))], format="csr")
    model = make_method("label_partition").fit(wide, Y)
    assert all(np.array_equal(part.columns_, np.arange(4)) for part in model.estimators_)
    narrow = make_method("label_partition").fit(X, Y)
    np.testing.assert_allclose(model.decision_function(wide), narrow.decision_function(X), atol=1e-9)


def test_held_columns_costs_the_stored_entries_and_never_returns_none():
    wide = sp.csr_matrix(([1.0, 0.0, 2.0], ([0, 1, 2], [7, 3, 999_999])), shape=(3, 10**6))
    assert held_columns(wide).tolist() == [7, 999_999]  # an explicit 0 holds nothing
    assert held_columns(sp.csr_matrix((2, 5))).tolist() == [0]
    assert held_columns(np.zeros((2, 3))).tolist() == [0]


def test_a_model_with_every_column_held_keeps_none():
    X, Y = _data(1)
    model = make_method("label_powerset").fit(X, Y)
    assert model.columns_ is None


@pytest.mark.parametrize("method", sorted(METHODS))
def test_a_held_columns_model_saves_and_loads(tmp_path, method):
    from multilabel_core.persistence import load_model, save_model

    X, Y = _data(2)
    wide = sp.csr_matrix(_widen(X, [0, 2, 4]))
    model = make_method(method, random_state=0, **METHODS[method]).fit(wide, Y)
    path = save_model(model, tmp_path / "m.mlcore", method=method)
    loaded = load_model(path)
    assert np.array_equal(loaded.columns_, model.columns_)
    np.testing.assert_array_equal(loaded.decision_function(wide), model.decision_function(wide))
