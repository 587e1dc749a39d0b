"""The ``given`` protocol and ``A+B`` datasets: the standard Mulan train/test files, the first N rows."""

from __future__ import annotations

import json
from typing import ClassVar

import numpy as np
import pytest
import scipy.sparse as sp

from multilabel_core.cli import main
from multilabel_core.datasets import Dataset, concatenate, load_dataset, make_correlated_multilabel
from multilabel_core.estimator import MultiLabelEstimator
from multilabel_core.experiments.config import fingerprint, load_experiment
from multilabel_core.experiments.protocols import get_protocol, given
from multilabel_core.experiments.runner import run_experiment
from multilabel_core.experiments.store import read_records

GIVEN = get_protocol("given")
JOINED = "emotions-train+emotions-test"


def split_of(dataset, **params):
    (split,) = GIVEN.split(dataset.Y, parts=dataset.parts, **params)
    return split


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------ the real Mulan splits
@pytest.mark.parametrize("name, n_train, n_test", [("emotions", 391, 202), ("yeast", 1500, 917), ("scene", 1211, 1196)])
def test_the_mulan_train_and_test_files_are_the_two_parts(datasets_dir, name, n_train, n_test):
    joined = load_dataset(f"{name}-train+{name}-test", data_home=datasets_dir)
    train_file = load_dataset(f"{name}-train", data_home=datasets_dir)
    test_file = load_dataset(f"{name}-test", data_home=datasets_dir)
    assert joined.parts == (n_train, n_test) and joined.name == f"{name}-train+{name}-test"
    train, test = split_of(joined)
    np.testing.assert_array_equal(train, np.arange(n_train))
    np.testing.assert_array_equal(test, np.arange(n_train, n_train + n_test))
    # The same parsed values, row for row: no arithmetic happens between the files and the parts.
    np.testing.assert_array_equal(joined.X[train], train_file.X)
    np.testing.assert_array_equal(joined.X[test], test_file.X)
    np.testing.assert_array_equal(joined.Y[train], train_file.Y)
    np.testing.assert_array_equal(joined.Y[test], test_file.Y)
    assert joined.feature_names == train_file.feature_names and joined.label_names == train_file.label_names


def test_the_first_2000_yahoo_rows_train_and_the_features_stay_sparse(datasets_dir):
    yahoo = load_dataset("yahoo-arts-mkml", data_home=datasets_dir)
    assert yahoo.parts == () and sp.issparse(yahoo.X)
    train, test = split_of(yahoo, n_train=2000)
    assert (len(train), len(test)) == (2000, 3000)
    np.testing.assert_array_equal(train, np.arange(2000))
    joined = load_dataset("yahoo-arts-mkml+yahoo-arts-mkml", data_home=datasets_dir)
    assert sp.issparse(joined.X) and joined.X.nnz == 2 * yahoo.X.nnz and joined.parts == (5000, 5000)


def test_a_single_dataset_without_n_train_is_refused_saying_how_to_give_the_split(datasets_dir):
    emotions = load_dataset("emotions", data_home=datasets_dir)
    with pytest.raises(ValueError, match=r"no split given: .*emotions-train\+emotions-test.* n_train=N"):
        split_of(emotions)


def test_n_train_must_agree_with_the_boundary_of_a_joined_dataset(datasets_dir):
    joined = load_dataset(JOINED, data_home=datasets_dir)
    with pytest.raises(ValueError, match=r"n_train=300 disagrees with .* 391 \+ 202: .* ends at row 391"):
        split_of(joined, n_train=300)
    np.testing.assert_array_equal(split_of(joined, n_train=391)[0], split_of(joined)[0])


def test_the_split_is_fixed_by_the_data_whatever_the_seed():
    Y = make_correlated_multilabel(n_samples=30, n_labels=3, random_state=0).Y
    first = GIVEN.split(Y, seed=0, n_train=10)
    other = GIVEN.split(Y, seed=9, n_train=10)
    assert len(first) == 1 and all(np.array_equal(a, b) for a, b in zip(first[0], other[0]))


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda Y: given(Y, parts=(10, 10)), "summing to the 30 rows"),
        (lambda Y: given(Y, parts=(10, 10, 10)), "joins 3 files; give n_train at one of their boundaries [10, 20]"),
        (lambda Y: given(Y, n_train=30), "n_train"),
        (lambda Y: GIVEN.split(Y, n_train=5, parts=(10, 10, 10)), "ends at row 10 or 20; give one of them"),
        (lambda Y: GIVEN.params({"parts": (10, 20)}), "no parameter 'parts'; valid: n_train"),
    ],
)
def test_bad_splits_are_value_errors_naming_the_problem(call, needle):
    Y = make_correlated_multilabel(n_samples=30, n_labels=3, random_state=0).Y
    with pytest.raises(ValueError) as info:
        call(Y)
    assert needle in str(info.value)


def test_repeated_fixed_train_draws_splits_of_the_files_sizes_from_a_joined_dataset(datasets_dir):
    joined = load_dataset(JOINED, data_home=datasets_dir)
    splits = get_protocol("repeated_fixed_train").split(joined.Y, seed=0, parts=joined.parts, n_train=391)
    assert len(splits) == 10
    for train, test in splits:
        assert (len(train), len(test)) == (391, 202)
        assert np.all(joined.Y[train].sum(axis=0) > 0) and np.all(joined.Y[test].sum(axis=0) > 0)
    assert not any(np.array_equal(train, np.arange(391)) for train, _ in splits), "random rows, not the files'"


# --------------------------------------------------------------------- joining
def small(n=6, *, labels=("a", "b"), features=("f0", "f1", "f2"), seed=0, **kwargs):
    rng = np.random.default_rng(seed)
    return Dataset(rng.random((n, len(features))), rng.integers(0, 2, (n, len(labels))), features, labels, **kwargs)


def test_mismatched_parts_are_refused_naming_both_and_the_difference(datasets_dir):
    with pytest.raises(ValueError) as info:
        load_dataset("emotions-train+yeast-test", data_home=datasets_dir)
    assert str(info.value) == "cannot join datasets 'emotions-train' and 'yeast-test': 72 vs 103 features; 6 vs 14 labels"
    cases = [
        (small(labels=("b", "a"), name="B"), "the same labels in another order"),
        (small(labels=("a", "c"), name="B"), "label 1 is named 'b' vs 'c'"),
        (small(features=("f0", "g", "f2"), name="B"), "feature 1 is named 'f1' vs 'g'"),
    ]
    for other, needle in cases:
        with pytest.raises(ValueError, match=f"cannot join datasets 'A' and 'B': {needle}"):
            concatenate([small(name="A"), other])


def test_joining_keeps_sparse_features_sparse_and_takes_names_where_a_format_gives_them():
    named = small(name="A")
    unnamed = Dataset(sp.csr_matrix(small(seed=1).X), small(seed=1).Y, label_names=("a", "b"), name="B")
    joined = concatenate([named, unnamed])
    assert sp.issparse(joined.X) and joined.parts == (6, 6) and joined.name == "A+B"
    np.testing.assert_array_equal(joined.X.toarray(), np.vstack([named.X, unnamed.X.toarray()]))
    assert joined.feature_names == ("f0", "f1", "f2")
    assert concatenate([joined, small(3, name="C")]).parts == (6, 6, 3)
    with pytest.raises(ValueError, match="empty dataset name"):
        load_dataset("emotions+")


def test_parts_must_add_up_to_the_rows():
    with pytest.raises(ValueError, match="summing to the 6 rows"):
        small(parts=(2, 3))
    with pytest.raises(ValueError, match="two or more"):
        small(parts=(6,))


# ------------------------------------------------------------------ the runner
class LoggedRidge(MultiLabelEstimator):
    """Ridge on {-1, +1} targets that logs the rows of every fit and every prediction."""

    log: ClassVar[list] = []

    def __init__(self, lam=1.0):
        self.lam = lam

    def _fit(self, X, Y):
        type(self).log.append(("fit", X.copy()))
        X1 = np.hstack([X, np.ones((X.shape[0], 1))])
        self.W_ = np.linalg.solve(X1.T @ X1 + self.lam * np.eye(X1.shape[1]), X1.T @ (2.0 * Y - 1.0))

    def _decision_function(self, X):
        type(self).log.append(("predict", X.copy()))
        return np.hstack([X, np.ones((X.shape[0], 1))]) @ self.W_


def rows(X) -> set:
    return {row.tobytes() for row in np.ascontiguousarray(X)}


def test_the_search_sees_the_training_file_only_and_records_name_the_joined_dataset(tmp_path, datasets_dir):
    LoggedRidge.log.clear()
    result = run_experiment(
        {"ridge": LoggedRidge()}, [JOINED], "given", tmp_path / "run", grids={"ridge": {"lam": [0.1, 10.0]}},
        inner_cv=2, data_home=datasets_dir, progress=False, plots=False,
    )  # fmt: skip
    (record,) = result.records
    assert (record["dataset"], record["protocol"], record["n_train"], record["n_test"]) == (JOINED, "given", 391, 202)
    assert record["status"] == "ok" and len(record["search"]) == 2
    train_rows = rows(load_dataset("emotions-train", data_home=datasets_dir).X)
    test_rows = rows(load_dataset("emotions-test", data_home=datasets_dir).X)
    *search, (_, final_fit), (_, final_scores), (_, final_predictions) = LoggedRidge.log
    assert len(search) == 2 * 2 * 2, "two grid points x two inner folds, each a fit and a prediction"
    for _, X in search:
        assert rows(X) <= train_rows and len(X) < 391
    assert rows(final_fit) == train_rows and rows(final_scores) == rows(final_predictions) == test_rows
    stored = json.loads((tmp_path / "run" / "config.json").read_text())["config"]
    assert stored["datasets"][JOINED]["parts"] == [391, 202]
    again = run_experiment(
        {"ridge": LoggedRidge()}, [JOINED], "given", tmp_path / "run", grids={"ridge": {"lam": [0.1, 10.0]}},
        inner_cv=2, data_home=datasets_dir, progress=False, plots=False,
    )  # fmt: skip
    assert (again.computed, again.resumed) == (0, 1)


def test_a_refused_split_leaves_no_results_folder(tmp_path, datasets_dir):
    with pytest.raises(ValueError, match="dataset 'emotions', protocol 'given': no split given"):
        run_experiment(["br"], ["emotions"], "given", tmp_path / "run", data_home=datasets_dir, progress=False)
    assert not (tmp_path / "run").exists()


def test_the_fingerprint_of_a_dataset_of_one_file_is_unchanged(datasets_dir):
    emotions = load_dataset("emotions", data_home=datasets_dir)
    joined = load_dataset(JOINED, data_home=datasets_dir)
    assert set(fingerprint(emotions)) == {"shape", "sha256"}
    # The same rows in the same order: only the parts tell the two apart.
    assert fingerprint(joined) == {**fingerprint(emotions), "parts": [391, 202]}


# ---------------------------------------------------------- command line and file
def test_compare_br_on_the_mulan_files_from_an_experiment_file(capsys, tmp_path, datasets_dir):
    config = tmp_path / "experiment.toml"
    config.write_text(f'methods = ["br"]\ndatasets = ["{JOINED}"]\nprotocol = "given"\n[grids.br]\nC = [1.0]\n')
    assert load_experiment(config).protocol_params == {"n_train": None}
    code, out, err = run_cli(capsys, "compare", "--config", config, "--data-home", datasets_dir,
                             "--out", tmp_path / "run", "--no-plots")  # fmt: skip
    assert code == 0, err
    assert "protocol given (n_train=None)" in out and "1 evaluation(s) computed" in out
    assert f"{JOINED}  br" in out and "+- nan" not in out, "one split: the value alone"
    (record,) = read_records(tmp_path / "run")
    assert (record["dataset"], record["n_train"], record["n_test"], record["status"]) == (JOINED, 391, 202, "ok")


def test_compare_help_lists_every_protocol(capsys):
    from multilabel_core.experiments.protocols import PROTOCOLS

    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert all(name in help_text for name in PROTOCOLS)


@pytest.mark.parametrize(
    "data, params, needle",
    [
        ("emotions", [], "dataset 'emotions', protocol 'given': no split given"),
        ("emotions-train+yeast-test", [], "cannot join datasets 'emotions-train' and 'yeast-test'"),
        (JOINED, ["--protocol-param", "n_train=300"], "n_train=300 disagrees"),
        ("yahoo-arts-mkml", ["--protocol-param", "n_train=5000"], "n_train"),
    ],
)
def test_compare_bad_given_input_is_one_line(capsys, tmp_path, datasets_dir, data, params, needle):
    code, _, err = run_cli(capsys, "compare", "br", "--data", data, "--data-home", datasets_dir, "--protocol", "given",
                           *params, "--out", tmp_path / "run")  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and err.startswith("mlcore: error:")
    assert needle in err
    assert not (tmp_path / "run").exists()


def test_compare_on_the_first_2000_yahoo_rows_records_the_split_and_why_it_cannot_be_fitted(
    capsys, tmp_path, datasets_dir
):
    # docs/experiments.md: label 17 of yahoo-arts-mkml has its one relevant row among the last 3000.
    code, _, err = run_cli(capsys, "compare", "br", "--data", "yahoo-arts-mkml", "--data-home", datasets_dir,
                           "--protocol", "given", "--protocol-param", "n_train=2000", "--grid", "C=1",
                           "--out", tmp_path / "run", "--no-plots")  # fmt: skip
    assert code == 1 and "every evaluation failed" in err
    (record,) = read_records(tmp_path / "run")
    assert (record["dataset"], record["protocol"], record["n_train"], record["n_test"]) == (
        "yahoo-arts-mkml", "given", 2000, 3000
    )
    assert "label column 17 has one class only" in record["error"]
