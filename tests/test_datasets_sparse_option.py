"""The ``sparse`` choice through every layer: load_dataset, the experiment file, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

from multilabel_core.cli import main
from multilabel_core.datasets import Dataset, load_dataset, write_libsvm, write_mulan
from multilabel_core.experiments.config import Experiment, load_data, load_experiment

# 4 rows x 5 features: 8 stored values (0.4) in the dense one, 4 (0.2) in the sparse one.
DENSE_ROWS = np.array([[1.0, 2, 0, 0, 0], [0, 3, 4, 0, 0], [0, 0, 5, 6, 0], [7, 0, 0, 0, 8]])
SPARSE_ROWS = np.array([[1.0, 0, 0, 0, 0], [0, 3, 0, 0, 0], [0, 0, 0, 6, 0], [0, 0, 0, 0, 8]])
Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])


@pytest.fixture
def folder(tmp_path):
    """Mulan and LibSVM files written in sparse rows, one above and one below the threshold."""
    for name, X in (("denser", DENSE_ROWS), ("sparser", SPARSE_ROWS)):
        dataset = Dataset(sp.csr_matrix(X), Y, name=name)
        write_mulan(dataset, tmp_path / f"{name}.arff", sparse=True)
        write_libsvm(dataset, tmp_path / f"{name}.svm")
    return tmp_path


@pytest.mark.parametrize("suffix", [".arff", ".svm"])
def test_load_dataset_auto_true_false(folder, suffix):
    denser, sparser = folder / f"denser{suffix}", folder / f"sparser{suffix}"
    assert isinstance(load_dataset(denser).X, np.ndarray)
    assert sp.isspmatrix_csr(load_dataset(sparser).X)
    assert sp.isspmatrix_csr(load_dataset(denser, sparse=True).X)
    assert isinstance(load_dataset(sparser, sparse=False).X, np.ndarray)
    np.testing.assert_array_equal(load_dataset(denser).X, DENSE_ROWS)
    np.testing.assert_array_equal(load_dataset(sparser, sparse=False).X, SPARSE_ROWS)


def test_load_dataset_checks_the_option_before_looking_for_the_file(folder):
    with pytest.raises(ValueError, match="sparse must be 'auto', True or False, got 'dense'"):
        load_dataset("no_such_name", data_home=folder, sparse="dense")


def test_experiment_sparse_key(folder):
    toml = folder / "experiment.toml"
    toml.write_text('methods = ["br"]\ndatasets = ["denser", "synthetic"]\nsparse = true\n')
    experiment = load_experiment(toml, data_home=str(folder))
    assert experiment.sparse is True
    loaded = experiment.load_datasets()
    assert sp.isspmatrix_csr(loaded["denser"].X) and sp.isspmatrix_csr(loaded["synthetic"].X)
    assert load_experiment(toml, data_home=str(folder), sparse="auto").sparse == "auto"
    auto = Experiment(methods=["br"], datasets=["denser"], data_home=str(folder))
    assert auto.sparse == "auto" and isinstance(auto.load_datasets()["denser"].X, np.ndarray)
    with pytest.raises(ValueError, match="sparse must be 'auto', True or False, got 'yes'"):
        Experiment(methods=["br"], datasets=["denser"], sparse="yes")
    toml.write_text('methods = ["br"]\ndatasets = ["denser"]\nsparse = "always"\n')
    with pytest.raises(ValueError, match="got 'always'"):
        load_experiment(toml)


def test_synthetic_stays_dense_under_auto():
    assert isinstance(load_data("synthetic", sparse="auto").X, np.ndarray)
    assert sp.isspmatrix_csr(load_data("synthetic", sparse=True).X)


@pytest.mark.parametrize(
    "option, storage", [([], "dense"), (["--sparse", "auto"], "dense"), (["--sparse", "true"], "csr")]
)
def test_cli_describe_reports_the_storage(capsys, folder, option, storage):
    code = main(["describe", "denser", "--data-home", str(folder), "--json", *option])
    out, err = capsys.readouterr()
    assert code == 0, err
    payload = json.loads(out)
    assert payload["storage"] == storage and payload["density"] == pytest.approx(0.4)


def test_cli_sparse_false_densifies_a_sparse_file(capsys, folder):
    assert main(["describe", "sparser", "--data-home", str(folder), "--json", "--sparse", "false"]) == 0
    assert json.loads(capsys.readouterr().out)["storage"] == "dense"


def test_cli_evaluate_takes_the_option(capsys, folder):
    code = main(["evaluate", "br", "sparser", "--data-home", str(folder), "--cv", "2", "--sparse", "true", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert len(json.loads(out)["average_precision"]) == 2


def test_cli_bad_sparse_value(capsys, folder):
    with pytest.raises(SystemExit) as exc_info:
        main(["describe", "denser", "--data-home", str(folder), "--sparse", "maybe"])
    assert exc_info.value.code == 2
    assert "--sparse: expected auto, true or false, got 'maybe'" in capsys.readouterr().err
