"""Certificate: ``converged`` never outlives a non-finite duality gap."""

import math
import warnings

import attrs
import pytest

from multilabel_core import Certificate
from multilabel_core.solvers import ConvergenceWarning

FIELDS = {"kkt_violation": 0.0, "n_iter": 3, "time": 0.0, "solver": "demo"}


@pytest.mark.parametrize(
    "primal, dual",
    [(1.0, -math.inf), (math.inf, 0.0), (1.0, math.nan), (math.nan, 0.0)],
    ids=["dual=-inf", "primal=inf", "dual=nan", "primal=nan"],
)
def test_a_non_finite_gap_is_never_converged(primal, dual):
    with pytest.warns(ConvergenceWarning, match=r"demo.*gap=(inf|nan)"):
        certificate = Certificate.from_objectives(primal, dual, converged=True, **FIELDS)
    assert not math.isfinite(certificate.gap)
    assert certificate.converged is False


def test_the_invariant_holds_for_every_way_of_building_a_certificate():
    with pytest.warns(ConvergenceWarning):
        direct = Certificate(1.0, math.nan, math.nan, 0.0, 1, 0.0, True, "demo")
    assert direct.converged is False
    finite = Certificate.from_objectives(1.0, 1.0, converged=True, **FIELDS)
    with pytest.warns(ConvergenceWarning):
        evolved = attrs.evolve(finite, gap=math.inf)
    assert evolved.converged is False


def test_a_finite_gap_keeps_the_solvers_verdict_silently():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        converged = Certificate.from_objectives(2.0, 2.0 - 1e-9, converged=True, **FIELDS)
        stopped = Certificate.from_objectives(2.0, 1.0, converged=False, **FIELDS)
        # A solver that already reports converged=False (and warned itself) is not warned about again.
        no_dual = Certificate.from_objectives(2.0, math.nan, converged=False, **FIELDS)
    assert converged.converged is True and stopped.converged is False and no_dual.converged is False


# -- extreme scales: a relative gap never hides an overflow or lost precision ----------------------------------

import sys  # noqa: E402

import numpy as np  # noqa: E402

from multilabel_core import list_methods, make_method  # noqa: E402
from multilabel_core.certificate import CERTIFIABLE_MAGNITUDE, relative_gap, within_gap_rtol  # noqa: E402
from multilabel_core.datasets import make_correlated_multilabel  # noqa: E402
from multilabel_core.testing.fuzz import method_cases  # noqa: E402

EPS = sys.float_info.epsilon


@pytest.mark.parametrize(
    "gap, primal, dual",
    [(0.1, math.inf, math.inf), (0.1, 1.0, -math.inf), (math.inf, math.inf, 1.0), (0.1, 1e300, 1e300),
     (0.05, 3.66e294, 3.66e294), (0.0, -1e200, -1e200)],
    ids=["primal=inf", "dual=-inf", "gap=inf", "1e300", "prml gamma1=1e300", "-1e200"],
)
def test_an_overflowed_or_uncertifiably_large_objective_has_an_infinite_relative_gap(gap, primal, dual):
    # Before: 0.1 / inf = 0 and 0.05 / 3.66e294 = 1.4e-296, both "within GAP_RTOL".
    assert relative_gap(gap, primal, dual) == math.inf
    assert not within_gap_rtol(primal, dual)


def test_the_relative_gap_is_never_below_the_rounding_of_primal_minus_dual():
    # A gap of 0.1 on objectives of 1e20 is below their resolution (eps * 1e20 = 2.2e4): it is not measured.
    assert relative_gap(0.1, 1e20, 1e20) == pytest.approx(EPS)
    assert relative_gap(0.0, 5.0, 5.0) == pytest.approx(EPS)  # resolution 5 eps on the scale max(1, 5)
    assert relative_gap(0.0, 0.25, 0.25) == pytest.approx(0.25 * EPS)
    # A dual above its primal by more than rounding stays negative and visible; a finite gap is as before.
    assert relative_gap(-1.0, 100.0, 101.0) == pytest.approx(-0.01)
    assert relative_gap(2.0, 100.0, 98.0) == pytest.approx(0.02)
    assert relative_gap(2.0, 100.0) == pytest.approx(0.02)  # without the dual: the primal's resolution
    assert math.isnan(relative_gap(math.nan, 1.0, 1.0)) and math.isnan(relative_gap(0.1, 1.0, math.nan))


@pytest.mark.parametrize(
    "primal, dual, gap",
    [(math.inf, math.inf, 0.1), (3.66e294, 3.66e294, 0.05), (2.0 * CERTIFIABLE_MAGNITUDE, 2.0 * CERTIFIABLE_MAGNITUDE, 0.0)],
    ids=["primal overflowed, gap of a sub-problem", "prml gamma1=1e300", "twice the magnitude limit"],
)
def test_a_certificate_beyond_what_float64_certifies_is_never_converged(primal, dual, gap):
    # The gap is given apart (a sub-problem's), as PrML's rounds do; before, a finite gap kept converged=True.
    with pytest.warns(ConvergenceWarning, match=r"demo reported convergence.*certifies nothing"):
        certificate = Certificate(primal, dual, gap, 0.0, 3, 0.0, True, "demo")
    assert certificate.converged is False and certificate.relative_gap == math.inf


def test_the_magnitude_limit_itself_is_certifiable():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        certificate = Certificate.from_objectives(CERTIFIABLE_MAGNITUDE, CERTIFIABLE_MAGNITUDE, converged=True, **FIELDS)
    assert certificate.converged and certificate.relative_gap == pytest.approx(EPS)


def _certificates(estimator) -> list:
    found = []
    for name in ("certificate_", "step_certificates_"):
        value = getattr(estimator, name, None)
        found += [value] if isinstance(value, Certificate) else list(value or [])
    return found


def _fit_recorded(estimator, X, Y, **fit_kwargs):
    """Fit with every warning recorded and numpy's default overflow reporting; the exception if one was raised."""
    with warnings.catch_warnings(record=True) as caught, np.errstate(over="warn"):
        warnings.simplefilter("always")
        try:
            estimator.fit(X, Y, **fit_kwargs)
            error = None
        except ValueError as exc:  # a refusal with the scale rule
            error = exc
    return error, caught


def _check_overflow_is_reported(name, estimator, error, caught):
    if error is not None:
        return
    overflowed = [w for w in caught if issubclass(w.category, RuntimeWarning) and "overflow" in str(w.message)]
    reported = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    certificates = _certificates(estimator)
    for certificate in certificates:
        if certificate.converged:
            # A converged certificate carries finite numbers within the certifiable range, and a real relative gap.
            assert math.isfinite(certificate.relative_gap), (name, certificate)
            assert max(abs(certificate.primal), abs(certificate.dual)) <= CERTIFIABLE_MAGNITUDE, (name, certificate)
    if overflowed:
        assert reported, f"{name} overflowed ({overflowed[0].message}) and issued no ConvergenceWarning"
        if certificates:
            assert not all(c.converged for c in certificates), f"{name} overflowed and reports every certificate converged"


FUZZ_SCALES = {"X * 1e300", "X * 1e160 (squares overflow)"}


@pytest.mark.parametrize("name", [spec.name for spec in list_methods()])
def test_the_fuzz_numerics_scales_never_hide_an_overflow(name):
    """The fuzz matrix's numerics cases X * 1e160 and X * 1e300, and X * 1e150 (squares of the features
    overflow only in sums), run directly: a fit either refuses (ValueError), or every converged certificate is
    certifiable, and a fit that overflowed on the way issued a ConvergenceWarning and is not all converged."""
    cases = [case for case in method_cases(name) if case.name in FUZZ_SCALES]
    assert len(cases) == len(FUZZ_SCALES)
    data = make_correlated_multilabel(30, 5, 3, random_state=0)  # the fuzz matrix's problem
    X, Y = np.asarray(data.X, dtype=np.float64), np.asarray(data.Y)
    runs = [(case.params, *case.data()) for case in cases] + [({}, X * 1e150, Y, None, {})]
    for params, X_case, Y_case, _, fit_kwargs in runs:
        estimator = make_method(name, **params)
        error, caught = _fit_recorded(estimator, X_case, Y_case, **fit_kwargs)
        _check_overflow_is_reported(name, estimator, error, caught)


@pytest.mark.parametrize("gamma1", [1e10, 1e100, 1e200, 1e300])
def test_prml_with_a_huge_gamma1_reports_not_converged(gamma1):
    # Before: converged with overflow warnings and a primal of 3.7e294 (a sub-problem's gap of 0.05 on top),
    # and from gamma1 = 1e10 up an objective increase of 4.6 relative at the third round taken for convergence.
    data = make_correlated_multilabel(30, 5, 3, random_state=0)
    estimator = make_method("prml", gamma1=gamma1)
    error, caught = _fit_recorded(estimator, np.asarray(data.X, dtype=np.float64), np.asarray(data.Y))
    assert error is None
    _check_overflow_is_reported("prml", estimator, error, caught)
    messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert any("AlternatingSolver" in message for message in messages), messages
    if gamma1 >= 1e200:
        assert estimator.certificate_[-1].converged is False and estimator.certificate_[-1].relative_gap == math.inf
