"""The Euclidean projection onto the simplex (the lambda-step of Algorithm 2) is exact."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from multilabel_core_plugins.ranking import project_simplex

VECTORS = hnp.arrays(
    np.float64, st.integers(1, 12), elements=st.floats(-50, 50, allow_nan=False, allow_subnormal=False)
)


def bisection_projection(v):
    """Reference: the threshold theta of max(v - theta, 0) found by bisection on sum max(v - theta, 0) = 1.

    The sum is continuous and decreasing in theta, above 1 at theta = min(v) - 1 and 0 at
    theta = max(v); no sorting is involved, unlike the implementation.
    """
    low, high = v.min() - 1.0, v.max()
    for _ in range(200):
        middle = 0.5 * (low + high)
        if np.maximum(v - middle, 0.0).sum() > 1.0:
            low = middle
        else:
            high = middle
    return np.maximum(v - 0.5 * (low + high), 0.0)


@given(VECTORS)
def test_the_projection_equals_the_bisection_reference(v):
    np.testing.assert_allclose(project_simplex(v), bisection_projection(v), rtol=0, atol=1e-9)


@given(VECTORS)
def test_the_projection_lies_on_the_simplex(v):
    projection = project_simplex(v)
    assert projection.min() >= 0.0
    assert abs(projection.sum() - 1.0) <= 1e-12 * v.size


@given(VECTORS, st.integers(0, 2**32 - 1))
def test_no_point_of_the_simplex_is_closer(v, seed):
    # The variational inequality of a projection: (v - p)^T (z - p) <= 0 for every z on the simplex.
    projection = project_simplex(v)
    points = np.random.default_rng(seed).dirichlet(np.ones(v.size), size=20)
    assert np.all((points - projection) @ (v - projection) <= 1e-9 * (1.0 + np.abs(v).max()))


@given(VECTORS, st.floats(-100, 100, allow_nan=False))
def test_a_shift_along_the_ones_vector_changes_nothing(v, shift):
    np.testing.assert_allclose(project_simplex(v + shift), project_simplex(v), atol=1e-9)


def test_a_point_of_the_simplex_is_its_own_projection():
    point = np.array([0.2, 0.0, 0.5, 0.3])
    np.testing.assert_allclose(project_simplex(point), point, atol=1e-15)


@pytest.mark.parametrize("bad", [np.array([]), np.ones((2, 2)), np.array([1.0, np.nan]), np.array([np.inf, 0.0])])
def test_malformed_vectors_are_refused(bad):
    with pytest.raises(ValueError):
        project_simplex(bad)
