"""load_dataset: format from the file name, and the lookup order of bare names."""

from __future__ import annotations

import numpy as np
import pytest

from multilabel_core.datasets import (
    DataFormatError,
    Dataset,
    load_dataset,
    write_libsvm,
    write_meka,
    write_mulan,
)
from multilabel_core.datasets.fetch import CACHE_ENV
from multilabel_core.datasets.loading import DATA_ENV


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))


def small(n_labels: int = 2) -> Dataset:
    X = np.arange(12.0).reshape(4, 3)
    Y = np.eye(4, n_labels, dtype=np.int8)
    return Dataset(X, Y, name="small")


@pytest.mark.parametrize("suffix", [".arff", ".arff.gz"])
def test_arff_with_xml_is_mulan_without_is_meka(tmp_path, suffix):
    write_mulan(small(2), tmp_path / f"mulan{suffix}")
    assert load_dataset(tmp_path / f"mulan{suffix}").n_labels == 2
    write_meka(small(3), tmp_path / f"meka{suffix}")
    ds = load_dataset(str(tmp_path / f"meka{suffix}"))
    assert ds.n_labels == 3 and ds.label_names == ("y0", "y1", "y2")


@pytest.mark.parametrize("suffix", [".svm", ".libsvm", ".txt", ".svm.gz"])
def test_libsvm_suffixes(tmp_path, suffix):
    write_libsvm(small(), tmp_path / f"d{suffix}")
    ds = load_dataset(tmp_path / f"d{suffix}")
    np.testing.assert_array_equal(ds.Y, small().Y)


def test_plain_arff_without_labels_is_refused(tmp_path):
    path = tmp_path / "plain.arff"
    path.write_text("@relation plain\n@attribute a numeric\n@attribute b {0,1}\n@data\n1,0\n")
    with pytest.raises(DataFormatError, match="XML label file"):
        load_dataset(path)


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(ValueError, match="no such data file"):
        load_dataset(tmp_path / "absent.arff")
    (tmp_path / "table.parquet").write_text("1,2\n")
    with pytest.raises(ValueError, match="unknown data format"):
        load_dataset(tmp_path / "table.parquet")
    (tmp_path / "table.csv").write_text("1,2\n")  # CSV is a format now: a header is what it lacks
    with pytest.raises(DataFormatError, match="line 1: the first line holds only numbers"):
        load_dataset(tmp_path / "table.csv")


def test_name_lookup_order(tmp_path, monkeypatch):
    home, env, cache = (tmp_path / name for name in ("home", "env", "cache"))
    for folder, n_labels in ((home, 2), (env, 3), (cache, 4)):
        folder.mkdir()
        write_mulan(small(n_labels), folder / "toy.arff")
    monkeypatch.setenv(DATA_ENV, str(env))
    assert load_dataset("toy", data_home=home).n_labels == 2
    assert load_dataset("toy").n_labels == 3
    monkeypatch.delenv(DATA_ENV)
    assert load_dataset("toy").n_labels == 4
    assert load_dataset("toy").name == "toy"


def test_name_lookup_finds_libsvm_files(tmp_path):
    write_libsvm(small(), tmp_path / "sv.libsvm")
    assert load_dataset("sv", data_home=tmp_path).n_samples == 4


def test_unknown_name_lists_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "env"))
    with pytest.raises(ValueError) as exc_info:
        load_dataset("nowhere", data_home=tmp_path / "home")
    message = str(exc_info.value)
    assert "unknown dataset 'nowhere'" in message
    for folder in ("home", "env", "cache"):
        assert str(tmp_path / folder) in message
    monkeypatch.delenv(DATA_ENV)
    with pytest.raises(ValueError, match=rf"\${DATA_ENV}: \(not set\)"):
        load_dataset("nowhere")


def test_real_names(datasets_dir):
    assert load_dataset("flags", data_home=datasets_dir).n_labels == 7
    assert load_dataset(datasets_dir / "emotions.arff").n_samples == 593
