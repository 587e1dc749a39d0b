"""multilabel_core.validation, the checks plugins validate with: signs, the one symmetry rule,
the attrs validators and the public convergence warning."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import attrs
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import multilabel_core.validation as validation
from multilabel_core.testing.strategies import spd_matrices
from multilabel_core.validation import (
    SYMMETRY_RTOL,
    check_signs,
    check_symmetric,
    count,
    flag,
    non_negative,
    optional_count,
    positive,
    real,
)

# ------------------------------------------------------------------ check_signs


def test_check_signs_returns_float64_signs():
    Y = np.array([[1, -1], [-1, 1], [1, 1]], dtype=np.int8)
    signs = check_signs(Y, 3)
    assert signs.dtype == np.float64
    np.testing.assert_array_equal(signs, Y)
    np.testing.assert_array_equal(check_signs(sp.csr_matrix(Y)), Y)


@pytest.mark.parametrize(
    "Y, n_samples, message",
    [
        (np.ones(3), None, r"2-D \(n_samples, n_labels >= 1\) matrix of signs"),
        (np.ones((3, 0)), None, "n_labels >= 1"),
        (np.ones((3, 2)), 4, "T has 3 rows but X has 4"),
        (np.array([["1", "-1"]]), None, "dtype <U2"),
        (np.array([[1.0, 0.0]]), None, r"signs -1 and \+1 only; found 0.0 at row 0, label 1 .*to_signs"),
        (np.array([[1.0], [np.nan]]), None, "found nan at row 1, label 0"),
        (np.array([[1.0, 2.0]]), None, "found 2.0"),
    ],
)
def test_check_signs_refuses_what_is_not_a_sign_matrix(Y, n_samples, message):
    with pytest.raises(ValueError, match=message):
        check_signs(Y, n_samples, name="T")


# ------------------------------------------------------------------ check_symmetric


def skewed(n: int, scale: float, relative: float) -> np.ndarray:
    """The symmetric ones(n, n) * scale with entry (0, n-1) moved by relative * scale."""
    M = np.full((n, n), scale)
    M[0, n - 1] += relative * scale
    return M


@given(st.integers(-300, 300))
def test_the_rule_is_relative_to_the_largest_entry_at_every_scale(exponent):
    scale = 2.0**exponent
    within = check_symmetric(skewed(3, scale, 0.5 * SYMMETRY_RTOL), "S")
    np.testing.assert_array_equal(within, within.T)
    with pytest.raises(ValueError, match=r"S must be symmetric: its largest asymmetry"):
        check_symmetric(skewed(3, scale, 4 * SYMMETRY_RTOL), "S")


@given(spd_matrices())
def test_a_symmetric_matrix_is_returned_unchanged_in_a_copy(A):
    for M in (A, np.triu(A) + np.triu(A, 1).T):
        result = check_symmetric(M, "A")
        np.testing.assert_array_equal(result, M)
        assert result is not M and not np.shares_memory(result, M)


def test_symmetrising_averages_the_two_triangles_exactly():
    M = np.array([[2.0, 1.0 + 2e-9], [1.0 - 2e-9, 3.0]])
    result = check_symmetric(M, "M")
    assert result[0, 1] == result[1, 0] == 1.0
    assert M[0, 1] == 1.0 + 2e-9  # the input is not modified


def test_entries_near_the_largest_double_do_not_overflow():
    big = np.finfo(np.float64).max
    M = np.array([[big, big], [big * (1 - 1e-12), big]])
    assert np.all(np.isfinite(check_symmetric(M, "M")))


def test_copy_false_keeps_an_exactly_symmetric_float64_matrix():
    K = np.eye(4)
    assert check_symmetric(K, "K", copy=False) is K
    near = K.copy()
    near[0, 1] = 1e-12
    out = check_symmetric(near, "K", copy=False)
    assert out is not near and out[0, 1] == out[1, 0] == 0.5e-12


def test_the_zero_matrix_is_symmetric():
    np.testing.assert_array_equal(check_symmetric(np.zeros((2, 2)), "Z"), np.zeros((2, 2)))


@pytest.mark.parametrize("n", [5, 37])
def test_the_blocked_check_and_symmetrisation_see_every_block(monkeypatch, n):
    # A budget of two rows per block: the asymmetric entry sits in the last block.
    monkeypatch.setattr(validation, "BLOCK_BUDGET_BYTES", 2 * 16 * n)
    rng = np.random.default_rng(n)
    F = rng.standard_normal((n, 3))
    G = F @ F.T
    G[n - 1, 0] += 1e-3
    with pytest.raises(ValueError, match="symmetric"):
        check_symmetric(G, "G")
    G[n - 1, 0] = G[0, n - 1] * (1 + 1e-12)
    result = check_symmetric(G, "G")
    np.testing.assert_array_equal(result, result.T)
    np.testing.assert_allclose(result, F @ F.T, rtol=1e-11, atol=1e-12)
    G[n - 1, n - 2] = np.nan
    with pytest.raises(ValueError, match="G contains NaN or infinity"):
        check_symmetric(G, "G")


@pytest.mark.parametrize(
    "M, message",
    [
        (np.ones((2, 3)), r"Q must be a non-empty square matrix, got shape \(2, 3\)"),
        (np.ones((0, 0)), "non-empty square"),
        (np.ones(3), "square"),
        (np.array([[1.0, np.inf], [np.inf, 1.0]]), "Q contains NaN or infinity"),
        (np.array([["a"]]), "Q must be numeric"),
        (np.eye(2) * 1j, "Q is complex"),
        (sp.eye(2).tocsr(), "Q is sparse"),
        (np.array([[1.0, 0.5], [0.2, 1.0]]), "Q must be symmetric"),
    ],
)
def test_check_symmetric_refuses_naming_the_matrix(M, message):
    with pytest.raises(ValueError, match=message):
        check_symmetric(M, "Q")


def test_the_core_components_follow_the_one_rule():
    from multilabel_core.kernels import PrecomputedKernel
    from multilabel_core.regularizers import LabelCovariance
    from multilabel_core.relations import LearnedCovariance, correlation_from_covariance

    # Asymmetric at 1e-9 relative: accepted everywhere (was refused at 1e-10 by LabelCovariance).
    near = np.array([[2.0, 1.0 + 2e-9], [1.0, 2.0]])
    omega = LabelCovariance(near).omega
    np.testing.assert_array_equal(omega, omega.T)
    assert np.all(np.isfinite(LearnedCovariance().update(near)))
    np.testing.assert_array_equal(correlation_from_covariance(near), correlation_from_covariance(near).T)
    K = PrecomputedKernel()(near)
    np.testing.assert_array_equal(K, K.T)
    # Asymmetric at 1e-6 relative: refused everywhere, naming the matrix.
    far = np.array([[2.0, 1.0 + 2e-6], [1.0, 2.0]])
    for build, name in [
        (lambda: LabelCovariance(far), "omega"),
        (lambda: LearnedCovariance().update(far), "gram"),
        (lambda: correlation_from_covariance(far), "omega"),
        (lambda: PrecomputedKernel()(far), "precomputed kernel"),
    ]:
        with pytest.raises(ValueError, match=f"{name} must be symmetric"):
            build()


def test_the_smo_kernel_cache_gives_the_same_verdict():
    from multilabel_core.solvers import _kernel_cache
    from multilabel_core.solvers._kernel_cache import KernelColumns

    assert _kernel_cache.SYMMETRY_RTOL is SYMMETRY_RTOL  # the one constant, not a copy of its value
    KernelColumns(skewed(4, 3.0, 0.5 * SYMMETRY_RTOL))
    with pytest.raises(ValueError, match="the kernel matrix must be symmetric"):
        KernelColumns(skewed(4, 3.0, 4 * SYMMETRY_RTOL))


def test_a_precomputed_training_kernel_is_not_copied_when_symmetric():
    from multilabel_core.kernels import PrecomputedKernel

    K = np.array([[1.0, 0.5], [0.5, 1.0]])
    assert PrecomputedKernel()(K) is K
    # Test rows against the training rows: rectangular, never checked for symmetry.
    assert PrecomputedKernel()(np.array([[1.0, 0.2]]), K).shape == (1, 2)


# ------------------------------------------------------------------ attrs validators


@attrs.frozen
class Component:
    C: float = attrs.field(default=1.0, validator=positive)
    epsilon: float = attrs.field(default=0.0, validator=non_negative)
    coef0: float = attrs.field(default=0.0, validator=real)
    max_iter: int = attrs.field(default=10, validator=count)
    budget: int | None = attrs.field(default=None, validator=optional_count)
    shrinking: bool = attrs.field(default=True, validator=flag)
    gamma: float | None = attrs.field(default=None, validator=attrs.validators.optional(positive))


def test_validators_accept_their_values():
    Component(C=np.float32(0.5), epsilon=0, coef0=-3, max_iter=np.int64(1), budget=7, shrinking=np.bool_(False), gamma=2.0)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("C", 0.0, "C must be > 0.0"),
        ("C", np.nan, "C must be finite"),
        ("C", np.inf, "C must be finite"),
        ("C", "1", "C must be a Real"),
        ("C", True, "C must be a Real"),
        ("epsilon", -1e-300, "epsilon must be >= 0.0"),
        ("coef0", np.nan, "coef0 must be finite"),
        ("max_iter", 0, "max_iter must be >= 1"),
        ("max_iter", 2.0, "max_iter must be a Integral"),
        ("max_iter", True, "max_iter must be a Integral"),
        ("budget", 0, "budget must be >= 1"),
        ("shrinking", 1, "shrinking must be True or False"),
        ("gamma", -1.0, "gamma must be > 0.0"),
    ],
)
def test_validators_refuse_naming_the_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        Component(**{field: value})


# ------------------------------------------------------------------ the public module


def test_convergence_warning_is_the_solvers_and_warn_not_converged_issues_it():
    from multilabel_core.solvers import ConvergenceWarning

    assert validation.ConvergenceWarning is ConvergenceWarning
    with pytest.warns(ConvergenceWarning, match="my_solver did not converge: 3 iterations"):
        validation.warn_not_converged("my_solver", "3 iterations")


def test_every_name_in_all_is_importable():
    namespace: dict = {}
    exec("from multilabel_core.validation import *", namespace)
    assert set(validation.__all__) <= set(namespace)
    assert set(validation.__all__) <= set(dir(validation))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        validation.nothing  # noqa: B018


@pytest.mark.parametrize(
    "script",
    [
        "import multilabel_core.validation",
        "from multilabel_core.validation import ConvergenceWarning, warn_not_converged, check_signs",
        "import multilabel_core.validation as v; import multilabel_core.solvers as s; "
        "assert v.ConvergenceWarning is s.ConvergenceWarning",
    ],
)
def test_the_module_imports_first_in_a_fresh_interpreter(script):
    # A fresh process: the import order of this test session cannot hide a circular import.
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=Path(sys.executable).parent)
    assert done.returncode == 0, done.stderr


# ------------------------------------------------------------------ the plugin guide's section

GUIDE = (Path(__file__).resolve().parents[1] / "docs" / "plugin-guide.md").read_text()
SECTION = GUIDE[GUIDE.index("## Validating inputs"):GUIDE.index("## Testing your plugin")]


@pytest.mark.parametrize("name", validation.__all__)
def test_every_public_name_is_documented_in_the_plugin_guide(name):
    assert f"| `{name}" in SECTION or f"`{name}`" in SECTION.split("```")[0], name


def test_the_guide_example_runs():
    import math
    import re

    from multilabel_core.solvers import ConvergenceWarning

    [source] = re.findall(r"```python\n(.*?)```", SECTION, flags=re.S)
    namespace: dict = {}
    exec(compile(source, "plugin-guide.md", "exec"), namespace)
    with pytest.raises(ValueError, match="strength must be > 0.0, got -1"):
        namespace["Shrinkage"](-1)
    assert namespace["fixed_point"](math.cos, 1.0) == pytest.approx(0.7390851332, abs=1e-8)
    with pytest.raises(ValueError, match="max_iter must be >= 1"):
        namespace["fixed_point"](math.cos, 1.0, max_iter=0)
    with pytest.warns(ConvergenceWarning, match=r"fixed_point did not converge: max_iter=3 steps, last change 2 > tol=1e-08"):
        namespace["fixed_point"](lambda x: -x, 1.0, max_iter=3)
