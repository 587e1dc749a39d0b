"""The plugin author's path: a new relation-learning method from one short module (docs/examples/label_weights.py).

The module defines a LabelRelation, a preset of ComposedEstimator and the two registration hooks;
registered like any plugin, the method fits by name on the core's alternating driver over SMO.
"""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

import multilabel_core as mlc
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.plugins import get_plugin_manager
from multilabel_core.solvers import AlternatingSolver, SMOSolver

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "label_weights.py"


def _code_lines(path: Path) -> int:
    """Lines of the module without its docstring."""
    source = path.read_text()
    docstring_end = source.index('"""', source.index('"""') + 3) + 3
    return len(source[docstring_end:].strip().splitlines())


@pytest.fixture
def example():
    spec = importlib.util.spec_from_file_location("label_weights_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    manager = get_plugin_manager()
    manager.register(module, name="label_weights_example")
    try:
        yield module
    finally:
        manager.unregister(module)
    assert "lwsvm" not in {method.name for method in mlc.list_methods()}


def test_the_example_is_under_60_lines_and_the_guide_shows_it_verbatim():
    assert _code_lines(EXAMPLE) < 60
    guide = (EXAMPLE.parents[1] / "plugin-guide.md").read_text()
    assert EXAMPLE.read_text() in re.findall(r"```python\n(.*?)```", guide, flags=re.S)


def test_a_new_relation_learning_method_fits_by_name(example):
    data = make_correlated_multilabel(n_samples=80, n_features=6, n_labels=4, random_state=2)
    X, Y = data.X, np.asarray(data.Y)
    model = mlc.make_method("lwsvm", lam=1e-2, tol=1e-8).fit(X, Y)
    assert isinstance(model.parts_["relation"], example.LabelWeights)
    assert isinstance(model.parts_["solver"], AlternatingSolver) and isinstance(model.parts_["solver"].inner, SMOSolver)
    omega = model.label_covariance_
    np.testing.assert_array_equal(omega, np.diag(np.diag(omega)))
    np.testing.assert_allclose(np.trace(omega), 1.0)
    assert model.n_iter_ >= 2 and all(c.converged for c in model.certificate_)
    objectives = np.array(model.objective_history_)
    assert np.all(np.diff(objectives) <= 1e-12 * abs(objectives[0]))
    assert model.decision_function(X).shape == Y.shape


def test_the_relation_step_is_the_closed_form(example):
    rng = np.random.default_rng(0)
    W = rng.standard_normal((5, 3)) * np.array([1.0, 2.0, 4.0])
    omega = example.LabelWeights(epsilon=1e-12).update(W.T @ W)
    norms = np.linalg.norm(W, axis=0)
    np.testing.assert_allclose(np.diag(omega), norms / norms.sum(), rtol=1e-9)
    # It minimises tr(Omega^-1 W^T W) over diagonal Omega of trace 1: no random diagonal does better.
    best = np.trace(np.linalg.solve(omega, W.T @ W))
    for _ in range(200):
        other = rng.random(3)
        other /= other.sum()
        assert np.trace(np.diag(1.0 / other) @ W.T @ W) >= best * (1 - 1e-12)
