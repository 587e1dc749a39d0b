"""read(write(x)) == x for the Mulan, MEKA and LibSVM formats, on random datasets (hypothesis).

The datasets mix dense and sparse X, numeric and nominal features (one-hot or ordinal, and
binary 0/1 ones declared ``{0,1}`` or ``{1,0}``), and names that need ARFF quoting (blanks,
quotes, commas, braces, percent signs, backslashes, tabs, newlines, non-ASCII letters).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from hypothesis import assume, given
from hypothesis import strategies as st

from multilabel_core.datasets import (
    Dataset,
    NominalFeature,
    read_libsvm,
    read_meka,
    read_mulan,
    write_libsvm,
    write_meka,
    write_mulan,
)

# Characters XML 1.0 can carry: no control characters (tab and newline are added back),
# no surrogates, no non-characters.
NAMES = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Cn")) | st.sampled_from(" \t\n'\",{}%\\=?@"),
    min_size=1,
    max_size=8,
)
VALUES = st.one_of(st.just(0.0), st.integers(-3, 3).map(float), st.floats(allow_nan=False, allow_infinity=False))


@st.composite
def datasets(draw, *, nominal: bool = True):
    """A Dataset; nominal features (one encoding for all) only when ``nominal``."""
    n = draw(st.integers(1, 6))
    n_numeric = draw(st.integers(0 if nominal else 1, 4))
    n_nominal = draw(st.integers(0 if n_numeric else 1, 3)) if nominal else 0
    n_labels = draw(st.integers(1, 4))
    n_names = n_numeric + n_nominal + n_labels
    names = draw(st.lists(NAMES, min_size=n_names, max_size=n_names, unique=True))
    encoding = draw(st.sampled_from(["onehot", "ordinal"]))
    blocks = [("numeric", name, None) for name in names[:n_numeric]]
    for name in names[n_numeric:n_numeric + n_nominal]:
        if draw(st.booleans()):
            blocks.append(("binary", name, draw(st.sampled_from([("0", "1"), ("1", "0")]))))
            continue
        values = tuple(draw(st.lists(NAMES, min_size=1, max_size=3, unique=True)))
        # A nominal attribute declared with the values 0 and 1 always reads back as binary.
        assume(set(values) != {"0", "1"})
        blocks.append(("nominal", name, values))
    blocks = draw(st.permutations(blocks))

    columns, feature_names, nominal_features = [], [], []
    for kind, name, values in blocks:
        start = len(feature_names)
        if kind == "numeric":
            columns.append(np.array(draw(st.lists(VALUES, min_size=n, max_size=n)))[:, None])
            feature_names.append(name)
            continue
        codes = np.array(draw(st.lists(st.integers(0, len(values) - 1), min_size=n, max_size=n)))
        if kind == "binary":
            columns.append(np.array([float(values[code]) for code in codes])[:, None])
            feature_names.append(name)
            nominal_features.append(NominalFeature(name, values, (start,), "binary"))
            continue
        if encoding == "onehot":
            columns.append(np.eye(len(values))[codes])
            feature_names.extend(f"{name}={value}" for value in values)
        else:
            columns.append(codes[:, None].astype(float))
            feature_names.append(name)
        nominal_features.append(NominalFeature(name, values, range(start, len(feature_names)), encoding))
    label_names = names[n_numeric + n_nominal:]
    assume(len(set(feature_names) | set(label_names)) == len(feature_names) + len(label_names))
    X = np.hstack(columns)
    row = st.lists(st.integers(0, 1), min_size=n_labels, max_size=n_labels)
    Y = np.array(draw(st.lists(row, min_size=n, max_size=n)))
    if draw(st.booleans()):
        X = sp.csr_matrix(X)
    return Dataset(X, Y, feature_names, label_names, "rt", nominal_features), encoding


def dense(X) -> np.ndarray:
    return X.toarray() if sp.issparse(X) else X


def assert_same(read: Dataset, written: Dataset, *, sparse: bool, names: bool = True) -> None:
    assert sp.issparse(read.X) == sparse
    np.testing.assert_array_equal(dense(read.X), dense(written.X))
    np.testing.assert_array_equal(read.Y, written.Y)
    assert read.Y.dtype == np.int8 and read.X.dtype == np.float64
    if names:
        assert read.feature_names == written.feature_names
        assert read.label_names == written.label_names
        assert read.nominal_features == written.nominal_features


@given(datasets(), st.sampled_from([None, True, False]), st.sampled_from(["", ".gz"]))
def test_mulan_roundtrip(drawn, sparse, gz):
    dataset, encoding = drawn
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"rt.arff{gz}"
        write_mulan(dataset, path, sparse=sparse)
        stored_sparse = dataset.is_sparse if sparse is None else sparse
        read = read_mulan(path, nominal=encoding, sparse=stored_sparse)
    assert_same(read, dataset, sparse=stored_sparse)
    assert read.name == "rt"


@given(datasets(), st.sampled_from([None, True, False]))
def test_meka_roundtrip(drawn, sparse):
    dataset, encoding = drawn
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rt.arff"
        write_meka(dataset, path, sparse=sparse)
        stored_sparse = dataset.is_sparse if sparse is None else sparse
        read = read_meka(path, nominal=encoding, sparse=stored_sparse)
    assert_same(read, dataset, sparse=stored_sparse)


@given(datasets(nominal=False), st.booleans(), st.sampled_from(["", ".gz"]))
def test_libsvm_roundtrip(drawn, zero_based, gz):
    dataset, _ = drawn
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"rt.svm{gz}"
        write_libsvm(dataset, path, zero_based=zero_based)
        read = read_libsvm(path, dataset.n_features, dataset.n_labels, zero_based=zero_based, sparse=True)
    assert_same(read, dataset, sparse=True, names=False)
    assert read.label_names == tuple(str(j) for j in range(dataset.n_labels))
