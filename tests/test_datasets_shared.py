"""Every file of the shared data folder read as the file means it.

The table is ../shared/datasets/README.md's: examples, features, labels, label cardinality
(3 decimals), and the file's row form.  The split files have no LCard there: their rows must
add up to the full file's, and so must their label counts.  For the text benchmarks every
feature is a word (or visual-word) indicator declared nominal ``{0,1}``: one 0/1 column each,
and X stays CSR with exactly the file's stored non-zero feature entries, counted here by a
parse of the raw rows independent of the reader.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

from multilabel_core.datasets import DENSE_ABOVE, load_dataset, read_mulan

# name -> (examples, features, labels, LCard or None, stored in sparse rows)
TABLE = {
    "emotions": (593, 72, 6, 1.868, False),
    "emotions-train": (391, 72, 6, None, False),
    "emotions-test": (202, 72, 6, None, False),
    "scene": (2407, 294, 6, 1.074, False),
    "scene-train": (1211, 294, 6, None, False),
    "scene-test": (1196, 294, 6, None, False),
    "yeast": (2417, 103, 14, 4.237, False),
    "yeast-train": (1500, 103, 14, None, False),
    "yeast-test": (917, 103, 14, None, False),
    "flags": (194, 19, 7, 3.392, False),  # 19 source attributes: X's width with nominal="ordinal"
    "rcv1subset1": (6000, 500, 101, 2.880, True),
    "yahoo-arts": (7484, 500, 26, 1.654, True),
    "yahoo-arts-mkml": (5000, 462, 26, 1.636, True),
    "enron": (1702, 1001, 53, 3.378, True),
    "medical": (978, 1449, 45, 1.245, True),
    "corel5k": (5000, 499, 374, 3.522, True),
    "bibtex": (7395, 1836, 159, 2.402, True),
    "cal500": (502, 68, 174, 26.044, False),
    "corel16k001": (13766, 500, 153, 2.859, True),
}
TEXT_SETS = ("enron", "medical", "bibtex", "corel5k")
# Mean stored feature values per row (1 decimal): the words present in an example.  Reading
# each word as two complementary columns gave exactly `features` per row instead.
WORDS_PER_ROW = {"enron": 84.1, "medical": 13.4, "bibtex": 68.7, "corel5k": 8.3}
SPLITS = ("emotions", "scene", "yeast")


@pytest.fixture(scope="module")
def loaded(datasets_dir):
    """Each dataset read once for the module (all of them take about 2 s)."""
    cache = {}

    def load(name):
        if name not in cache:
            nominal = "ordinal" if name == "flags" else "onehot"
            cache[name] = load_dataset(name, data_home=datasets_dir, nominal=nominal)
        return cache[name]

    return load


def test_the_table_covers_every_file(datasets_dir):
    files = {path.name.removesuffix(".arff") for path in datasets_dir.glob("*.arff")}
    assert files == set(TABLE)


@pytest.mark.parametrize("name", TABLE)
def test_shape_labels_cardinality_and_storage(loaded, name):
    n, d, n_labels, lcard, stored_sparse = TABLE[name]
    ds = loaded(name)
    assert (ds.n_samples, ds.n_features, ds.n_labels) == (n, d, n_labels)
    assert ds.X.dtype == np.float64 and ds.Y.dtype == np.int8
    if lcard is not None:
        assert round(ds.Y.sum(axis=1).mean(), 3) == lcard
    # Under sparse="auto" a file of sparse rows stays CSR unless denser than the threshold;
    # every sparse file here is far below it.
    assert sp.isspmatrix_csr(ds.X) == stored_sparse
    if stored_sparse:
        assert ds.X.nnz < DENSE_ABOVE * n * d


@pytest.mark.parametrize("name", SPLITS)
def test_splits_add_up_to_the_full_file(loaded, name):
    full, train, test = loaded(name), loaded(f"{name}-train"), loaded(f"{name}-test")
    assert train.n_samples + test.n_samples == full.n_samples
    np.testing.assert_array_equal(train.Y.sum(axis=0) + test.Y.sum(axis=0), full.Y.sum(axis=0))
    assert train.label_names == test.label_names == full.label_names


def test_flags_one_hot_width(datasets_dir):
    """10 numeric + 5 binary {0,1} attributes + 7 + 5 + 11 + 8 one-hot columns."""
    assert read_mulan(datasets_dir / "flags.arff").n_features == 46


def raw_feature_entries(arff_path, xml_path) -> tuple[int, int, int]:
    """(feature attributes, rows, stored non-zero feature entries) of a sparse Mulan file.

    A minimal parse of its own: the labels are the file's last attributes (checked against
    the XML), a row is ``{index value,...}``.
    """
    labels = re.findall(r'<label name="([^"]*)"', xml_path.read_text())
    header, data = arff_path.read_text().split("@data", 1)
    names = re.findall(r"^@attribute\s+(\S+)", header, flags=re.MULTILINE)
    assert set(names[-len(labels):]) == set(labels)
    n_features = len(names) - len(labels)
    rows = stored = 0
    for line in data.splitlines():
        line = line.strip()
        if not line:
            continue
        rows += 1
        for entry in line.strip("{}").split(","):
            index, value = entry.split()
            stored += int(index) < n_features and value != "0"
    return n_features, rows, stored


@pytest.mark.parametrize("name", TEXT_SETS)
def test_text_sets_store_one_value_per_word_present(loaded, datasets_dir, name):
    ds = loaded(name)
    n_features, rows, stored = raw_feature_entries(datasets_dir / f"{name}.arff", datasets_dir / f"{name}.xml")
    assert (ds.n_samples, ds.n_features) == (rows, n_features)
    assert ds.X.nnz == stored
    np.testing.assert_array_equal(ds.X.data, 1.0)
    assert round(ds.X.nnz / ds.n_samples, 1) == WORDS_PER_ROW[name]
    assert {feature.encoding for feature in ds.nominal_features} == {"binary"}
    assert len(ds.nominal_features) == n_features

