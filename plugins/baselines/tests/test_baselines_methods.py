"""The baselines family: registration, conformance, scikit-learn equivalence, certificates, optional scikit-learn."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

import multilabel_core
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.testing.checks import check_duality_gap, check_method
from multilabel_core.testing.rounding import gamma
from multilabel_core_plugins.baselines import (
    METHODS,
    PLUGIN,
    BRkNNa,
    BRkNNb,
    ClassifierChains,
    EnsembleClassifierChains,
    LabelPowerset,
    LabelSpacePartitioning,
    MLkNN,
    OneVsRestLinear,
    OneVsRestSVC,
    RAkEL,
)

NAMES = ["ovr_svc", "ovr_linear", "classifier_chain", "mlknn", "brknn_a", "brknn_b", "label_partition", "label_powerset",
         "rakel", "ecc"]  # fmt: skip
# label_partition's default base is label_powerset.
NEED_SKLEARN = {"ovr_svc", "ovr_linear", "classifier_chain", "label_powerset", "rakel", "ecc", "label_partition"}
# Checked in their own files (test_brknn.py, test_label_partition.py).
OWN_TESTS = {"brknn_a", "brknn_b", "label_partition"}


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=150, n_features=8, n_labels=4, random_state=0)
    return dataset.X, dataset.Y


def test_registration():
    specs = {spec.name: spec for spec in multilabel_core.list_methods() if spec.plugin == PLUGIN}
    assert list(specs) == sorted(NAMES) and [spec.name for spec in METHODS] == NAMES
    assert [specs[name].estimator for name in NAMES] == [
        OneVsRestSVC, OneVsRestLinear, ClassifierChains, MLkNN, BRkNNa, BRkNNb, LabelSpacePartitioning, LabelPowerset,
        RAkEL, EnsembleClassifierChains,
    ]  # fmt: skip
    assert specs["ovr_svc"].param_grid == {"C": [0.1, 1, 10, 100], "gamma": ["scale", 0.001, 0.01, 0.1]}
    assert specs["mlknn"].param_grid == {"k": [5, 10, 15, 20]} and "Zhang & Zhou" in specs["mlknn"].citation
    assert specs["ovr_linear"].param_grid == multilabel_core.get_method("br").param_grid, "the same model as br"
    assert all(set(spec.param_grid) for spec in specs.values())


@pytest.mark.parametrize("name", [name for name in NAMES if name not in OWN_TESTS])
def test_conformance(name):
    check_method(name)


def test_ovr_svc_is_one_scikit_learn_svc_per_label(data):
    svm = pytest.importorskip("sklearn.svm")
    X, Y = data
    model = OneVsRestSVC(C=3.0, gamma=0.05).fit(X, Y)
    for j in range(Y.shape[1]):
        reference = svm.SVC(C=3.0, gamma=0.05).fit(X, Y[:, j])
        np.testing.assert_allclose(model.decision_function(X)[:, j], reference.decision_function(X), atol=1e-10)


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly", "sigmoid"])
@pytest.mark.parametrize("sparse", [False, True])
def test_training_scores_of_all_labels_at_once_are_the_decision_values(data, kernel, sparse, monkeypatch):
    pytest.importorskip("sklearn")
    from multilabel_core_plugins.baselines import binary

    X, Y = data
    X = sp.csr_matrix(np.where(np.abs(X) > 0.3, X, 0.0)) if sparse else X
    model = OneVsRestSVC(kernel=kernel, gamma="scale", coef0=0.5, degree=2).fit(X, Y)
    monkeypatch.setattr(binary, "BLOCK_ENTRIES", 100)  # blocks of a few rows
    scores = binary.svc_training_scores(model.estimators_, X)
    np.testing.assert_allclose(scores, model.decision_function(X), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("model", ["linear_svc", "logistic"])
def test_ovr_linear_is_one_liblinear_model_per_label(data, model):
    pytest.importorskip("sklearn")
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    X, Y = data
    fitted = OneVsRestLinear(model=model, C=0.5, random_state=0).fit(X, Y)
    kind = LinearSVC if model == "linear_svc" else LogisticRegression
    assert all(type(e) is kind and e.C == 0.5 for e in fitted.estimators_)
    for j, estimator in enumerate(fitted.estimators_):
        np.testing.assert_allclose(fitted.decision_function(X)[:, j], estimator.decision_function(X))


def test_a_single_chain_is_scikit_learns_classifier_chain(data):
    pytest.importorskip("sklearn")
    from sklearn.linear_model import LogisticRegression
    from sklearn.multioutput import ClassifierChain

    X, Y = data
    ours = ClassifierChains(C=2.0, random_state=0).fit(X, Y)
    link = ours.chains_[0].estimators_[0]
    theirs = ClassifierChain(LogisticRegression(solver="liblinear", C=2.0, random_state=link.random_state)).fit(X, Y)
    scores = ours.decision_function(X)
    np.testing.assert_allclose(scores, theirs.predict_proba(X) - 0.5, atol=1e-12)
    # Another implementation: its predictions must agree beyond the 1e-12 the scores are held to.
    decided = np.abs(scores) > 1e-12
    np.testing.assert_array_equal(ours.predict(X)[decided], theirs.predict(X)[decided])


def test_an_ensemble_averages_chains_in_random_orders(data):
    pytest.importorskip("sklearn")
    X, Y = data
    ensemble = ClassifierChains(n_chains=4, order="random", random_state=1).fit(X, Y)
    orders = {tuple(chain.order_) for chain in ensemble.chains_}
    assert len(ensemble.chains_) == 4 and len(orders) > 1
    mean = np.mean([chain.predict_proba(X) for chain in ensemble.chains_], axis=0)
    # The ensemble averages p - 0.5 over the chains, here mean(p) - 0.5: two m-term sums of terms
    # below 1 in magnitude, each within gamma_(m+1) (mean |p| + 0.5) of the exact one (Higham eq. 3.5).
    bound = 2 * gamma(len(ensemble.chains_) + 1) * (mean + 0.5)
    np.testing.assert_allclose(ensemble.decision_function(X), mean - 0.5, rtol=0, atol=bound.max())
    decided = np.abs(mean - 0.5) > bound
    np.testing.assert_array_equal(ensemble.predict(X)[decided], (mean > 0.5)[decided])
    svc = ClassifierChains(base="svc", n_chains=2, order="random", random_state=1).fit(X, Y)
    mean = np.mean([chain.decision_function(X) for chain in svc.chains_], axis=0)
    np.testing.assert_allclose(svc.decision_function(X), mean)
    assert ensemble.certificate_.statistics["n_problems"] == 4 * Y.shape[1]


def _tight(model):
    return {"max_iter": 100000, "tol": 1e-10} if model != OneVsRestSVC else {"tol": 1e-10}


@pytest.mark.parametrize(
    ("cls", "params"),
    [
        (OneVsRestSVC, {"C": 2.0}),
        (OneVsRestSVC, {"C": 2.0, "kernel": "linear"}),
        (OneVsRestLinear, {"C": 2.0, "model": "linear_svc"}),
        (OneVsRestLinear, {"C": 2.0, "model": "logistic"}),
        (ClassifierChains, {"C": 2.0, "base": "svc"}),
        (ClassifierChains, {"C": 2.0, "base": "linear_svc", "n_chains": 2, "order": "random"}),
    ],
)
@pytest.mark.parametrize("sparse", [False, True])
def test_certificates_close_at_a_tight_tolerance(data, cls, params, sparse):
    pytest.importorskip("sklearn")
    X, Y = data
    X = sp.csr_matrix(np.where(np.abs(X) > 0.3, X, 0.0)) if sparse else X
    loose = cls(**params, random_state=0) if "random_state" in cls().get_params() else cls(**params)
    tight = type(loose)(**{**loose.get_params(), **_tight(cls)})
    loose, tight = loose.fit(X, Y), tight.fit(X, Y)
    for model in (loose, tight):
        assert model.certificate_.gap >= -1e-9 * max(1.0, abs(model.certificate_.primal))
        assert model.certificate_.converged and model.certificate_.solver in ("libsvm", "liblinear")
    check_duality_gap(tight.certificate_, tol=1e-6)
    assert tight.certificate_.kkt_violation < 1e-5
    assert tight.certificate_.primal <= loose.certificate_.primal * (1 + 1e-9)


def test_an_iteration_limit_is_not_converged(data):
    pytest.importorskip("sklearn")
    X, Y = data
    with pytest.warns(Warning, match="terminated early"), pytest.warns(Warning, match="4 of 4 stopped on max_iter"):
        model = OneVsRestSVC(C=100.0, max_iter=3).fit(X, Y)
    assert not model.certificate_.converged and model.certificate_.statistics["n_budget_hit"] == 4


@pytest.mark.parametrize(
    ("estimator", "message"),
    [
        (OneVsRestSVC(kernel="precomputed"), "kernel must be one of"),
        (OneVsRestSVC(gamma="wide"), "gamma must be one of"),
        (OneVsRestSVC(gamma=-1.0), "gamma must be > 0"),
        (OneVsRestSVC(C=0.0), "C must be > 0"),
        (OneVsRestSVC(degree=0), "degree must be >= 1"),
        (OneVsRestLinear(model="ridge"), "model must be one of"),
        (OneVsRestLinear(tol=-1.0), "tol must be > 0"),
        (OneVsRestSVC(tol=float("nan")), "tol must be finite"),
        (ClassifierChains(tol=0.0), "tol must be > 0"),
        (ClassifierChains(base="tree"), "base must be one of"),
        (ClassifierChains(n_chains=3), "an ensemble of chains needs order='random'"),
        (ClassifierChains(order="labels"), "order must be one of"),
        (ClassifierChains(base="svc", scores="predict_proba"), "needs base='logistic'"),
        (ClassifierChains(scores="votes"), "scores must be one of"),
        (ClassifierChains(n_chains=0, order="random"), "n_chains must be >= 1"),
    ],
)
def test_bad_parameters_are_refused_in_fit(data, estimator, message):
    with pytest.raises(ValueError, match=message):
        estimator.fit(*data)


def test_without_scikit_learn_the_family_registers_and_names_the_extra(tmp_path):
    # A fresh interpreter in which `import sklearn` fails.
    script = textwrap.dedent(
        """
        import sys
        sys.modules["sklearn"] = None
        import numpy as np
        import multilabel_core
        from multilabel_core.cli import main

        assert main(["methods"]) == 0
        names = {spec.name for spec in multilabel_core.list_methods() if spec.plugin == "baselines"}
        assert names == {"ovr_svc", "ovr_linear", "classifier_chain", "mlknn", "brknn_a", "brknn_b", "label_partition",
                         "label_powerset", "rakel", "ecc"}, names
        rng = np.random.default_rng(0)
        X = rng.standard_normal((40, 3))
        Y = (X[:, :2] > 0).astype(int)
        for name in ("ovr_svc", "ovr_linear", "classifier_chain", "label_powerset", "rakel", "ecc", "label_partition"):
            try:
                multilabel_core.make_method(name).fit(X, Y)
            except ImportError as exc:
                assert f"the {name} baseline" in str(exc) and "needs scikit-learn" in str(exc), exc
                assert "pip install 'multilabel-core[baselines]'" in str(exc), exc
            else:
                raise AssertionError(f"{name} fitted without scikit-learn")
        for name in ("mlknn", "brknn_a", "brknn_b"):
            assert multilabel_core.make_method(name, k=3).fit(X, Y).predict(X).shape == Y.shape
        partition = multilabel_core.make_method("label_partition", base="mlknn", base_params={"k": 3})
        assert partition.fit(X, Y).predict(X).shape == Y.shape
        # the demo leaves the scikit-learn baselines out, saying why, and runs the rest
        assert main(["demo", "--json", "--compact"]) == 0
        print("ok")
        """
    )
    # run outside the checkout: `python -c` puts the working directory on sys.path
    # The timeout only guards against a hang: the script imports, fits and runs the demo, which took
    # over 120 s on 2 cores shared with three other jobs.
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    *_, demo, last = result.stdout.strip().splitlines()
    assert last == "ok"
    demo = json.loads(demo)
    assert set(demo["unavailable"]) == NEED_SKLEARN and demo["failures"] == []
    assert "multilabel-core[baselines]" in demo["unavailable"]["ovr_svc"]
    assert {row["method"] for row in demo["summary"]} >= {"br", "mlknn"}
