"""A third-party plugin really installed with pip is found through its entry point.

docs/examples/mlcore-example-plugin is installed once per run into a temporary
folder (``pip install --no-deps --target``); putting that folder on ``sys.path`` is
all importlib.metadata needs to see its ``.dist-info`` and entry point, exactly as
for a package installed in site-packages.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import multilabel_core
from multilabel_core.plugins import DISABLE_AUTOLOAD_ENV, ENTRY_POINT_GROUP, reset_plugin_manager

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "mlcore-example-plugin"
DIST_NAME = "mlcore-example-plugin"
PACKAGE = "mlcore_example_plugin"


def pip_install(source: Path, target: Path) -> None:
    """Build and install ``source`` into ``target``; offline, reuse the setuptools at hand."""
    command = [
        sys.executable, "-m", "pip", "install", "--no-deps", "--no-input", "--disable-pip-version-check",
        "--retries", "1", "--timeout", "15", "--target", str(target), str(source),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0 and importlib.util.find_spec("setuptools") is not None:
        result = subprocess.run([*command, "--no-build-isolation"], capture_output=True, text=True)
    assert result.returncode == 0, f"pip install failed:\n{result.stdout}\n{result.stderr}"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    # pip builds in place: build from a copy so build/ and *.egg-info stay out of the checkout
    source = tmp_path_factory.mktemp("source") / EXAMPLE.name
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    target = tmp_path_factory.mktemp("site")
    pip_install(source, target)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(DISABLE_AUTOLOAD_ENV, raising=False)
        patch.syspath_prepend(str(target))
        reset_plugin_manager()
        yield target
    reset_plugin_manager()
    for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
        del sys.modules[name]
    importlib.invalidate_caches()


def correlated_problem(n_samples, n_features=8, n_labels=4, seed=0):
    """Labels that are thresholded noisy linear functions of X."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features))
    W = rng.normal(size=(n_features, n_labels))
    Y = (X @ W + 0.3 * rng.normal(size=(n_samples, n_labels)) > 0).astype(int)
    return X, Y


def test_pip_installed_the_distribution_with_its_entry_point(site):
    dist = importlib.metadata.distribution(DIST_NAME)
    assert Path(dist.locate_file("")).resolve() == site.resolve()
    [entry_point] = [ep for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP]
    assert (entry_point.name, entry_point.value) == ("example", PACKAGE)


def test_ridge_br_is_registered_by_the_example_plugin(site):
    names = [spec.name for spec in multilabel_core.list_methods()]
    assert "ridge_br" in names
    spec = multilabel_core.get_method("ridge_br")
    assert spec.plugin == "example"
    assert spec.estimator.__module__ == f"{PACKAGE}.ridge"
    assert Path(sys.modules[PACKAGE].__file__).resolve().is_relative_to(site.resolve())


def test_ridge_br_fits_and_predicts_better_than_chance(site):
    X, Y = correlated_problem(300)
    model = multilabel_core.make_method("ridge_br", alpha=1.0).fit(X[:200], Y[:200])
    scores = model.decision_function(X[200:])
    predicted = model.predict(X[200:])
    assert scores.shape == predicted.shape == (100, 4) and scores.dtype == np.float64
    assert set(np.unique(predicted)) <= {0, 1}
    np.testing.assert_array_equal(predicted, scores > 0)
    majority = (Y[:200].mean(axis=0) > 0.5).astype(int)
    assert np.mean(predicted == Y[200:]) > 0.85 > np.mean(majority == Y[200:])


@pytest.mark.parametrize("n_samples", [40, 6], ids=["n>d", "n<d"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_ridge_br_equals_scikit_learn_ridge_on_sign_targets(site, n_samples, sparse):
    from sklearn.linear_model import Ridge

    X, Y = correlated_problem(n_samples, seed=1)
    X[np.abs(X) < 0.8] = 0.0
    fitted = multilabel_core.make_method("ridge_br", alpha=0.5).fit(sp.csr_matrix(X) if sparse else X, Y)
    reference = Ridge(alpha=0.5).fit(X, 2.0 * Y - 1.0)
    np.testing.assert_allclose(fitted.coef_, reference.coef_.T, atol=1e-7)
    np.testing.assert_allclose(fitted.intercept_, reference.intercept_, atol=1e-7)


def test_ridge_br_follows_the_estimator_contract(site):
    from sklearn.base import clone

    model = multilabel_core.make_method("ridge_br", alpha=2.0)
    assert isinstance(model, multilabel_core.MultiLabelEstimator)
    assert clone(model).get_params() == {"alpha": 2.0, "tol": None}
    X, Y = correlated_problem(60)
    with pytest.raises(ValueError, match="not fitted"):
        model.decision_function(X)
    model.fit(sp.csc_matrix(X.astype(np.float32)), sp.csr_matrix(Y))
    assert model.predict(X).dtype == np.int64 and model.decision_function(X).dtype == np.float64
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :3])


def test_ridge_br_passes_the_testing_kits_method_check(site):
    from multilabel_core.testing.checks import check_method

    check_method("ridge_br")


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_ridge_br_certificate_closes_the_duality_gap(site, sparse):
    X, Y = correlated_problem(80)
    model = multilabel_core.make_method("ridge_br", alpha=0.3)
    certificate = model.fit(sp.csr_matrix(X) if sparse else X, Y).certificate_
    assert certificate.converged and certificate.solver == ("lsqr" if sparse else "cholesky")
    assert abs(certificate.relative_gap) < 1e-10 and certificate.kkt_violation < 1e-8


def test_ridge_br_parameter_errors(site):
    with pytest.raises(ValueError, match="method 'ridge_br' has no parameter 'lam'.*alpha"):
        multilabel_core.make_method("ridge_br", lam=1.0)
    X, Y = correlated_problem(20)
    with pytest.raises(ValueError, match="alpha must be a positive finite number"):
        multilabel_core.make_method("ridge_br", alpha=-1.0).fit(X, Y)


def test_cli_lists_and_evaluates_the_third_party_method(site, tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    env.pop(DISABLE_AUTOLOAD_ENV, None)

    def cli(*argv):
        # run outside the checkout so the installed package, not the source tree, is imported
        result = subprocess.run(
            [sys.executable, "-m", "multilabel_core.cli", *argv, "--json"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    methods = {entry["name"]: entry for entry in cli("methods")["methods"]}
    assert methods["ridge_br"]["plugin"] == "example"
    assert methods["ridge_br"]["citation"].startswith("Hoerl & Kennard (1970)")
    report = cli("evaluate", "ridge_br", "synthetic", "--cv", "3", "--param", "alpha=1.0")
    assert len(report["average_precision"]) == 3
    assert report["mean"]["average_precision"] > 0.7
