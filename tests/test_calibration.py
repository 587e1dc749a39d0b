"""Calibrated probabilities (multilabel_core.calibration): the maps against independent computations,
the out-of-fold construction, calibration on held-out yeast, scikit-learn and the model files, and the
AttributeError of the methods that define no probability."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.special import expit

import multilabel_core as mlc
from multilabel_core.calibration import (
    CalibratedMultiLabel,
    IsotonicCalibration,
    SigmoidCalibration,
    expected_calibration_error,
    fit_isotonic,
    fit_sigmoid,
    platt_targets,
    pool_adjacent_violators,
)
from multilabel_core.datasets import load_dataset


def _data(n=120, d=6, L=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d, L))
    Y = (X @ W + rng.normal(scale=1.0, size=(n, L)) > 0.3).astype(np.int8)
    return X, Y


# -- pool adjacent violators against brute force ----------------------------------------------


def _brute_force_isotonic(values, weights):
    """The least-squares non-decreasing fit by enumerating every split into consecutive blocks.

    At the optimum the fit is constant on consecutive blocks at each block's weighted mean (its
    optimality conditions), so the best feasible block split is the optimum.
    """
    n = len(values)
    best, best_cost = None, np.inf
    for cuts in itertools.product((False, True), repeat=n - 1):
        bounds = [0] + [i + 1 for i, cut in enumerate(cuts) if cut] + [n]
        fit = np.empty(n)
        for start, end in zip(bounds[:-1], bounds[1:]):
            fit[start:end] = np.average(values[start:end], weights=weights[start:end])
        # Feasible up to the rounding of a mean; the optimum is unique, so the least cost decides exactly.
        if np.any(np.diff(fit) < -1e-12 * (1 + np.abs(values).max())):
            continue
        cost = float(np.sum(weights * (values - fit) ** 2))
        if cost < best_cost:
            best, best_cost = fit, cost
    return best, best_cost


small_values = st.lists(st.floats(-10, 10, allow_nan=False, allow_infinity=False), min_size=1, max_size=8)


@given(small_values, st.data())
def test_pav_is_monotone_and_equals_brute_force(values, data):
    values = np.array(values)
    weights = np.array(data.draw(st.lists(st.floats(0.1, 10), min_size=len(values), max_size=len(values))))
    fit = pool_adjacent_violators(values, weights)
    assert np.all(np.diff(fit) >= 0)
    expected, cost = _brute_force_isotonic(values, weights)
    # Both are block means of the same numbers: they agree to the rounding of a weighted mean.
    np.testing.assert_allclose(fit, expected, rtol=1e-9, atol=1e-9 * (1 + np.abs(values).max()))
    assert float(np.sum(weights * (values - fit) ** 2)) <= cost * (1 + 1e-9) + 1e-9


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 1)), min_size=1, max_size=8))
def test_isotonic_map_is_the_brute_force_fit_on_pooled_ties(pairs):
    scores = np.array([s for s, _ in pairs], dtype=float)
    y = np.array([label for _, label in pairs])
    calibration = fit_isotonic(scores, y)
    distinct = np.unique(scores)
    means = np.array([y[scores == s].mean() for s in distinct])
    counts = np.array([np.sum(scores == s) for s in distinct], dtype=float)
    expected, _ = _brute_force_isotonic(means, counts)
    np.testing.assert_allclose(calibration(distinct), expected, atol=1e-12)
    grid = np.linspace(-1, 5, 61)
    assert np.all(np.diff(calibration(grid)) >= 0)
    assert np.all((calibration(grid) >= 0) & (calibration(grid) <= 1))


def test_pav_refuses_bad_input():
    with pytest.raises(ValueError, match="values"):
        pool_adjacent_violators([])
    with pytest.raises(ValueError, match="weights"):
        pool_adjacent_violators([1.0, 2.0], [1.0, 0.0])


# -- Platt's sigmoid against scipy's minimiser of the same objective ---------------------------


def _platt_loss(params, f, t):
    """Platt's objective written from its definition: cross-entropy of 1/(1+exp(A f + B)) to the targets."""
    p = 1.0 / (1.0 + np.exp(params[0] * f + params[1]))
    p = np.clip(p, 1e-300, 1 - 1e-16)
    return -np.sum(t * np.log(p) + (1 - t) * np.log1p(-p))


@given(st.integers(5, 60), st.integers(0, 2**31 - 1), st.floats(0.0, 4.0))
def test_platt_fit_matches_scipy_minimisation(n, seed, separation):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    y[0], y[1] = 0, 1  # both values present: the usual case; the one-sided case is tested below
    scores = rng.normal(size=n) + separation * (2 * y - 1)
    t = platt_targets(y)
    ours = fit_sigmoid(scores, y)
    assert ours.converged
    theirs = minimize(_platt_loss, x0=[0.0, 0.0], args=(scores, t), method="Nelder-Mead",
                      options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000, "maxfev": 40000})  # fmt: skip
    ours_loss = _platt_loss([ours.a, ours.b], scores, t)
    # Newton stops within SIGMOID_RTOL of the minimum; the simplex cannot do better than the minimum.
    assert ours_loss <= theirs.fun + 1e-9 * max(1.0, theirs.fun)
    # The objective is strictly convex in (A, B) with curvature sum p(1-p) (f, 1)(f, 1)^T: near-equal
    # objectives mean near-equal probabilities wherever that curvature is not vanishing.
    np.testing.assert_allclose(ours(scores), 1 / (1 + np.exp(theirs.x[0] * scores + theirs.x[1])), atol=1e-4)


def test_platt_targets_and_degenerate_cases():
    y = np.array([1, 1, 0, 0, 0])
    np.testing.assert_allclose(platt_targets(y), [0.75, 0.75, 0.2, 0.2, 0.2])
    # Equal scores carry nothing: the map is the mean smoothed target.
    flat = fit_sigmoid(np.full(5, 0.3), y)
    assert flat.a == 0.0
    np.testing.assert_allclose(flat([0.0, 10.0]), platt_targets(y).mean())
    # Perfectly separated scores: the smoothed targets keep the fit finite, ordered and short of 0 and 1.
    sep = fit_sigmoid(np.array([3.0, 2.0, -1.0, -2.0, -3.0]), y)
    assert np.isfinite(sep.a) and sep.a < 0 and sep.converged
    p = sep(np.array([3.0, -3.0]))
    assert 0 < p[1] < p[0] < 1
    # One value only (a fold's held-out rows may all be negatives): finite and low.
    one = fit_sigmoid(np.array([0.5, -0.2, 0.1]), np.zeros(3))
    assert np.all(one(np.array([-1.0, 1.0])) < 0.5)
    with pytest.raises(ValueError, match="finite"):
        fit_sigmoid(np.array([np.inf, 0.0]), np.array([1, 0]))
    with pytest.raises(ValueError, match="0 and 1"):
        fit_sigmoid(np.array([1.0, 0.0]), np.array([2, 0]))


def test_calibrators_refuse_bad_fields():
    with pytest.raises(ValueError, match="strictly increasing"):
        IsotonicCalibration(scores=np.array([0.0, 0.0]), probabilities=np.array([0.1, 0.2]))
    with pytest.raises(ValueError, match="non-decreasing"):
        IsotonicCalibration(scores=np.array([0.0, 1.0]), probabilities=np.array([0.3, 0.2]))
    with pytest.raises(ValueError, match="finite"):
        SigmoidCalibration(a=np.nan, b=0.0)


def test_expected_calibration_error_by_hand():
    Y = np.array([[1, 0], [0, 0]])
    P = np.array([[0.9, 0.05], [0.15, 0.0]])
    # Bins of width 0.1: {0.05, 0.0} in bin 0 (labels 0, 0), 0.15 in bin 1 (label 0), 0.9 in bin 9 (label 1).
    expected = (2 * abs(0 - 0.025) + 1 * abs(0 - 0.15) + 1 * abs(1 - 0.9)) / 4
    assert expected_calibration_error(Y, P) == pytest.approx(expected)
    with pytest.raises(ValueError, match="probabilities"):
        expected_calibration_error(Y, P + 1)


# -- the estimator -----------------------------------------------------------------------------


class _ListSplitter:
    """Fixed folds, so that a test can rebuild the out-of-fold scores itself."""

    def __init__(self, folds):
        self.folds = folds

    def split(self, X, Y=None, groups=None):
        n = X.shape[0]
        for test in self.folds:
            yield np.setdiff1d(np.arange(n), test), np.asarray(test)


@pytest.mark.parametrize("method", ["sigmoid", "isotonic"])
def test_maps_are_fitted_on_out_of_fold_scores_only(method):
    X, Y = _data()
    folds = [np.arange(0, 120, 3), np.arange(1, 120, 3), np.arange(2, 120, 3)]
    model = CalibratedMultiLabel(mlc.make_method("br"), method=method, cv=_ListSplitter(folds)).fit(X, Y)
    scores = np.empty(Y.shape)
    for test in folds:
        train = np.setdiff1d(np.arange(120), test)
        scores[test] = mlc.make_method("br").fit(X[train], Y[train]).decision_function(X[test])
    fitter = {"sigmoid": fit_sigmoid, "isotonic": fit_isotonic}[method]
    probe = np.linspace(-3, 3, 25)
    for j, calibrator in enumerate(model.calibrators_):
        expected = fitter(scores[:, j], Y[:, j])
        # The same solver on the same scores up to the fold models' own tolerance: the maps agree closely.
        np.testing.assert_allclose(calibrator(probe), expected(probe), atol=1e-6)
    np.testing.assert_array_equal(model.calibration_rows_, 120)
    # The maps never saw the final model's training scores: those differ from the out-of-fold ones.
    assert not np.allclose(model.estimator_.decision_function(X), scores, atol=1e-3)
    # Calibration changes probabilities, not decisions.
    np.testing.assert_array_equal(model.predict(X), model.estimator_.predict(X))
    P = model.predict_proba(X)
    assert P.shape == Y.shape and P.dtype == np.float64 and np.all((P >= 0) & (P <= 1))


@pytest.fixture(scope="module")
def yeast(datasets_dir):
    train = load_dataset(datasets_dir / "yeast-train.arff")
    test = load_dataset(datasets_dir / "yeast-test.arff")
    return np.asarray(train.X), np.asarray(train.Y), np.asarray(test.X), np.asarray(test.Y)


def _sampling_bound(P, n_bins=10):
    """An upper bound on E[ECE] of perfectly calibrated probabilities P on these rows (labels may depend).

    In bin b, sum (y - p) over its entries has mean 0 when P is calibrated; rows are independent,
    the labels of one row need not be, and the m_rb entries row r puts in bin b sum to a value in
    an interval of length m_rb, so the variance is at most sum_r m_rb^2 / 4 (Popoviciu).  Then
    E|mean_b(y - p)| <= sqrt(sum_r m_rb^2) / (2 n_b) and E[ECE] <= sum_b sqrt(sum_r m_rb^2) / (2 N).
    """
    bins = np.minimum((P * n_bins).astype(np.intp), n_bins - 1)
    per_row = np.stack([(bins == b).sum(axis=1) for b in range(n_bins)], axis=1).astype(float)
    return float(np.sqrt((per_row**2).sum(axis=0)).sum() / (2 * P.size))


@pytest.mark.parametrize("method", ["sigmoid", "isotonic"])
def test_calibrated_on_held_out_yeast(yeast, method):
    """Reliability on the Mulan yeast test file of binary relevance calibrated on its training file.

    The bound: ECE <= S + E.  S (:func:`_sampling_bound`, about 0.020 here) bounds the ECE that
    sampling alone gives perfectly calibrated probabilities on these 917 x 14 entries; E is the
    estimation error of a two-parameter fit on n_j out-of-fold rows per label, to first order
    sqrt(2 pi_j (1 - pi_j) / n_j) in probability (pi_j the label's frequency), averaged over the
    labels (about 0.014).  The isotonic map is held to the same bound (it has more freedom and a
    slower rate; it measures 0.014 here, the sigmoid 0.017).  The uncalibrated scores squashed by
    the logistic function, 1/(1 + exp(-t)), measure 0.126: the bound separates them.
    """
    X, Y, X_test, Y_test = yeast
    model = CalibratedMultiLabel(mlc.make_method("br", preprocess="standardize"), method=method, cv=3).fit(X, Y)
    P = model.predict_proba(X_test)
    prevalence = Y.mean(axis=0)
    estimation = float(np.mean(np.sqrt(2 * prevalence * (1 - prevalence) / model.calibration_rows_)))
    bound = _sampling_bound(P) + estimation
    ece = expected_calibration_error(Y_test, P)
    assert ece <= bound, (ece, bound)
    squashed = expit(model.decision_function(X_test))
    assert expected_calibration_error(Y_test, squashed) > bound
    brier, brier_squashed = np.mean((P - Y_test) ** 2), np.mean((squashed - Y_test) ** 2)
    assert brier < brier_squashed, (brier, brier_squashed)


def test_clone_and_grid_search():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV

    X, Y = _data(n=90)
    model = CalibratedMultiLabel(mlc.make_method("br", C=0.5), method="isotonic", cv=2, random_state=3)
    twin = clone(model)
    assert twin.get_params(deep=False)["method"] == "isotonic" and twin.estimator is not model.estimator
    assert twin.estimator.get_params() == model.estimator.get_params()

    def brier(estimator, X_test, Y_test):
        # A callable scorer: scikit-learn's own probability scorers read classes_ = [0, 1] as a binary
        # target and would keep one column of predict_proba (docs: calibration).
        return -float(np.mean((estimator.predict_proba(X_test) - Y_test) ** 2))

    search = GridSearchCV(model, {"method": ["sigmoid", "isotonic"], "estimator__C": [0.1, 1.0]}, cv=2, scoring=brier)
    search.fit(X, Y)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert search.best_estimator_.predict_proba(X).shape == Y.shape
    assert sklearn.__version__


def test_fits_are_deterministic_without_a_seed():
    X, Y = _data(n=80)
    first = CalibratedMultiLabel(mlc.make_method("br")).fit(X, Y).predict_proba(X)
    second = CalibratedMultiLabel(mlc.make_method("br")).fit(X, Y).predict_proba(X)
    np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize("method", ["sigmoid", "isotonic"])
def test_save_load_round_trip(tmp_path, method):
    X, Y = _data()
    model = CalibratedMultiLabel(mlc.make_method("br", preprocess="standardize"), method=method).fit(X, Y)
    path = mlc.save_model(model, tmp_path / "calibrated.mlcore")
    loaded = mlc.load_model(path)
    assert type(loaded) is CalibratedMultiLabel
    # The same arrays through the same code: the same numbers.
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    # Saved under the wrapped method's name, too.
    mlc.load_model(mlc.save_model(model, tmp_path / "named.mlcore", method="br"))


def test_a_broken_map_is_refused_before_writing(tmp_path):
    X, Y = _data()
    model = CalibratedMultiLabel(mlc.make_method("br"), method="isotonic").fit(X, Y)
    bad = model.calibrators_[0]
    object.__setattr__(bad, "probabilities", bad.probabilities[::-1].copy())  # decreasing, as a tampered file
    with pytest.raises(ValueError, match="non-decreasing"):
        mlc.save_model(model, tmp_path / "bad.mlcore")
    model.calibrators_ = model.calibrators_[1:]
    with pytest.raises(ValueError, match="calibrators_"):
        mlc.save_model(model, tmp_path / "short.mlcore")


def test_methods_without_probabilities_say_why():
    for spec in mlc.list_methods():
        estimator = mlc.make_method(spec.name)
        # ML-kNN's MAP rule is a probabilistic model: its posterior is its predict_proba.
        assert hasattr(estimator, "predict_proba") == (spec.name == "mlknn"), spec.name
    with pytest.raises(AttributeError) as caught:
        mlc.make_method("br").predict_proba
    message = str(caught.value)
    assert "BinaryRelevance has no predict_proba" in message
    assert "not probabilities" in message and "CalibratedMultiLabel" in message
    assert hasattr(CalibratedMultiLabel(mlc.make_method("br")), "predict_proba")
    with pytest.raises(mlc.NotFittedError):
        CalibratedMultiLabel(mlc.make_method("br")).predict_proba(np.zeros((2, 3)))


def test_constant_labels_get_their_constant_as_probability():
    X, Y = _data(n=90, L=3)
    Y = np.column_stack([Y[:, 0], np.zeros(90, np.int8), Y[:, 1], np.ones(90, np.int8), Y[:, 2]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CalibratedMultiLabel(mlc.make_method("br")).fit(X, Y)
    P = model.predict_proba(X)
    assert P.shape == (90, 5)
    np.testing.assert_array_equal(P[:, 1], 0.0)
    np.testing.assert_array_equal(P[:, 3], 1.0)
    np.testing.assert_array_equal(model.predict(X)[:, [1, 3]], np.column_stack([np.zeros(90), np.ones(90)]))
    learned = CalibratedMultiLabel(mlc.make_method("br")).fit(X, Y[:, [0, 2, 4]]).predict_proba(X)
    np.testing.assert_allclose(P[:, [0, 2, 4]], learned, atol=1e-6)


def test_a_label_constant_in_a_fold_is_calibrated_on_the_other_folds():
    X, Y = _data(n=60, L=3)
    Y[:, 2] = 0
    Y[[0, 3], 2] = 1  # two positives, both in the first fold's test rows below
    folds = [np.arange(0, 60, 3), np.arange(1, 60, 3), np.arange(2, 60, 3)]
    with pytest.warns(UserWarning, match=r"1 of 3 label\(s\) \(indices 2\) were calibrated on part"):
        model = CalibratedMultiLabel(mlc.make_method("br"), cv=_ListSplitter(folds)).fit(X, Y)
    assert model.calibration_rows_.tolist() == [60, 60, 40]
    assert np.all(np.isfinite(model.predict_proba(X)))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"estimator": None}, "estimator must be a multi-label estimator"),
        ({"method": "platt"}, "method must be one of 'sigmoid', 'isotonic'"),
        ({"cv": 1}, "cv"),
        ({"cv": "three"}, "cv must be a number of folds"),
        ({"cv": _ListSplitter([np.arange(3)]), "random_state": 0}, "random_state applies to cv given as a number"),
    ],
)
def test_parameters_are_checked_at_fit(params, message):
    X, Y = _data(n=30)
    model = CalibratedMultiLabel(mlc.make_method("br")).set_params(**params)
    with pytest.raises(ValueError, match=message):
        model.fit(X, Y)


def test_precomputed_kernel_and_sparse_rows():
    """The folds cut a precomputed kernel's rows and its training columns, as they cut X's rows.

    The kernel and the linear fits solve the same problems to the solver's tolerance (measured
    4.8e-6 apart in probability); folds cut at the wrong columns would move them by tenths.
    """
    import scipy.sparse as sp

    X, Y = _data(n=80, d=5, L=3)
    on_kernel = CalibratedMultiLabel(mlc.make_method("bsvm", kernel="precomputed")).fit(X @ X.T, Y)
    on_rows = CalibratedMultiLabel(mlc.make_method("bsvm", kernel="linear")).fit(X, Y)
    np.testing.assert_allclose(on_kernel.predict_proba(X @ X.T), on_rows.predict_proba(X), atol=1e-3)
    sparse = CalibratedMultiLabel(mlc.make_method("br")).fit(sp.csr_matrix(X), Y)
    dense = CalibratedMultiLabel(mlc.make_method("br")).fit(X, Y)
    np.testing.assert_allclose(sparse.predict_proba(sp.csr_matrix(X)), dense.predict_proba(X), atol=1e-3)


def test_non_finite_out_of_fold_scores_are_refused():
    class _Infinite(mlc.MultiLabelEstimator):
        """Scores of +inf for the second label: nothing a map can calibrate."""

        def _fit(self, X, Y):
            self.width_ = Y.shape[1]

        def _decision_function(self, X):
            scores = np.zeros((X.shape[0], self.width_))
            scores[:, 1] = np.inf
            return scores

    X, Y = _data(n=40, L=3)
    with pytest.raises(ValueError, match=r"non-finite out-of-fold scores \(inf or NaN\) for label\(s\) \[1\]"):
        CalibratedMultiLabel(_Infinite()).fit(X, Y)


def _one_d(values: str) -> str:
    return f"fits a 1-D y of {values}; multi-label targets are (n, L) indicator matrices and a 1-D y is refused"


#: scikit-learn's checks that cannot hold for a multi-label wrapper, each with the reason: those of every
#: registered method (tests/test_sklearn_compat.py) and those its predict_proba meets.
_WRAPPER_FAILED_CHECKS = {
    "check_classifiers_one_label": _one_d("a single class"),
    "check_classifiers_classes": _one_d("string class names"),
    "check_classifiers_regression_target": _one_d("continuous values"),
    "check_classifier_not_supporting_multiclass": _one_d("three classes"),
    "check_decision_proba_consistency": _one_d("two classes"),
    "check_classifiers_train": "reshapes y to (n, 1), then asserts predict returns 1-D (n,); predict returns (n, L)",
    "check_estimators_dtypes": "binarises y to {1, 2}; an indicator matrix holds 0/1",
    "check_classifier_data_not_an_array": "binarises y to {1, 2}; an indicator matrix holds 0/1",
    "check_fit2d_1feature": "binarises y to {1, 2}; an indicator matrix holds 0/1",
    "check_dtype_object": "requires a TypeError for an object array; object arrays are refused with a ValueError",
    "check_estimator_sparse_array": (
        "asserts predict_proba of a one-column y has two columns (the binary layout); it has one per label"
    ),
    "check_estimator_sparse_matrix": (
        "asserts predict_proba of a one-column y has two columns (the binary layout); it has one per label"
    ),
    "check_classifier_multioutput": (
        "asserts predict == round(predict_proba); predict is the wrapped method's own decision (its threshold), "
        "which calibration does not change (docs: calibration)"
    ),
}


def _wrapper_checks():
    pytest.importorskip("sklearn")
    from sklearn.utils.estimator_checks import check_estimator

    return check_estimator


def test_sklearn_estimator_checks():
    """scikit-learn's checks pass but for the listed ones, which fail as their reasons say (none passes unexpectedly)."""
    check_estimator = _wrapper_checks()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(
            CalibratedMultiLabel(mlc.make_method("br")), on_fail=None, expected_failed_checks=_WRAPPER_FAILED_CHECKS
        )
    failed = sorted({r["check_name"] for r in results if r["status"] == "failed"})
    assert failed == [], failed
    xfailed = {r["check_name"] for r in results if r["status"] == "xfail"}
    assert xfailed == set(_WRAPPER_FAILED_CHECKS)


def test_mlknn_predict_proba_is_its_posterior():
    X, Y = _data(n=120, L=4)
    Y = np.column_stack([Y, np.zeros(len(Y), np.int8)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mlc.make_method("mlknn").fit(X, Y)
    P = model.predict_proba(X)
    assert P.shape == Y.shape and np.all((P >= 0) & (P <= 1))
    np.testing.assert_allclose(P[:, :4], model.posterior(X)[:, :4], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(P[:, 4], 0.0)  # the constant label's probability is its constant
    # The MAP rule: relevant exactly where the posterior passes one half.
    np.testing.assert_array_equal(model.predict(X)[:, :4], (P[:, :4] > 0.5).astype(model.predict(X).dtype))
