"""Every registered method fits with the parts its MethodSpec names (the parts come from the preset)."""

import numpy as np
import pytest

import multilabel_core as mlc
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.estimator import ComposedEstimator

def _bundled(spec) -> bool:
    """A method of this distribution (the core or plugins/), not a third party's installed beside it."""
    return spec.estimator.__module__.split(".")[0] in ("multilabel_core", "multilabel_core_plugins")


#: Settings a registered component cannot do without (the rank of a low-rank regulariser: presets
#: derive it from the data).
REQUIRED_SETTINGS = {("regularizer", "low_rank"): {"rank": 1}}

COMPOSED = sorted(spec.name for spec in mlc.list_methods() if spec.parts and _bundled(spec))


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=60, n_features=6, n_labels=3, random_state=0)
    return dataset.X, np.asarray(dataset.Y)


def test_methods_with_parts_are_presets_of_the_composed_estimator():
    # The methods without parts wrap another library's estimator (the ecosystem baselines).
    for spec in filter(_bundled, mlc.list_methods()):
        if spec.parts:
            assert issubclass(spec.estimator, ComposedEstimator), spec.name
            assert spec.parts == spec.estimator.PARTS, spec.name
        else:
            assert spec.plugin == "baselines", spec.name


@pytest.mark.parametrize("name", COMPOSED)
def test_a_method_fits_with_the_parts_it_registers(name, data):
    X, Y = data
    spec = mlc.get_method(name)
    extra = {"X_unlabeled": X[40:]} if name == "ssmlrl" else {}
    model = mlc.make_method(name).fit(X[:40], Y[:40], **extra)
    assert set(spec.parts) == {"loss", "regularizer", "relation", "kernel", "solver"}
    assert set(model.parts_) == set(spec.parts) | {"threshold"}  # the fitted threshold: tests/test_thresholds.py
    for role, component in spec.parts.items():
        registered = mlc.make_component(role, component, **REQUIRED_SETTINGS.get((role, component), {}))
        assert type(model.parts_[role]) is type(registered), (name, role)
        if role == "solver" and hasattr(registered, "inner"):
            assert type(model.parts_[role].inner) is type(registered.inner), (name, role)
