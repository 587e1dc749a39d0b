"""The public checks of multilabel_core.testing.checks pass on good inputs and fail on broken ones."""

import math

import numpy as np
import pytest

from multilabel_core import Certificate, MethodSpec
from multilabel_core.validation import check_X
from multilabel_core.testing.checks import check_convexity, check_duality_gap, check_kkt, check_method
from multilabel_core_plugins.br import BinaryRelevance


def certificate(primal=10.0, dual=10.0, kkt=0.0):
    return Certificate.from_objectives(primal, dual, kkt_violation=kkt, n_iter=1, time=0.0, converged=True, solver="test")


def spec_of(estimator, **fields):
    return MethodSpec(**{"name": "probe", "estimator": estimator, "citation": "A paper, 2024", **fields})


# -- certificates and convexity -------------------------------------------------------


def test_duality_gap_check():
    check_duality_gap(certificate(10.0, 10.0 - 1e-9), tol=1e-8)
    with pytest.raises(AssertionError, match="not optimal"):
        check_duality_gap(certificate(10.0, 9.0), tol=1e-6)
    with pytest.raises(AssertionError, match="weak duality"):
        check_duality_gap(certificate(10.0, 11.0), tol=1e-6)
    with pytest.raises(AssertionError, match="not finite"):
        check_duality_gap(certificate(10.0, math.nan))
    with pytest.raises(AssertionError, match="Certificate"):
        check_duality_gap({"gap": 0.0})


def test_kkt_check():
    check_kkt(certificate(kkt=1e-9), tol=1e-8)
    with pytest.raises(AssertionError, match="KKT violation"):
        check_kkt(certificate(kkt=1e-3), tol=1e-8)
    with pytest.raises(AssertionError, match="KKT violation"):
        check_kkt(certificate(kkt=math.nan), tol=1e-8)


def test_convexity_check():
    a, b = np.array([-2.0, 1.0]), np.array([3.0, -1.0])
    check_convexity(lambda v: float(v @ v), a, b)
    check_convexity(lambda v: float(np.abs(v).sum()), a, b)
    with pytest.raises(AssertionError, match="not convex"):
        check_convexity(lambda v: -float(v @ v), a, b)
    with pytest.raises(ValueError, match="one shape"):
        check_convexity(lambda v: 0.0, a, b[:1])


# -- method conformance ------------------------------------------------------------------


def test_registered_br_conforms():
    check_method("br")


class FloatPredictions(BinaryRelevance):
    def predict(self, X):
        return super().predict(X).astype(float)


class ShiftedThreshold(BinaryRelevance):
    def predict(self, X):
        return (self.decision_function(X) > 0.5).astype(np.int64)


class AcceptsNaN(BinaryRelevance):
    def fit(self, X, Y):
        return super().fit(np.nan_to_num(np.asarray(X, dtype=float)), Y)


class NoCertificate(BinaryRelevance):
    def _fit(self, X, Y):
        super()._fit(X, Y)
        del self.certificate_


class NegativeGap(BinaryRelevance):
    def _fit(self, X, Y):
        super()._fit(X, Y)
        c = self.certificate_
        self.certificate_ = Certificate.from_objectives(
            c.primal, c.primal + 1.0, kkt_violation=0.0, n_iter=1, time=0.0, converged=True, solver="broken"
        )


class ConvertsParameters(BinaryRelevance):
    def __init__(self, C=1.0, tol=1e-6, max_iter=1000, fit_intercept=True):
        super().__init__(C=C, tol=tol, max_iter=max_iter, fit_intercept=fit_intercept)
        self.C = [C]


class NondeterministicFit(BinaryRelevance):
    calls = 0

    def _fit(self, X, Y):
        super()._fit(X, Y)
        type(self).calls += 1
        self.intercept_ = self.intercept_ + type(self).calls


class NoFeatureCheck(BinaryRelevance):
    def decision_function(self, X):
        X = check_X(X)
        return X[:, : self.n_features_in_] @ self.coef_ + self.intercept_

    def predict(self, X):
        return (self.decision_function(X) > 0).astype(np.int64)


class FitReturnsNone(BinaryRelevance):
    def fit(self, X, Y):
        super().fit(X, Y)


@pytest.mark.parametrize(
    "estimator, message",
    [
        (FloatPredictions, "integers"),
        (ShiftedThreshold, r"decision_function > 0"),
        (AcceptsNaN, "NaN in X"),
        # save_model's declared-state check may refuse it first; either message names the attribute.
        (NoCertificate, r"no certificate_|lacks the fitted attribute certificate_"),
        (NegativeGap, "gap"),
        (ConvertsParameters, "unchanged"),
        (NondeterministicFit, "clone"),
        (NoFeatureCheck, "extra feature"),
        (FitReturnsNone, "return self"),
    ],
)
def test_broken_estimators_fail_the_conformance_check(estimator, message):
    with pytest.raises(AssertionError, match=message):
        check_method(spec_of(estimator))


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"citation": "  "}, "citation is empty"),
        ({"parts": {"loss": "no_such_loss"}}, "not a registered loss"),
        ({"parts": {"optimizer": "lbfgs"}}, "role"),
        ({"param_grid": {"lam": [1.0]}}, "not a parameter"),
        ({"param_grid": {"C": []}}, "non-empty list"),
    ],
)
def test_broken_registrations_fail_the_conformance_check(fields, message):
    with pytest.raises(AssertionError, match=message):
        check_method(spec_of(BinaryRelevance, **fields))


def test_an_estimator_without_the_api_fails_the_conformance_check():
    class NotAnEstimator:
        def fit(self, X, Y):
            return self

    with pytest.raises(AssertionError, match="no method predict"):
        check_method(spec_of(NotAnEstimator))


def test_check_method_refuses_what_is_not_a_method():
    with pytest.raises(ValueError, match="unknown method"):
        check_method("no_such_method")
    with pytest.raises(ValueError, match="MethodSpec"):
        check_method(BinaryRelevance)
