"""Parameter constraints declared as data, merged along the MRO, read by one validator.

Every registered method's estimator (and the two wrappers) declares a constraint for every
constructor parameter; the only exemptions are the deprecated spellings (``Unchecked`` with
the reason), which the class's rules check as the name they stand for.  No estimator of the
package overrides ``_validate_params``: the constraints and the small ``_check_parameter_rules``
hooks (rules between parameters) are the whole validation.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import multilabel_core as mlc
from multilabel_core.calibration import CalibratedMultiLabel
from multilabel_core.estimator import COMMON_PARAMETERS, MultiLabelEstimator
from multilabel_core.parameter_names import DEPRECATED
from multilabel_core.preprocessed import Preprocessed
from multilabel_core.validation import (
    COUNT,
    POSITIVE,
    AllOf,
    Constraint,
    Interval,
    NoneOr,
    Options,
    Unchecked,
    check_scalar,
    merged_constraints,
    validate_parameters,
)

SPECS = mlc.list_methods()


def _estimators():
    found = [(spec.name, spec.estimator()) for spec in SPECS]
    found.append(("calibrated", CalibratedMultiLabel(mlc.make_method("br"))))
    found.append(("preprocessed", Preprocessed(mlc.make_method("br"))))
    return found


ESTIMATORS = _estimators()
IDS = [name for name, _ in ESTIMATORS]

#: Values no parameter of a registered method takes: each constraint refuses some of them.
HOSTILE = [object(), "no-such-option", -1, 0, -0.5, 2.5, math.nan, math.inf, True, None, [1], 10**40]


@pytest.mark.parametrize(("name", "estimator"), ESTIMATORS, ids=IDS)
def test_every_constructor_parameter_has_a_declared_constraint(name, estimator):
    constraints = merged_constraints(type(estimator))
    params = estimator.get_params(deep=False)
    missing = sorted(set(params) - set(constraints))
    assert not missing, f"{name}: parameters without a constraint: {missing}"
    for parameter in params:
        assert isinstance(constraints[parameter], Constraint), (name, parameter)
    # The only exemptions: deprecated spellings, whose default is the DEPRECATED sentinel.
    exempt = {p for p in params if isinstance(constraints[p], Unchecked)}
    assert all(isinstance(params[p], str) and params[p] == DEPRECATED for p in exempt), (name, exempt)


@pytest.mark.parametrize(("name", "estimator"), ESTIMATORS, ids=IDS)
def test_the_defaults_meet_their_constraints(name, estimator):
    constraints = merged_constraints(type(estimator))
    for parameter, value in estimator.get_params(deep=False).items():
        assert constraints[parameter].accepts(value), (name, parameter, value)
    estimator._validate_params()


@pytest.mark.parametrize(("name", "estimator"), ESTIMATORS, ids=IDS)
def test_a_refused_value_is_a_value_error_naming_the_parameter_and_the_estimator(name, estimator):
    constraints = merged_constraints(type(estimator))
    refused = 0
    for parameter, constraint in constraints.items():
        if parameter not in estimator.get_params(deep=False):
            continue
        for value in HOSTILE:
            if constraint.accepts(value):
                continue
            probe = type(estimator)(**{**estimator.get_params(deep=False), parameter: value})
            with pytest.raises(ValueError) as error:
                probe._validate_params()
            message = str(error.value)
            assert parameter in message and type(estimator).__name__ in message, (name, parameter, value, message)
            refused += 1
    assert refused, f"{name}: no hostile value refused: the constraints would be decorative"


def test_no_estimator_of_the_package_overrides_the_validator():
    for name, estimator in ESTIMATORS:
        for klass in type(estimator).__mro__:
            if klass is MultiLabelEstimator:
                break
            assert "_validate_params" not in vars(klass), f"{name}: {klass.__name__} overrides _validate_params"


def test_subclass_entries_add_to_and_replace_their_bases():
    class Base(MultiLabelEstimator):
        _parameter_constraints = {"alpha": POSITIVE, "depth": COUNT}

        def __init__(self, alpha=1.0, depth=2, C=1.0):
            self.alpha, self.depth, self.C = alpha, depth, C

    class Child(Base):
        _parameter_constraints = {"alpha": Interval(numbers.Real, 0.0, 1.0)}

    merged = merged_constraints(Child)
    assert merged["alpha"] == Interval(numbers.Real, 0.0, 1.0) and merged["depth"] == COUNT
    assert merged["C"] is COMMON_PARAMETERS["C"]
    Child(alpha=0.0)._validate_params()
    with pytest.raises(ValueError, match=r"alpha must be <= 1.0, got 2.0 \(a parameter of Child\)"):
        Child(alpha=2.0)._validate_params()
    with pytest.raises(ValueError, match=r"alpha must be > 0.0"):
        Base(alpha=0.0)._validate_params()
    with pytest.raises(ValueError, match=r"^C = 1e\+300 is outside"):
        Child(C=1e300)._validate_params()


def test_a_constraint_that_is_not_one_is_refused_loudly():
    with pytest.raises(TypeError, match="not a multilabel_core.validation.Constraint"):
        validate_parameters({"x": 1}, {"x": lambda value: None})


# -- the kinds ------------------------------------------------------------------------------


@settings(deadline=None)
@given(
    value=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**30, 10**30), st.booleans(),
                    st.none(), st.text(max_size=3)),
    low=st.one_of(st.none(), st.floats(-10, 10)),
    span=st.one_of(st.none(), st.floats(0, 10)),
    low_inclusive=st.booleans(),
    high_inclusive=st.booleans(),
    integral=st.booleans(),
)  # fmt: skip
def test_interval_accepts_what_check_scalar_accepts(value, low, span, low_inclusive, high_inclusive, integral):
    high = None if low is None or span is None else low + span
    kind = numbers.Integral if integral else numbers.Real
    interval = Interval(kind, low, high, low_inclusive, high_inclusive)
    try:
        check_scalar(value, "v", kind=kind, low=low, high=high, low_inclusive=low_inclusive,
                     high_inclusive=high_inclusive)  # fmt: skip
        expected = True
    except ValueError:
        expected = False
    assert interval.accepts(value) is expected
    assert NoneOr(interval).accepts(value) is (value is None or expected)


def test_options_compare_as_values_without_confusing_types():
    options = Options(("cd", "lbfgs", None, 1))
    assert options.accepts("cd") and options.accepts(np.str_("lbfgs")) and options.accepts(None)
    assert options.accepts(1) and options.accepts(np.int64(1))
    assert not options.accepts(True) and not options.accepts(np.array(["cd", "cd"])) and not options.accepts("CD")
    with pytest.raises(ValueError, match=r"solver must be one of 'cd', 'lbfgs', None, 1, got 'newton'"):
        options.check("newton", "solver")


def test_all_of_gives_the_first_broken_rule():
    rule = AllOf(POSITIVE, Interval(numbers.Real, None, 1.0, high_inclusive=False))
    assert rule.accepts(0.5) and not rule.accepts(1.0) and not rule.accepts(-1.0)
    with pytest.raises(ValueError, match="tol must be > 0.0"):
        rule.check(-1.0, "tol")
    with pytest.raises(ValueError, match="tol must be < 1.0"):
        rule.check(2.0, "tol")
