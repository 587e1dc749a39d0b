"""Preprocessing inside the protocols: the scalers, fitted on training rows only (outer and inner), recorded."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from multilabel_core import make_method
from multilabel_core.cli import main
from multilabel_core.datasets import Dataset, make_correlated_multilabel
from multilabel_core.estimator import ComposedEstimator
from multilabel_core.experiments.config import Experiment, load_experiment
from multilabel_core.experiments.preprocessing import (
    PREPROCESSORS,
    MaxAbsScaler,
    RowNormalizer,
    Standardizer,
    preprocessed,
)
from multilabel_core.experiments.protocols import kfold
from multilabel_core.experiments.runner import evaluate_split, run_experiment, split_seeds
from multilabel_core.experiments.search import inner_folds, score_points
from multilabel_core.experiments.store import ConfigMismatchError, read_records
from multilabel_core.metrics import average_precision, evaluate


def shifted_data():
    """Features of very different scales, and a few outlying rows: statistics over all rows
    differ clearly from those of a training part that leaves the outliers out."""
    data = make_correlated_multilabel(n_samples=120, n_features=6, n_labels=3, random_state=0)
    X = data.X * np.array([50.0, 1.0, 1.0, 0.1, 1.0, 1.0]) + np.array([0.0, 10.0, 0.0, 0.0, -3.0, 0.0])
    X[:4, 2] *= 40.0
    return Dataset(X, data.Y, name="shifted")


DATA = shifted_data()
SPLITS = kfold(DATA.Y, n_splits=3, seed=0)


# ------------------------------------------------------------------ the scalers
def test_scalers_compute_scikit_learns_maps():
    preprocessing = pytest.importorskip("sklearn.preprocessing")
    X = np.where(np.abs(DATA.X) > 0.5, DATA.X, 0.0)
    cases = [
        (Standardizer, preprocessing.StandardScaler(), preprocessing.StandardScaler(with_mean=False)),
        (MaxAbsScaler, preprocessing.MaxAbsScaler(), preprocessing.MaxAbsScaler()),
        (RowNormalizer, preprocessing.Normalizer(), preprocessing.Normalizer()),
    ]
    for ours, dense_reference, sparse_reference in cases:
        np.testing.assert_allclose(ours().fit(X[:80]).transform(X), dense_reference.fit(X[:80]).transform(X))
        for kind in (sp.csr_matrix, sp.csc_matrix):
            scaled = ours().fit(kind(X[:80])).transform(kind(X))
            assert sp.issparse(scaled) and scaled.format == kind(X).format and scaled.dtype == np.float64
            expected = sparse_reference.fit(kind(X[:80])).transform(kind(X))
            np.testing.assert_allclose(scaled.toarray(), expected.toarray(), rtol=1e-12, atol=1e-12)


def test_zero_scales_are_left_alone():
    X = np.array([[1.0, 0.0, 3.0], [1.0, 0.0, -1.0], [0.0, 0.0, 0.0]])
    fitted = Standardizer().fit(X[:2])
    np.testing.assert_array_equal(fitted.scale_, [1.0, 1.0, 2.0])
    np.testing.assert_array_equal(fitted.transform(X), [[0.0, 0.0, 1.0], [0.0, 0.0, -1.0], [-1.0, 0.0, -0.5]])
    np.testing.assert_array_equal(MaxAbsScaler().fit(X).scale_, [1.0, 1.0, 3.0])
    np.testing.assert_array_equal(RowNormalizer().fit(X).transform(X)[2], 0.0)
    assert Standardizer().fit(np.full((5, 1), 0.1)).scale_[0] == 1.0, "round-off of a constant feature is zero"


def test_statistics_come_from_the_given_rows_only():
    rows = np.arange(40, 120)  # the outlying rows 0-3 are left out
    expected = (DATA.X - DATA.X[rows].mean(axis=0)) / DATA.X[rows].std(axis=0)
    np.testing.assert_allclose(preprocessed(DATA.X, rows, "standardize"), expected)
    leaked = (DATA.X - DATA.X.mean(axis=0)) / DATA.X.std(axis=0)
    assert not np.allclose(preprocessed(DATA.X, rows, "standardize"), leaked)
    assert preprocessed(DATA.X, rows, None) is DATA.X


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match="preprocess must be None or one of"):
        preprocessed(DATA.X, np.arange(3), "zscore")
    with pytest.raises(ValueError, match="preprocess must be None or one of"):
        Experiment(methods=["br"], datasets=[DATA], preprocess="zscore")


# ------------------------------------------------------- the runner fits on training rows
def fitted_on(rows, method="br", **params):
    """The metrics of ``method`` fitted on standardised rows ``train`` and scored on ``test``,
    the scaler fitted on the training rows (``rows="train"``) or on all rows (a leak)."""

    def metrics(train, test):
        scaler = Standardizer().fit(DATA.X[train] if rows == "train" else DATA.X)
        model = make_method(method, **params).fit(scaler.transform(DATA.X[train]), DATA.Y[train])
        X_test = scaler.transform(DATA.X[test])
        return evaluate(DATA.Y[test], model.decision_function(X_test), model.predict(X_test))

    return metrics


def assert_scaled_on_training_rows_only(records):
    for record in records:
        expected = fitted_on("train", **record["params"])(*SPLITS[record["split"]])
        assert record["metrics"] == pytest.approx(expected, rel=1e-12, abs=1e-12, nan_ok=True)


def run(tmp_path, preprocess, folder="run", **settings):
    settings = {"grids": {"br": {"C": [1.0]}}, **settings}
    return run_experiment(["br"], [DATA], "kfold", tmp_path / folder, protocol_params={"n_splits": 3},
                          preprocess=preprocess, inner_cv=2, progress=False, plots=False, **settings).records  # fmt: skip


def test_records_are_those_of_a_scaler_fitted_on_the_training_part(tmp_path, monkeypatch):
    ours = run(tmp_path, "standardize")
    assert [r["preprocess"] for r in ours] == ["standardize"] * 3
    assert_scaled_on_training_rows_only(ours)

    class LeakingStandardizer(Standardizer):
        """Fitted on every row, whatever rows it is given."""

        def fit(self, X):
            return super().fit(DATA.X)

    monkeypatch.setitem(PREPROCESSORS, "leaky", LeakingStandardizer)
    leaked = run(tmp_path, "leaky", folder="leaked")
    for record in leaked:
        assert record["metrics"] == pytest.approx(fitted_on("all")(*SPLITS[record["split"]]), rel=1e-12, nan_ok=True)
    with pytest.raises(AssertionError):
        assert_scaled_on_training_rows_only(leaked)


def test_every_scaler_the_runner_fits_sees_a_training_part_only(tmp_path, monkeypatch):
    seen = []
    original = Standardizer.fit

    def recording_fit(self, X):
        seen.append(np.asarray(X).copy())
        return original(self, X)

    monkeypatch.setattr(Standardizer, "fit", recording_fit)
    run(tmp_path, "standardize", grids={"br": {"C": [0.1, 1.0]}})
    expected = []
    for s, (train, _) in enumerate(SPLITS):
        inner = inner_folds(DATA.Y, train, None, 2, split_seeds(0, s)[0])
        expected += [DATA.X[fit_rows] for fit_rows, _, _ in inner for _ in range(2)] + [DATA.X[train]]
    assert len(seen) == len(expected) == 3 * (2 * 2 + 1)
    for rows in seen:
        assert any(rows.shape == block.shape and np.array_equal(rows, block) for block in expected)
        assert rows.shape[0] < DATA.X.shape[0]


def test_inner_search_scores_use_the_inner_training_statistics(tmp_path):
    records = run(tmp_path, "standardize", grids={"br": {"C": [0.1, 1.0]}})
    for record in records:
        train, _ = SPLITS[record["split"]]
        folds = inner_folds(DATA.Y, train, None, 2, split_seeds(0, record["split"])[0])
        for entry in record["search"]:
            expected = []
            for fit_rows, score_rows, _ in folds:
                scaler = Standardizer().fit(DATA.X[fit_rows])
                model = make_method("br", **entry["params"]).fit(scaler.transform(DATA.X[fit_rows]), DATA.Y[fit_rows])
                expected.append(
                    average_precision(DATA.Y[score_rows], model.decision_function(scaler.transform(DATA.X[score_rows])))
                )
            assert entry["fold_scores"] == pytest.approx(expected, rel=1e-12)


def test_preprocessing_is_part_of_the_configuration(tmp_path):
    run(tmp_path, None)
    assert read_records(tmp_path / "run")[0]["preprocess"] is None
    with pytest.raises(ConfigMismatchError, match='changed: preprocess: null -> "standardize"'):
        run(tmp_path, "standardize")


def test_sparse_data_is_scaled_without_densifying(tmp_path):
    X = sp.csr_matrix(np.where(np.abs(DATA.X) > 1.0, DATA.X, 0.0))
    sparse = Dataset(X, DATA.Y, name="sparse")
    for preprocess in ("standardize", "maxabs", "l2_rows"):
        scaled = preprocessed(X, np.arange(80), preprocess)
        assert sp.isspmatrix_csr(scaled) and scaled.nnz == X.nnz
    records = run_experiment(
        ["mlknn"],
        [sparse],
        "kfold",
        tmp_path / "sparse",
        protocol_params={"n_splits": 2},
        grids={"mlknn": {"k": [5]}},
        preprocess="maxabs",
        progress=False,
        plots=False,
    ).records
    assert [r["status"] for r in records] == ["ok", "ok"]


def test_a_precomputed_kernel_cannot_be_rescaled():
    K = DATA.X @ DATA.X.T
    train, test = SPLITS[0]
    outcome = evaluate_split(ComposedEstimator(kernel="precomputed"), {}, K, DATA.Y, train, test, preprocess="maxabs")
    assert outcome["status"] == "failed" and "cannot rescale a precomputed kernel" in outcome["error"]
    results = score_points(ComposedEstimator(kernel="precomputed"), K, DATA.Y, train[:50], train[50:], None,
                           [{"C": 1.0}, {"C": 2.0}], "average_precision", False, "maxabs")  # fmt: skip
    assert [score for score, _, _ in results] == [None, None]
    assert all("cannot rescale a precomputed kernel" in error for _, error, _ in results)


def test_experiment_file_and_command_line(tmp_path, capsys):
    path = tmp_path / "experiment.toml"
    path.write_text('methods = ["br"]\ndatasets = ["synthetic"]\npreprocess = "maxabs"\n')
    assert load_experiment(path).preprocess == "maxabs"
    assert load_experiment(path, preprocess="l2_rows").preprocess == "l2_rows"
    out = tmp_path / "cli"
    argv = ["compare", "--config", str(path), "--protocol-param", "n_splits=2", "--grid", "C=1", "--out", str(out),
            "--no-plots"]  # fmt: skip
    assert main([*argv, "--preprocess", "l2_rows"]) == 0
    assert "features preprocessed: l2_rows" in capsys.readouterr().out
    assert {r["preprocess"] for r in read_records(out)} == {"l2_rows"}
    with pytest.raises(SystemExit, match="2"):
        main([*argv, "--preprocess", "zscore"])
    assert "got 'zscore'" in capsys.readouterr().err


# ------------------------------------------------------------- scikit-learn Pipelines
@pytest.mark.parametrize(("method", "params"), [("br", {}), ("ovr_svc", {}), ("mlknn", {"k": 5})])
def test_pipelines_of_our_estimators_fit_the_scaler_on_each_training_fold(method, params):
    pytest.importorskip("sklearn")
    from sklearn.model_selection import KFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    pipeline = make_pipeline(StandardScaler(), make_method(method, **params))
    folds = list(KFold(3, shuffle=True, random_state=0).split(DATA.X))
    scores = cross_val_score(pipeline, DATA.X, DATA.Y, cv=folds, scoring="f1_micro")
    expected = []
    for train, test in folds:
        scaler = StandardScaler().fit(DATA.X[train])
        model = make_method(method, **params).fit(scaler.transform(DATA.X[train]), DATA.Y[train])
        scores_test = model.decision_function(scaler.transform(DATA.X[test]))
        expected.append(evaluate(DATA.Y[test], scores_test, metrics=["micro_f1"])["micro_f1"])
    np.testing.assert_allclose(scores, expected, rtol=1e-12)
