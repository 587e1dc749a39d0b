"""The threshold, the sixth part: each rule's defining property, fitted on training rows only, saved with
the model, accepted by every registered method, and bad values refused."""

import json

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import multilabel_core as mlc
from multilabel_core.base import Threshold
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.persistence import load_model, save_model
from multilabel_core.testing.strategies import score_matrices
from multilabel_core.thresholds import (
    STOCK,
    ProportionalCut,
    RankCut,
    TunedF1,
    TunedMacroF1,
    TunedMicroF1,
    ZeroThreshold,
    candidate_thresholds,
    f1_objective,
    inner_estimator,
    out_of_fold_scores,
    tune_thresholds,
)

OBJECTIVES = ("micro", "macro", "both")
TUNED = {"micro": TunedMicroF1, "macro": TunedMacroF1, "both": TunedF1}


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=90, n_features=6, n_labels=4, random_state=1)
    return dataset.X, np.asarray(dataset.Y)


def _br(**params):
    return mlc.make_method("br", **params)


def _counts(scores, Y, thresholds):
    predicted = scores > thresholds[None, :]
    finite = np.isfinite(scores)
    Y = Y.astype(bool) & finite
    tp = np.sum(predicted & Y, axis=0)
    return tp, np.sum(predicted & finite, axis=0), Y.sum(axis=0)


def _objective(scores, Y, thresholds, objective):
    return f1_objective(*_counts(scores, Y, thresholds), objective)


@st.composite
def scored_labels(draw):
    """Scores (n, L) and labels Y (n, L) with at least one positive per label."""
    scores = draw(score_matrices(n_samples=st.integers(2, 25), n_labels=st.integers(1, 5)))
    Y = np.array(draw(st.lists(st.lists(st.integers(0, 1), min_size=scores.shape[1], max_size=scores.shape[1]),
                               min_size=scores.shape[0], max_size=scores.shape[0])), dtype=np.int8)  # fmt: skip
    assume(Y.sum(axis=0).min() > 0)
    return scores, Y


# -- zero -----------------------------------------------------------------------------------


def test_zero_is_todays_predict(data):
    X, Y = data
    model = _br().fit(X, Y)
    assert isinstance(model.threshold_, ZeroThreshold) and model.parts_["threshold"] is model.threshold_
    np.testing.assert_array_equal(model.predict(X), (model.decision_function(X) > 0).astype(np.int64))


def test_zero_keeps_the_concept_networks_inference_and_another_threshold_cuts_its_scores(data):
    X, Y = data
    model = mlc.make_method("concept_network").fit(X, Y)
    np.testing.assert_array_equal(model.predict(X), model.infer(X).labels)
    everything = mlc.make_method("concept_network", thresholding=RankCut(k=Y.shape[1])).fit(X, Y)
    np.testing.assert_array_equal(everything.predict(X), np.ones(Y.shape, dtype=np.int64))


# -- rank cut -------------------------------------------------------------------------------


@given(score_matrices(n_labels=st.integers(1, 6)), st.data())
def test_rank_cut_gives_exactly_k_labels_per_row_the_top_scoring_ones(scores, draw):
    k = draw.draw(st.integers(1, scores.shape[1]))
    Y = np.ones(scores.shape, dtype=np.int8)
    labels = RankCut(k=k).fit(None, None, Y, scores).predict(scores)
    np.testing.assert_array_equal(labels.sum(axis=1), k)
    # Every chosen score is at least every score left out (ties broken by the label index).
    chosen_min = np.where(labels == 1, scores, np.inf).min(axis=1)
    left_max = np.where(labels == 0, scores, -np.inf).max(axis=1)
    assert np.all(chosen_min >= left_max)


def test_rank_cuts_default_k_is_the_rounded_training_label_cardinality(data):
    X, Y = data
    model = _br(thresholding="rank_cut").fit(X, Y)
    k = max(1, int(np.floor(Y.sum(axis=1).mean() + 0.5)))
    assert model.threshold_.size == k
    np.testing.assert_array_equal(model.predict(X).sum(axis=1), k)


def test_rank_cut_refuses_more_labels_than_there_are(data):
    X, Y = data
    with pytest.raises(ValueError, match="k=5 exceeds the number of labels"):
        _br(thresholding=RankCut(k=5)).fit(X, Y)
    with pytest.raises(ValueError, match="k"):
        RankCut(k=0)


# -- proportional cut -----------------------------------------------------------------------


@st.composite
def distinct_scores(draw):
    """Scores whose columns hold distinct values (no tie at a cut) and Y with 1 <= positives <= n - 1 per label."""
    n, n_labels = draw(st.integers(2, 25)), draw(st.integers(1, 5))
    columns = [np.array(draw(st.permutations(range(n))), dtype=np.float64) for _ in range(n_labels)]
    scale = draw(st.floats(1e-3, 1e3))
    Y = np.zeros((n, n_labels), dtype=np.int8)
    for j in range(n_labels):
        Y[np.array(draw(st.permutations(range(n))))[: draw(st.integers(1, n - 1))], j] = 1
    return scale * (np.column_stack(columns) - n / 2), Y


@given(distinct_scores())
def test_proportional_cut_reproduces_the_training_frequencies(case):
    scores, Y = case
    threshold = ProportionalCut().fit(None, None, Y, scores)
    np.testing.assert_array_equal(threshold.predict(scores).sum(axis=0), Y.sum(axis=0))


def test_proportional_cut_learns_from_the_fitted_models_training_scores(data):
    X, Y = data
    model = _br(thresholding="proportional_cut").fit(X, Y)
    np.testing.assert_array_equal(model.predict(X).sum(axis=0), Y.sum(axis=0))
    np.testing.assert_array_equal(
        model.threshold_.thresholds, ProportionalCut().fit(None, X, Y, model.decision_function(X)).thresholds
    )


# -- tuned thresholds -----------------------------------------------------------------------


@given(scored_labels())
def test_macro_tuning_takes_each_labels_best_candidate(case):
    scores, Y = case
    thresholds, info = tune_thresholds(scores, Y, "macro")
    tp, predicted, positives = _counts(scores, Y, thresholds)
    chosen = 2 * tp / (predicted + positives)
    for j in range(scores.shape[1]):
        for c in candidate_thresholds(scores[:, j]):
            tp_c = np.sum((scores[:, j] > c) & (Y[:, j] == 1))
            assert 2 * tp_c / (np.sum(scores[:, j] > c) + positives[j]) <= chosen[j] + 1e-12
    assert info["objective"] == pytest.approx(_objective(scores, Y, thresholds, "macro"), abs=1e-12)


@pytest.mark.parametrize("objective", ["micro", "both"])
@given(case=scored_labels())
def test_micro_and_both_tuning_end_where_no_labels_threshold_can_raise_the_objective(objective, case):
    scores, Y = case
    thresholds, info = tune_thresholds(scores, Y, objective)
    reached = _objective(scores, Y, thresholds, objective)
    assert info["objective"] == pytest.approx(reached, abs=1e-12)
    for j in range(scores.shape[1]):
        for c in candidate_thresholds(scores[:, j]):
            moved = thresholds.copy()
            moved[j] = c
            assert _objective(scores, Y, moved, objective) <= reached + 1e-9
    # Never worse than the zero rule, nor than the per-label optimum the ascent also starts from.
    assert reached >= _objective(scores, Y, np.zeros(scores.shape[1]), objective) - 1e-12
    macro, _ = tune_thresholds(scores, Y, "macro")
    assert reached >= _objective(scores, Y, macro, objective) - 1e-12


def test_tuning_leaves_out_scores_that_are_not_finite():
    scores = np.array([[2.0, np.nan], [1.0, 0.5], [-1.0, np.nan], [-2.0, -0.5]])
    Y = np.array([[1, 1], [1, 1], [0, 0], [0, 0]])
    thresholds, _ = tune_thresholds(scores, Y, "macro")
    assert -1.0 < thresholds[0] < 1.0 and -0.5 < thresholds[1] < 0.5


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_a_tuned_threshold_is_tuned_on_out_of_fold_scores_of_the_training_rows_only(data, objective):
    X, Y = data
    train = np.arange(60)
    model = _br(thresholding=TUNED[objective](cv=3, random_state=4)).fit(X[train], Y[train])
    # The same out-of-fold scores, from the training rows alone, give the same thresholds.
    scores, n_left_out = out_of_fold_scores(_br(), X[train], Y[train], 3, random_state=4)
    assert n_left_out == 0 and np.all(np.isfinite(scores))
    expected, info = tune_thresholds(scores, Y[train], objective)
    np.testing.assert_allclose(model.threshold_.thresholds, expected, rtol=0, atol=1e-9)
    assert model.threshold_.oof_objective == pytest.approx(info["objective"])
    np.testing.assert_array_equal(
        model.predict(X[60:]), (model.decision_function(X[60:]) > expected[None, :]).astype(np.int64)
    )


def test_the_inner_fits_use_the_zero_threshold_and_no_warm_start():
    model = mlc.make_method("bsvm", thresholding="tuned_f1", warm_start=True, lam=0.5)
    inner = inner_estimator(model)
    assert inner.thresholding == "zero" and inner.warm_start is False and inner.lam == 0.5
    assert model.thresholding == "tuned_f1"  # the estimator's own parameters are not touched


def test_a_label_constant_in_an_inner_fold_is_left_out_and_counted(data):
    X, Y = data
    Y = Y.copy()
    Y[:, 0] = 0
    Y[0, 0] = 1  # one positive: the training rows of the fold that holds it out have none
    with pytest.warns(UserWarning, match=r"\(inner fold, label\) pairs had a label constant"):
        model = _br(thresholding=TunedF1(cv=3, random_state=0)).fit(X, Y)
    assert model.threshold_.n_left_out == 1
    assert np.all(np.isfinite(model.threshold_.thresholds))


class _Spy(Threshold):
    """Records what ``fit`` receives (a threshold must learn from the training rows alone)."""

    name = "spy"

    def __init__(self):
        self.seen = []

    def fit(self, estimator, X, Y, scores, **data):
        self.seen.append((X.shape[0], Y.shape, scores.shape))
        return ZeroThreshold()

    def predict(self, scores):
        raise AssertionError("the spy is never the fitted threshold")


def test_fit_gives_the_threshold_the_training_rows_and_their_scores(data):
    X, Y = data
    spy = _Spy()
    model = _br(thresholding=spy).fit(X[:50], Y[:50])
    assert spy.seen == [(50, (50, 4), (50, 4))]
    assert isinstance(model.threshold_, ZeroThreshold) and model.thresholding is spy


# -- persistence ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", [*sorted(STOCK), "learned_linear"])
def test_a_fitted_threshold_is_saved_and_loaded_with_the_model(data, tmp_path, name):
    X, Y = data
    model = _br(thresholding=name).fit(X, Y)
    path = save_model(model, tmp_path / "model.mlcore")
    loaded = load_model(path)
    assert type(loaded.threshold_) is type(model.threshold_) and loaded.threshold_.name == name
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.parts_["threshold"].describe() == model.threshold_.describe()


# -- every registered method ----------------------------------------------------------------

METHODS = sorted(spec.name for spec in mlc.list_methods())


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", METHODS)
def test_every_registered_method_takes_and_applies_thresholding(data, name):
    X, Y = data
    assert "thresholding" in mlc.make_method(name).get_params()
    # Every label of every row: the threshold, not the method's own rule, decides.
    everything = mlc.make_method(name, thresholding=RankCut(k=Y.shape[1])).fit(X, Y)
    np.testing.assert_array_equal(everything.predict(X), np.ones(Y.shape, dtype=np.int64))
    model = mlc.make_method(name, thresholding=TunedF1(cv=2)).fit(X, Y)
    assert model.threshold_.name == "tuned_f1" and model.threshold_.fitted
    np.testing.assert_array_equal(model.predict(X), model.threshold_.predict(model.decision_function(X)))
    if hasattr(model, "parts_"):
        assert model.parts_["threshold"] is model.threshold_


@pytest.mark.parametrize("value", ["tuned", "ZERO", "threshold", None, 0.5])
@pytest.mark.parametrize("name", ["br", "bsvm", "larank", "mlknn"])
def test_bad_thresholding_is_refused_naming_the_parameter_and_the_known_names(data, name, value):
    X, Y = data
    with pytest.raises(ValueError, match=r"thresholding must be a registered threshold name \(.*tuned_f1.*zero\)"):
        mlc.make_method(name, thresholding=value).fit(X, Y)


def test_the_ranking_threshold_settings_are_refused_beside_another_thresholding(data):
    X, Y = data
    with pytest.raises(ValueError, match="threshold_cv=3 configure thresholding='learned_linear'"):
        mlc.make_method("larank", thresholding="tuned_f1", threshold_cv=3).fit(X, Y)
    model = mlc.make_method("larank", thresholding="tuned_f1").fit(X, Y)
    with pytest.raises(ValueError, match="decision_threshold is t\\(x\\) of the learned_linear threshold"):
        model.decision_threshold(X)


def test_thresholds_are_registered_components():
    names = {spec.name for spec in mlc.list_components("threshold")}
    assert {"zero", "tuned_f1", "tuned_micro_f1", "tuned_macro_f1", "rank_cut", "proportional_cut",
            "learned_linear"} <= names  # fmt: skip
    for name in names:
        assert isinstance(mlc.make_component("threshold", name), Threshold)


# -- command line, runner and report ---------------------------------------------------------


def _cli(capsys, *argv):
    from multilabel_core.cli import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_fit_takes_threshold_and_saves_it_with_the_model(capsys, tmp_path):
    path = tmp_path / "model.mlcore"
    code, out, err = _cli(capsys, "fit", "br", "synthetic", "--out", path, "--threshold", "rank_cut", "--json")
    assert code == 0, err
    assert json.loads(out)["threshold"].startswith("rank_cut(k=")
    model = load_model(path)
    assert model.threshold_.name == "rank_cut"
    code, _, err = _cli(capsys, "fit", "br", "synthetic", "--out", path, "--threshold", "rank_cut",
                        "--param", "thresholding=zero")  # fmt: skip
    assert code != 0 and "give the threshold once" in err


def test_evaluate_takes_threshold_and_refuses_an_unknown_one(capsys):
    code, out, err = _cli(capsys, "evaluate", "br", "synthetic", "--cv", "2", "--threshold", "rank_cut", "--json")
    assert code == 0, err
    assert json.loads(out)["threshold"] == "rank_cut"
    with pytest.raises(SystemExit) as exit_:  # argparse's usage error
        _cli(capsys, "evaluate", "br", "synthetic", "--threshold", "tuned")
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "expected one of" in err and "tuned_f1" in err


def test_compare_adds_the_threshold_to_every_grid_and_the_report_names_it(capsys, tmp_path):
    from multilabel_core.experiments.store import read_records

    code, out, err = _cli(capsys, "compare", "br", "--data", "synthetic", "--protocol", "kfold", "--protocol-param",
                          "n_splits=2", "--inner-cv", "2", "--no-plots", "--grid", "C=0.1,1", "--threshold", "rank_cut",
                          "--out", tmp_path / "run", "--json")  # fmt: skip
    assert code == 0, err
    records = read_records(tmp_path / "run")
    assert len(records) == 2 and all(r["threshold"].startswith("rank_cut(k=") for r in records)
    assert all(point["params"]["thresholding"] == "rank_cut" for r in records for point in r["search"])
    report = (tmp_path / "run" / "report.md").read_text()
    runs = report.split("## Runs")[1].split("##")[0]
    assert "| threshold |" in runs and "rank_cut(k=" in runs


def test_a_thresholding_grid_is_searched_like_any_parameter(tmp_path):
    from multilabel_core.experiments import run_experiment

    result = run_experiment(["br"], ["synthetic"], "kfold", tmp_path / "run", protocol_params={"n_splits": 2},
                            grids={"br": {"thresholding": ["zero", "rank_cut"]}}, inner_cv=2,
                            selection_metric="micro_f1", progress=False, plots=False)  # fmt: skip
    for record in result.records:
        assert {point["params"]["thresholding"] for point in record["search"]} == {"zero", "rank_cut"}
        assert record["threshold"].split("(")[0] == record["params"]["thresholding"]
