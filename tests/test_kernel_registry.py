"""One kernel registry: a kernel a plugin registers is usable by name in every estimator.

The test plugin registers a Laplacian kernel through the ``register_components`` hook,
the hook a third-party plugin implements, and is unregistered after each test so the
other tests never see it.
"""

from __future__ import annotations

import re
import types
from pathlib import Path

import attrs
import numpy as np
import pytest
from scipy.spatial.distance import cdist

import multilabel_core
from multilabel_core import ComponentSpec, ComposedEstimator, hookimpl, make_method
from multilabel_core.base import Kernel
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.kernels import LinearKernel, make_kernel
from multilabel_core.plugins import CORE_PLUGIN_NAME, PluginError, get_plugin_manager, reset_plugin_manager
from multilabel_core.validation import check_X

PLUGIN_NAME = "laplacian_kernel_test"
GUIDE = Path(__file__).resolve().parents[1] / "docs" / "plugin-guide.md"


@attrs.frozen
class LaplacianKernel(Kernel):
    """``k(x, z) = exp(-gamma ||x - z||_1)``; ``gamma=None`` resolves to 1 / n_features (dense rows)."""

    gamma: float | None = None

    def resolve(self, X) -> "LaplacianKernel":
        return self if self.gamma is not None else LaplacianKernel(gamma=1.0 / check_X(X).shape[1])

    def __call__(self, X, Z=None) -> np.ndarray:
        if self.gamma is None:
            raise ValueError("LaplacianKernel has no gamma: call resolve(X_train) first")
        X = check_X(X, accept_sparse=False).astype(np.float64)
        Z = X if Z is None else check_X(Z, accept_sparse=False).astype(np.float64)
        return np.exp(-self.gamma * cdist(X, Z, "cityblock"))

    def diagonal(self, X) -> np.ndarray:
        return np.ones(check_X(X).shape[0])


def laplacian_fixed():
    """A factory without a gamma parameter: the width is fixed."""
    return LaplacianKernel(gamma=0.25)


def not_a_kernel():
    """A broken registration: builds something that is not a Kernel."""
    return "laplacian"


class LaplacianPlugin:
    @hookimpl
    def register_components(self, register):
        register(ComponentSpec("kernel", "laplacian", LaplacianKernel, description="exp(-gamma ||x - z||_1)"))
        register(ComponentSpec("kernel", "laplacian_fixed", laplacian_fixed))
        register(ComponentSpec("kernel", "not_a_kernel", not_a_kernel))


@pytest.fixture
def laplacian_registered():
    manager = get_plugin_manager()
    plugin = LaplacianPlugin()
    manager.register(plugin, name=PLUGIN_NAME)
    try:
        yield
    finally:
        manager.unregister(plugin)
    assert "laplacian" not in {spec.name for spec in multilabel_core.list_components("kernel")}


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=60, n_features=8, n_labels=4, random_state=0)
    return dataset.X, dataset.Y


def test_make_kernel_builds_a_registered_plugin_kernel(laplacian_registered):
    assert make_kernel("laplacian") == LaplacianKernel()
    assert make_kernel("laplacian", gamma=0.3) == LaplacianKernel(gamma=0.3)
    spec = {spec.name: spec for spec in multilabel_core.list_components("kernel")}["laplacian"]
    assert spec.plugin == PLUGIN_NAME
    with pytest.raises(ValueError, match=r"registered kernel name \(.*laplacian.*\).*'laplace'"):
        make_kernel("laplace")


def test_gamma_goes_only_to_a_factory_that_takes_it(laplacian_registered):
    # As the linear kernel: a kernel without gamma ignores it, its own parameters stay.
    assert make_kernel("laplacian_fixed", gamma=3.0) == LaplacianKernel(gamma=0.25)
    assert make_kernel("linear", gamma=3.0) == make_kernel("linear")
    with pytest.raises(ValueError, match="kernel 'laplacian' has no parameter 'width'"):
        make_kernel("laplacian", width=1.0)


def test_a_registered_factory_that_builds_no_kernel_is_an_error_naming_the_plugin(laplacian_registered):
    with pytest.raises(PluginError, match=rf"'not_a_kernel' registered by plugin '{PLUGIN_NAME}' built a str"):
        make_kernel("not_a_kernel")


def test_an_unregistered_plugin_kernel_is_unknown_again():
    with pytest.raises(ValueError, match="registered kernel name.*'laplacian'"):
        make_kernel("laplacian")


def fit_both(method, gamma, X, Y, **fit_params):
    """The method fitted with the kernel by name and with the same kernel as an object."""
    params = {"bsvm": {"lam": 0.05}, "mlrl": {"lam": 0.05}, "ssmlrl": {"lam1": 0.05, "lam2": 1.0}}[method]
    by_name = make_method(method, kernel="laplacian", gamma=gamma, **params).fit(X, Y, **fit_params)
    by_object = make_method(method, kernel=LaplacianKernel(gamma=gamma), **params).fit(X, Y, **fit_params)
    return by_name, by_object


def assert_same_decisions(by_name, by_object, X):
    expected = by_object.decision_function(X)
    np.testing.assert_allclose(
        by_name.decision_function(X), expected, rtol=1e-8, atol=1e-8 * np.abs(expected).max()
    )


@pytest.mark.parametrize("gamma", [None, 0.05])
@pytest.mark.parametrize("method", ["mlrl", "bsvm"])
def test_kernel_methods_fit_a_plugin_kernel_by_name(laplacian_registered, data, method, gamma):
    X, Y = data
    by_name, by_object = fit_both(method, gamma, X, Y)
    assert type(by_name.kernel_) is LaplacianKernel
    assert by_name.kernel_ == by_object.kernel_ == LaplacianKernel(gamma=gamma or 1.0 / X.shape[1])
    assert_same_decisions(by_name, by_object, X)


@pytest.mark.parametrize("gamma", [None, 0.05])
def test_ssmlrl_fits_a_plugin_kernel_by_name_with_unlabelled_rows(laplacian_registered, data, gamma):
    X, Y = data
    by_name, by_object = fit_both("ssmlrl", gamma, X[:40], Y[:40], X_unlabeled=X[40:])
    assert by_name.n_unlabeled_ == 20
    assert type(by_name.kernel_) is LaplacianKernel
    assert by_name.kernel_ == by_object.kernel_
    assert_same_decisions(by_name, by_object, X)


def test_kernel_columns_on_demand_use_the_plugin_kernel(laplacian_registered, data):
    # A cache too small for the 60 x 60 matrix: SMO asks the kernel for columns and its diagonal.
    X, Y = data
    by_name = make_method("bsvm", kernel="laplacian", lam=0.05, cache_size=0.01).fit(X, Y)
    by_object = make_method("bsvm", kernel=LaplacianKernel(), lam=0.05).fit(X, Y)
    assert type(by_name.kernel_) is LaplacianKernel
    assert by_name.certificate_.converged
    # cdist computes each entry pair by pair, so a column asked for alone equals the same
    # entry of the whole matrix: both SMO runs see the same numbers and take the same steps.
    assert_same_decisions(by_name, by_object, X)


def test_composed_estimator_fits_a_plugin_kernel_by_name(laplacian_registered, data):
    X, Y = data
    parts = dict(loss="hinge", regularizer="frobenius", relation="independent", solver="smo")
    by_name = ComposedEstimator(kernel="laplacian", **parts).fit(X, Y)
    by_object = ComposedEstimator(kernel=LaplacianKernel(), **parts).fit(X, Y)
    assert type(by_name.kernel_) is LaplacianKernel
    assert_same_decisions(by_name, by_object, X)


def test_the_plugin_guides_kernel_example_registers_a_kernel_bsvm_fits_by_name(data):
    [source] = [block for block in re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
                if "class LaplacianKernel" in block]  # fmt: skip
    module = types.ModuleType("guide_laplacian_plugin")
    exec(compile(source, str(GUIDE), "exec"), module.__dict__)
    manager = get_plugin_manager()
    manager.register(module, name="guide_laplacian_plugin")
    try:
        X, Y = data
        by_name = make_method("bsvm", kernel="laplacian", gamma=0.1).fit(X, Y)
        by_object = make_method("bsvm", kernel=module.LaplacianKernel(gamma=0.1)).fit(X, Y)
    finally:
        manager.unregister(module)
    assert by_name.kernel_ == module.LaplacianKernel(gamma=0.1)
    assert_same_decisions(by_name, by_object, X)


def test_with_no_kernel_registered_the_error_says_so():
    # The core's stock kernels come from its own plugin; without it no kernel name is known.
    get_plugin_manager().unregister(name=CORE_PLUGIN_NAME)
    try:
        with pytest.raises(ValueError, match=r"registered kernel name \(none registered\).*'linear'"):
            make_kernel("linear")
    finally:
        reset_plugin_manager()  # rebuilt with the core's plugin first, as always
    assert make_kernel("linear") == LinearKernel()
