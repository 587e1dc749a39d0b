"""Checks for solvers and method plugins: certificates, convexity and plugin conformance.

Plugin authors call them from their own tests::

    from multilabel_core.testing.checks import check_method

    def test_my_method_conforms():
        check_method("my_method")

Every check returns None when it passes and raises AssertionError saying what failed.
"""

from __future__ import annotations

import copy
import math
from typing import Callable

import numpy as np

from ..certificate import Certificate
from ..datasets import make_correlated_multilabel
from ..plugins import get_method, list_components
from ..registry import COMPONENT_KINDS, MethodSpec

__all__ = ["check_convexity", "check_duality_gap", "check_kkt", "check_method"]


# -- certificates ---------------------------------------------------------------------


def _as_certificate(certificate) -> Certificate:
    if not isinstance(certificate, Certificate):
        raise AssertionError(f"expected a Certificate, got {type(certificate).__name__}")
    return certificate


def check_duality_gap(certificate, tol: float = 1e-6) -> None:
    """Weak duality and optimality: ``-tol <= gap / max(1, |primal|) <= tol``, all finite."""
    relative = _as_certificate(certificate).relative_gap
    if not math.isfinite(relative):
        raise AssertionError(f"the duality gap is not finite (gap={certificate.gap!r}, primal={certificate.primal!r})")
    if relative < -tol:
        raise AssertionError(
            f"negative duality gap {certificate.gap:.3g} (relative {relative:.3g} < -{tol:g}): weak duality "
            "P >= D is violated, so the primal or the dual objective is computed wrongly"
        )
    if relative > tol:
        raise AssertionError(f"relative duality gap {relative:.3g} > {tol:g}: the solution is not optimal")


def check_kkt(certificate, tol: float) -> None:
    """The largest violation of the optimality conditions is finite and at most ``tol``."""
    violation = _as_certificate(certificate).kkt_violation
    if not math.isfinite(violation) or violation > tol:
        raise AssertionError(f"KKT violation {violation!r} exceeds {tol:g} (solver {certificate.solver})")


# -- convexity --------------------------------------------------------------------------


def check_convexity(f: Callable, a, b, *, n_points: int = 11, rtol: float = 1e-9, atol: float = 1e-12) -> None:
    """``f`` lies below its chord on the segment [a, b].

    For theta on a grid of ``n_points`` in [0, 1], checks
    ``f((1 - theta) a + theta b) <= (1 - theta) f(a) + theta f(b)`` up to
    ``atol + rtol * (|f(a)| + |f(b)|)`` of round-off.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"a and b must have one shape, got {a.shape} and {b.shape}")
    fa, fb = float(f(a)), float(f(b))
    slack = atol + rtol * (abs(fa) + abs(fb))
    for theta in np.linspace(0.0, 1.0, n_points):
        value = float(f((1.0 - theta) * a + theta * b))
        chord = (1.0 - theta) * fa + theta * fb
        if not value <= chord + slack:
            raise AssertionError(
                f"not convex along the segment: at theta={theta:.3g}, f = {value!r} exceeds the chord {chord!r}"
            )


# -- method conformance -------------------------------------------------------------------


def check_method(method, *, random_state: int = 0, gap_tol: float = 1e-6) -> None:
    """Conformance of a registered method (its name or its :class:`MethodSpec`).

    Checks, in order: the registration fields; that the estimator is constructible with
    its defaults, stores its parameters unchanged and round-trips get_params/set_params;
    fitting a small problem from :func:`~multilabel_core.datasets.make_correlated_multilabel`
    (``fit`` returns self, ``n_features_in_`` and
    ``n_labels_`` set); that a clone fitted on the same data predicts the same;
    ``predict`` (int {0, 1}, (n, L)) and ``decision_function`` (float64, (n, L)) and
    ``predict == [decision_function > 0]``; ``certificate_`` (one Certificate or a
    sequence of them, one per outer step) with a finite final gap >= -gap_tol relative to
    the primal; ValueError for NaN in X, non-binary Y, mismatched or 1-D shapes and a
    wrong number of features at predict time; an error before ``fit``.
    """
    spec = get_method(method) if isinstance(method, str) else method
    if not isinstance(spec, MethodSpec):
        raise ValueError(f"method must be a registered name or a MethodSpec, got {method!r}")
    _check_registration(spec)
    estimator = _check_construction(spec, random_state)
    data = make_correlated_multilabel(n_samples=60, n_features=5, n_labels=3, random_state=random_state)
    X, Y = data.X, data.Y
    _check_unfitted(estimator, X)
    fitted = _fit(estimator, X, Y)
    _check_outputs(fitted, X, Y)
    _check_clone(estimator, fitted, X, Y)
    _check_certificates(fitted, gap_tol)
    _check_input_validation(estimator, fitted, X, Y)


def _check_registration(spec: MethodSpec) -> None:
    where = f"method {spec.name!r}"
    if not spec.citation.strip():
        raise AssertionError(f"{where}: the citation is empty")
    for name in ("fit", "predict", "decision_function", "get_params", "set_params"):
        if not callable(getattr(spec.estimator, name, None)):
            raise AssertionError(f"{where}: estimator {spec.estimator.__name__} has no method {name}")
    for kind, name in spec.parts.items():
        if kind not in COMPONENT_KINDS:
            raise AssertionError(f"{where}: parts has role {kind!r}, not one of {COMPONENT_KINDS}")
        known = {component.name for component in list_components(kind)}
        if name not in known:
            raise AssertionError(f"{where}: part {kind}={name!r} is not a registered {kind} ({sorted(known)})")
    valid = set(spec.estimator().get_params(deep=False))
    for name, values in spec.param_grid.items():
        if name not in valid:
            raise AssertionError(f"{where}: param_grid names {name!r}, which is not a parameter of the estimator")
        if isinstance(values, str) or not hasattr(values, "__len__") or len(values) == 0:
            raise AssertionError(f"{where}: param_grid[{name!r}] must be a non-empty list, got {values!r}")


def _check_construction(spec: MethodSpec, random_state: int):
    estimator = spec.estimator()
    params = estimator.get_params(deep=False)
    if "random_state" in params:
        estimator.set_params(random_state=random_state)
        params = estimator.get_params(deep=False)
    rebuilt = spec.estimator(**params)
    for name, value in params.items():
        if getattr(rebuilt, name) is not value:
            raise AssertionError(f"__init__ of {spec.estimator.__name__} does not store parameter {name!r} unchanged")
    if rebuilt.get_params(deep=False).keys() != params.keys():
        raise AssertionError(f"{spec.estimator.__name__}: get_params differs between two equal estimators")
    if rebuilt.set_params(**params) is not rebuilt:
        raise AssertionError(f"{spec.estimator.__name__}.set_params does not return self")
    return estimator


def _clone(estimator):
    return type(estimator)(**copy.deepcopy(estimator.get_params(deep=False)))


def _fit(estimator, X, Y):
    fitted = _clone(estimator)
    if fitted.fit(X, Y) is not fitted:
        raise AssertionError(f"{type(fitted).__name__}.fit does not return self")
    if getattr(fitted, "n_features_in_", None) != X.shape[1] or getattr(fitted, "n_labels_", None) != Y.shape[1]:
        raise AssertionError(f"{type(fitted).__name__}.fit does not set n_features_in_ and n_labels_")
    return fitted


def _check_unfitted(estimator, X) -> None:
    for method in ("predict", "decision_function"):
        try:
            getattr(_clone(estimator), method)(X)
        except (ValueError, AttributeError):
            continue
        raise AssertionError(f"{type(estimator).__name__}.{method} before fit does not raise NotFittedError")


def _check_outputs(fitted, X, Y) -> None:
    name = type(fitted).__name__
    scores = fitted.decision_function(X)
    predictions = fitted.predict(X)
    for what, value in (("decision_function", scores), ("predict", predictions)):
        shape = getattr(value, "shape", None)
        if not isinstance(value, np.ndarray) or shape != Y.shape:
            raise AssertionError(f"{name}.{what} must return an ndarray of shape {Y.shape}, got {type(value).__name__} {shape}")
    if scores.dtype != np.float64:
        raise AssertionError(f"{name}.decision_function must return float64, got {scores.dtype}")
    if predictions.dtype.kind != "i" or not np.isin(predictions, (0, 1)).all():
        raise AssertionError(f"{name}.predict must return integers in {{0, 1}}, got dtype {predictions.dtype}")
    if not np.array_equal(predictions, (scores > 0).astype(predictions.dtype)):
        raise AssertionError(f"{name}.predict is not [decision_function > 0]")


def _check_clone(estimator, fitted, X, Y) -> None:
    again = _fit(estimator, X, Y)
    if not np.allclose(again.decision_function(X), fitted.decision_function(X), rtol=1e-7, atol=1e-9):
        raise AssertionError(f"{type(estimator).__name__}: a clone fitted on the same data gives other scores")


def _check_certificates(fitted, gap_tol: float) -> None:
    name = type(fitted).__name__
    certificates = getattr(fitted, "certificate_", None)
    if certificates is None:
        raise AssertionError(f"{name} has no certificate_ after fit")
    if isinstance(certificates, Certificate):
        certificates = [certificates]
    if len(certificates) == 0:
        raise AssertionError(f"{name}.certificate_ is an empty sequence")
    final = _as_certificate(certificates[-1])
    if not math.isfinite(final.gap) or final.relative_gap < -gap_tol:
        raise AssertionError(f"{name}.certificate_ has gap {final.gap!r}: it must be finite and >= -{gap_tol:g} (relative)")


def _check_input_validation(estimator, fitted, X, Y) -> None:
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    Y_bad = Y.astype(np.int64)
    Y_bad[0, 0] = 2
    cases = {
        "NaN in X": lambda: _clone(estimator).fit(X_nan, Y),
        "a non-binary Y": lambda: _clone(estimator).fit(X, Y_bad),
        "Y with fewer rows than X": lambda: _clone(estimator).fit(X, Y[:-1]),
        "a 1-D Y": lambda: _clone(estimator).fit(X, Y[:, 0]),
        "NaN in X at predict time": lambda: fitted.predict(X_nan),
        "X with an extra feature at predict time": lambda: fitted.predict(np.hstack([X, X[:, :1]])),
    }
    for case, call in cases.items():
        try:
            call()
        except ValueError:
            continue
        raise AssertionError(f"{type(estimator).__name__} does not raise ValueError for {case}")
