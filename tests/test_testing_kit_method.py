"""The conformance checks check_method added for determinism, clone, persistence, bad input and certificate lists."""

from __future__ import annotations

import weakref

import numpy as np
import pytest
from multilabel_core_plugins.br import BinaryRelevance

from multilabel_core import Certificate, MethodSpec
from multilabel_core.testing.checks import check_method


def spec_of(estimator):
    return MethodSpec(name="probe", estimator=estimator, citation="A paper, 2024")


def with_fields(certificate, **changes):
    fields = {name: getattr(certificate, name) for name in
              ("primal", "dual", "gap", "kkt_violation", "n_iter", "time", "converged", "solver")}
    return Certificate(**(fields | changes))


class Alternating(BinaryRelevance):
    """Reports one certificate per outer step, like the alternating methods."""

    def _fit(self, X, Y):
        super()._fit(X, Y)
        self.certificate_ = [with_fields(self.certificate_, converged=False, n_iter=3), self.certificate_]


def test_a_list_of_certificates_conforms():
    check_method(spec_of(Alternating))


class LeaksStateIntoRefits(BinaryRelevance):
    """Shifts its bias by the previous fit's: fresh clones agree, a refit does not."""

    def _fit(self, X, Y):
        previous = getattr(self, "intercept_", 0.0)
        super()._fit(X, Y)
        self.intercept_ = self.intercept_ + previous


class SeedsFromTheClock(BinaryRelevance):
    """Has a random_state but draws from a stream it does not seed: two equal clones differ."""

    stream = np.random.default_rng()

    def __init__(self, C=1.0, tol=1e-6, max_iter=1000, fit_intercept=True, random_state=None):
        super().__init__(C=C, tol=tol, max_iter=max_iter, fit_intercept=fit_intercept)
        self.random_state = random_state

    def _fit(self, X, Y):
        super()._fit(X, Y)
        self.intercept_ = self.intercept_ + self.stream.normal(size=self.intercept_.shape)


class SavesInSinglePrecision(BinaryRelevance):
    def __getstate__(self):
        state = dict(self.__dict__)
        state["coef_"] = state["coef_"].astype(np.float32).astype(np.float64) + 1e-3
        return state


class SavesInFortranOrder(BinaryRelevance):
    def __getstate__(self):
        return dict(self.__dict__) | {"coef_": np.asfortranarray(self.coef_)}


#: Estimators fitted in this process; a loaded copy is not among them.
FITTED_HERE = weakref.WeakSet()


class FittedHere(BinaryRelevance):
    def _fit(self, X, Y):
        super()._fit(X, Y)
        FITTED_HERE.add(self)


class RoundsDifferentlyWhenLoaded(FittedHere):
    """Its loaded copy scores one ulp higher, as another BLAS path may round."""

    def decision_function(self, X):
        scores = super().decision_function(X)
        return scores if self in FITTED_HERE else np.nextafter(scores, np.inf)


class ShiftsItsScoresWhenLoaded(FittedHere):
    """Its loaded copy scores 1e-9 higher: more than rounding, less than any solver tolerance."""

    def decision_function(self, X):
        scores = super().decision_function(X)
        return scores if self in FITTED_HERE else scores + 1e-9


class FlipsALabelWhenLoaded(FittedHere):
    def predict(self, X):
        labels = super().predict(X)
        if self not in FITTED_HERE:
            labels[0, 0] = 1 - labels[0, 0]
        return labels


def test_a_loaded_copy_may_differ_by_rounding():
    check_method(spec_of(RoundsDifferentlyWhenLoaded))


class ForgetsItsWeightsWhenSaved(BinaryRelevance):
    def __getstate__(self):
        return {name: value for name, value in self.__dict__.items() if name != "coef_"}


class CloneKeepsTheFit(BinaryRelevance):
    """Clones by copying itself, fitted state included."""

    def __sklearn_clone__(self):
        import copy

        return copy.deepcopy(self)


class AcceptsInfinity(BinaryRelevance):
    def fit(self, X, Y):
        return super().fit(np.nan_to_num(np.asarray(X, dtype=float), posinf=0.0, neginf=0.0, nan=np.nan), Y)


class FitsNothingOnEmptyInput(BinaryRelevance):
    def fit(self, X, Y):
        if len(X) == 0:
            return self
        return super().fit(X, Y)


class BrokenFirstStep(BinaryRelevance):
    def _fit(self, X, Y):
        super()._fit(X, Y)
        self.certificate_ = [with_fields(self.certificate_, gap=float("nan")), self.certificate_]


class LastStepDidNotConverge(BinaryRelevance):
    def _fit(self, X, Y):
        super()._fit(X, Y)
        self.certificate_ = [self.certificate_, with_fields(self.certificate_, converged=False)]


class NegativeIterationCount(BinaryRelevance):
    def _fit(self, X, Y):
        super()._fit(X, Y)
        self.certificate_ = with_fields(self.certificate_, n_iter=-1)


class NotACertificate(BinaryRelevance):
    def _fit(self, X, Y):
        super()._fit(X, Y)
        self.certificate_ = [self.certificate_.as_dict()]


@pytest.mark.parametrize(
    "estimator, message",
    [
        (LeaksStateIntoRefits, "not deterministic"),
        (SeedsFromTheClock, "clone fitted on the same data"),
        (SavesInSinglePrecision, r"round trip changes SavesInSinglePrecision.coef_ \(its values\)"),
        (SavesInFortranOrder, r"round trip changes .*coef_ \(memory order"),
        (ShiftsItsScoresWhenLoaded, "decision_function differs after a save_model/load_model round trip by more than rounding"),
        (FlipsALabelWhenLoaded, "predict differs after a save_model/load_model round trip at 1 entries"),
        (ForgetsItsWeightsWhenSaved, "save_model/load_model"),
        (CloneKeepsTheFit, "clone of a fitted estimator carries fitted attributes"),
        (AcceptsInfinity, "inf in X"),
        (FitsNothingOnEmptyInput, "an X without rows"),
        (BrokenFirstStep, r"certificate_\[0\] has gap=nan"),
        (LastStepDidNotConverge, r"certificate_\[1\] did not converge"),
        (NegativeIterationCount, "n_iter=-1"),
        # save_model refuses the undeclared type before the certificate check reaches it; either names it.
        (NotACertificate, r"certificate_ is a dict, not a Certificate|certificate_ of the NotACertificate is a list whose "
                          r"item 0 is a dict"),
    ],
)
def test_broken_estimators_fail_the_extended_conformance_check(estimator, message):
    with pytest.raises(AssertionError, match=message):
        check_method(spec_of(estimator))


def test_parts_may_name_the_methods_own_solver_but_no_other_unregistered_part():
    own = MethodSpec(name="probe", estimator=BinaryRelevance, citation="A paper, 2024",
                     parts={"loss": "squared_hinge", "solver": "own"})  # fmt: skip
    check_method(own)
    for parts in ({"loss": "own"}, {"solver": "own_cd"}):
        spec = MethodSpec(name="probe", estimator=BinaryRelevance, citation="A paper, 2024", parts=parts)
        with pytest.raises(AssertionError, match="is not a registered"):
            check_method(spec)
