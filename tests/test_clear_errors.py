"""Clear errors where raw ones were: the interior-point method at extreme feature scales, and
``make_method`` given a MethodSpec.

PrML, PrBR and LEML on a finite X scaled by 1e150 said "array must not contain infs or NaNs"
(scipy's ``cho_factor`` inside the interior-point method) after overflow warnings; now their
solver refuses a features' scale above ``MAX_FEATURE_SCALE`` before any work, naming the scale and
the remedy, and any Newton matrix that overflows anyway is refused with the same advice.
``make_method(spec)`` raised ``TypeError: unhashable type: 'dict'``; it now builds the spec's
estimator, and any other non-name is a ValueError naming ``name``.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import multilabel_core
from multilabel_core.plugins import get_method, list_methods, make_method
from multilabel_core.registry import MethodSpec
from multilabel_core_plugins.prml import interior_point
from multilabel_core_plugins.prml.svmplus import embedded_hinge_ipm

#: The methods solved by the privileged family's solver, whose sub-problems go to the interior-point method.
IPM_SOLVERS = ("privileged_cd", "prml_alternating")
IPM_METHODS = sorted(spec.name for spec in list_methods() if spec.parts.get("solver") in IPM_SOLVERS)

SCALE_REFUSAL = r"the features' scale max_j \|\|x_j\|\| = (\S+) is above 1e\+50, the largest PrivilegedCDSolver computes with"


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 5))
    Y = (rng.random((30, 3)) < 0.4).astype(int)
    Y[0], Y[1] = 1, 0  # both classes in every label
    return X, Y


def test_the_interior_point_methods_are_found_in_the_registry():
    assert {"prml", "prbr", "leml"} <= set(IPM_METHODS)


@pytest.mark.parametrize("method", IPM_METHODS)
@pytest.mark.parametrize("factor", [1e150, 1e300, 1e60])
@pytest.mark.parametrize("form", ["dense", "csr"])
def test_a_huge_feature_scale_is_refused_with_the_scale_rule(data, method, factor, form):
    X, Y = data
    expected = np.linalg.norm(X, axis=1).max() * factor
    X = X * factor
    X = sp.csr_matrix(X) if form == "csr" else X
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match=SCALE_REFUSAL) as raised:
            make_method(method).fit(X, Y)
    shown = float(re.search(SCALE_REFUSAL, str(raised.value))[1])
    assert shown == pytest.approx(expected, rel=5e-3)  # printed with 3 significant digits
    assert "infs or NaNs" not in str(raised.value) and "standardise" in str(raised.value)
    # Refused before any work: nothing overflowed on the way.
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]


@pytest.mark.parametrize("method", IPM_METHODS)
@pytest.mark.parametrize("scale", [0.0, 1e-300, 1e-310, 5e49])
def test_scales_within_the_rule_still_fit(data, method, scale):
    X, Y = data
    X = X / np.linalg.norm(X, axis=1).max() * scale
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # at 5e49 the fit may stop short of tol: a ConvergenceWarning, not our subject
        estimator = make_method(method).fit(X, Y)
    assert np.all(np.isfinite(estimator.coef_)) and estimator.predict(X).shape == Y.shape


def test_the_bound_is_the_documented_one():
    assert interior_point.MAX_FEATURE_SCALE == 1e50


def test_a_newton_matrix_that_overflows_is_refused_in_words_not_by_lapack():
    matrix = np.eye(3)
    matrix[1, 2] = matrix[2, 1] = np.inf
    with pytest.raises(ValueError, match="the interior-point Newton matrix overflowed float64: the features' scale and C"):
        interior_point.robust_cholesky(matrix)


def test_the_ipm_called_directly_on_overflowing_rows_says_so(data):
    X, Y = data
    signs = np.where(Y[:, :1] > 0, 1.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the Gram overflows before the check sees it
        with pytest.raises(ValueError, match="Newton matrix overflowed float64.*rescale the features"):
            embedded_hinge_ipm(X * 1e150, signs, 1.0, embedding=None, fit_intercept=True, tol=1e-3, max_iter=50)


@given(
    arrays(np.float64, st.tuples(st.integers(1, 40), st.integers(1, 6)),
           elements=st.floats(1e-3, 1e3) | st.floats(-1e3, -1e-3) | st.just(0.0)),
    st.integers(-900, 900),
)
def test_feature_scale_is_the_largest_row_norm_at_any_scale(X, k):
    d = X.shape[1]
    rtol = 4 * d * np.finfo(float).eps  # a sum of d squares and a square root, each rounded
    reference = float(np.sqrt(np.max(np.sum(X * X, axis=1))))
    np.testing.assert_allclose(interior_point.feature_scale(X), reference, rtol=rtol)
    # Scaling by a power of two is exact, so the scaled rows' norm is 2^k times the reference even
    # where squaring them would overflow (k = 900: entries up to 8.5e273) or underflow.
    factor = 2.0**k
    np.testing.assert_allclose(interior_point.feature_scale(X * factor), reference * factor, rtol=rtol)
    np.testing.assert_allclose(interior_point.feature_scale(sp.csr_matrix(X * factor)), reference * factor, rtol=rtol)


# ---------------------------------------------------------------- make_method and a MethodSpec


@pytest.mark.parametrize("spec", list_methods(), ids=lambda spec: spec.name)
def test_make_method_accepts_a_registered_method_spec(spec):
    built = make_method(spec)
    assert type(built) is spec.estimator
    assert built.get_params() == make_method(spec.name).get_params()
    assert multilabel_core.make_method(spec).get_params() == built.get_params()


def test_make_method_with_a_spec_checks_parameters_and_wraps_preprocessing():
    spec = get_method("br")
    assert make_method(spec, C=3.0).get_params()["C"] == 3.0
    with pytest.raises(ValueError, match="method 'br' has no parameter 'bogus'"):
        make_method(spec, bogus=1)
    wrapped = make_method(spec, preprocess="standardize", C=2.0)
    assert type(wrapped).__name__ == "Preprocessed" and wrapped.get_params()["estimator"].C == 2.0


def test_make_method_builds_an_unregistered_spec_of_ones_own():
    own = MethodSpec(name="my_br", estimator=get_method("br").estimator, citation="own", description="mine")
    assert own.name not in {spec.name for spec in list_methods()}
    assert make_method(own, C=0.5).get_params()["C"] == 0.5


@pytest.mark.parametrize("name", [3, None, ["br"], {"name": "br"}, b"br"])
def test_make_method_refuses_other_names_with_a_value_error(name):
    with pytest.raises(ValueError, match=r"name must be a method name \(a str\) or a MethodSpec, got"):
        make_method(name)


def test_get_method_says_to_pass_a_specs_name():
    with pytest.raises(ValueError, match=r"name must be a method name \(a str\).*for a MethodSpec pass its name, 'br'"):
        get_method(get_method("br"))
