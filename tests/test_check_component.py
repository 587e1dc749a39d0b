"""check_component over every registered loss, regulariser and kernel, and the bugs it must catch.

The registry-driven test finds the components through ``list_components``, so a plugin's
components are covered as soon as its plugin is installed.  A component whose factory has a
parameter without a default is built with the documented test parameters of
:data:`TEST_PARAMETERS`; a new one that is not listed there fails the test with a message
saying so (it is never skipped).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import Phase, settings

from multilabel_core import Frobenius, Hinge, Logistic, NuclearNorm, SquaredHinge
from multilabel_core.base import Kernel, Loss
from multilabel_core.kernels import LinearKernel, PolynomialKernel, RBFKernel
from multilabel_core.losses import EpsilonInsensitive
from multilabel_core.plugins import list_components, make_component
from multilabel_core.regularizers import FrobeniusLabelCovariance, LowRank
from multilabel_core.testing import check_component

#: Test parameters of the registered components whose factories have parameters without defaults.
#: low_rank: the induced regulariser sqrt(gamma) ||W||_* is convex only where its rank constraint is
#: inactive, so the rank exceeds min(d, L) of every drawn W (at most 6 x 5).
TEST_PARAMETERS = {("regularizer", "low_rank"): {"rank": 6}}

CHECKED_KINDS = ("loss", "regularizer", "kernel")


def _registered():
    return [(spec.kind, spec.name) for kind in CHECKED_KINDS for spec in list_components(kind)]


def _required_parameters(factory) -> list[str]:
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters
            if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


@pytest.mark.parametrize("kind, name", _registered())
def test_every_registered_component_has_its_declared_properties(kind, name):
    spec = next(spec for spec in list_components(kind) if spec.name == name)
    params = TEST_PARAMETERS.get((kind, name), {})
    missing = [p for p in _required_parameters(spec.factory) if p not in params]
    if missing:
        pytest.fail(f"{kind} {name!r} (plugin {spec.plugin!r}) has parameters without defaults {missing}: "
                    f"add documented test parameters for it to TEST_PARAMETERS in {__file__}")
    check_component(make_component(kind, name, **params), name=f"{kind} {name!r}")


def test_the_stock_components_are_all_found():
    found = set(_registered())
    assert {("loss", "hinge"), ("loss", "logistic"), ("regularizer", "nuclear_norm"), ("regularizer", "low_rank"),
            ("kernel", "rbf"), ("kernel", "precomputed")} <= found


@pytest.mark.parametrize(
    "component",
    [EpsilonInsensitive(epsilon=0.0), EpsilonInsensitive(epsilon=2.5), FrobeniusLabelCovariance(mu=0.0),
     FrobeniusLabelCovariance(mu=7.0), LowRank(rank=6, gamma=0.3), RBFKernel(gamma=0.05),
     PolynomialKernel(degree=2, coef0=0.0), PolynomialKernel(degree=5, gamma=0.1)],
    ids=repr,
)
def test_non_default_parameters(component):
    check_component(component)


# -- planted bugs -----------------------------------------------------------------------------


class WrongConjugate(Hinge):
    """Hinge whose conjugate is off by a factor 2 (e.g. a dropped 1/2 in a derivation)."""

    def conjugate(self, Y, U):
        return 2.0 * super().conjugate(Y, U)


class NonConvexLoss(Loss):
    """A "loss" 1 - cos(y t): smooth, its gradient exact, but not convex."""

    smooth = True

    def value(self, Y, T):
        return float(np.sum(1.0 - np.cos(np.asarray(Y) * np.asarray(T))))

    def gradient(self, Y, T):
        Y = np.asarray(Y)
        return Y * np.sin(Y * np.asarray(T))


class GradientTwice(Logistic):
    """Logistic loss whose gradient is twice the true one."""

    def gradient(self, Y, T):
        return 2.0 * super().gradient(Y, T)


class HalfGradientRegularizer(Frobenius):
    """1/2 ||W||^2 whose gradient is W / 2."""

    def gradient(self, W):
        return 0.5 * super().gradient(W)


class ShrinkByHalfStep(NuclearNorm):
    """Nuclear norm whose prox shrinks the singular values by step / 2 instead of step."""

    def prox(self, W, step):
        return super().prox(W, step / 2.0)


class IdentityProx(NuclearNorm):
    """A "prox" that returns its argument."""

    def prox(self, W, step):
        return np.array(W, dtype=np.float64)


class SmoothHinge(Hinge):
    """The hinge declared smooth: it has a kink at margin 1."""

    smooth = True


class WideBox(Hinge):
    """Hinge with the dual box (0, 2C): its conjugate is +inf beyond C."""

    def dual_box(self, C):
        return 0.0, 2.0 * float(C)


class WrongDiagonal(SquaredHinge):
    """Squared hinge with the dual diagonal 1 / C instead of 1 / (2C)."""

    def dual_diagonal(self, C):
        return 1.0 / float(C)


class SquaredDistanceKernel(Kernel):
    """k(x, z) = ||x - z||^2: symmetric, zero diagonal, not positive semi-definite."""

    def __call__(self, X, Z=None):
        X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
        Z = X if Z is None else np.asarray(Z.toarray() if hasattr(Z, "toarray") else Z, dtype=np.float64)
        return ((X[:, None, :] - Z[None, :, :]) ** 2).sum(axis=2)


class NegativeLinearKernel(LinearKernel):
    """-x^T z."""

    def __call__(self, X, Z=None):
        return -super().__call__(X, Z)


class AsymmetricKernel(LinearKernel):
    """x^T z plus a term that is not symmetric in (x, z)."""

    def __call__(self, X, Z=None):
        K = super().__call__(X, Z)
        return K + 0.1 * np.triu(np.ones_like(K), 1)


class WrongDiagonalKernel(LinearKernel):
    """Linear kernel whose diagonal() forgets the square: sum |x_k| instead of sum x_k^2."""

    def diagonal(self, X):
        X = np.asarray(X.toarray() if hasattr(X, "toarray") else X)
        return np.abs(X).sum(axis=1)


@pytest.mark.parametrize(
    "component, prop",
    [
        (WrongConjugate(), "Fenchel-Young"),
        (NonConvexLoss(), "convexity along a random segment"),
        (GradientTwice(), "gradient against finite differences"),
        (HalfGradientRegularizer(), "gradient against finite differences"),
        (ShrinkByHalfStep(), "prox optimality"),
        (IdentityProx(), "prox optimality"),
        (SmoothHinge(), "smoothness (declared smooth = True)"),
        (WideBox(), "SVM dual"),
        (WrongDiagonal(), "SVM dual form on the box"),
        (SquaredDistanceKernel(), "positive semi-definiteness"),
        (NegativeLinearKernel(), "positive semi-definiteness"),
        (AsymmetricKernel(), "symmetry"),
        (WrongDiagonalKernel(), "diagonal"),
    ],
    ids=lambda value: type(value).__name__ if not isinstance(value, str) else None,
)
def test_a_planted_bug_is_caught_and_named(component, prop):
    name = f"planted {type(component).__name__}"
    with pytest.raises(AssertionError) as caught:
        # Without shrinking: the test asks which property fails, not for the smallest data that shows it.
        check_component(component, name=name, settings=settings(phases=[Phase.explicit, Phase.reuse, Phase.generate]))
    message = str(caught.value)
    assert message.startswith(f"{name}: {prop}"), message
    assert "rounding tolerance" in message, message


def test_a_non_component_is_refused():
    with pytest.raises(TypeError, match="Loss, Regularizer or Kernel"):
        check_component(object())


def test_the_plugin_guides_kernel_passes():
    """The Laplacian kernel of docs/plugin-guide.md, run as written, passes the check it is told to use."""
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[1] / "docs" / "plugin-guide.md").read_text(encoding="utf-8")
    block = next(part.split("```", 1)[0] for part in guide.split("```python\n")[1:] if "class LaplacianKernel" in part)
    namespace: dict = {}
    exec(compile(block, "docs/plugin-guide.md", "exec"), namespace)
    check_component(namespace["LaplacianKernel"](gamma=0.3), name="the guide's laplacian", sparse_rows=False)
