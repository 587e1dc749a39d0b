"""The LibSVM multi-label reader and writer."""

from __future__ import annotations

import gzip
import re

import numpy as np
import pytest
import scipy.sparse as sp

from multilabel_core.datasets import DataFormatError, Dataset, read_libsvm, write_libsvm

TEXT = """# a whole-line comment
0,2 1:0.5 3:-2
 2:1.25
1 # no features, a trailing comment

2\t1:1e-3\t4:7
"""


def test_read(tmp_path):
    path = tmp_path / "d.svm"
    path.write_text(TEXT)
    ds = read_libsvm(path, sparse=True)
    assert sp.isspmatrix_csr(ds.X) and ds.X.dtype == np.float64
    np.testing.assert_array_equal(
        ds.X.toarray(), [[0.5, 0, -2, 0], [0, 1.25, 0, 0], [0, 0, 0, 0], [1e-3, 0, 0, 7]]
    )
    np.testing.assert_array_equal(ds.Y, [[1, 0, 1], [0, 0, 0], [0, 1, 0], [0, 0, 1]])
    assert ds.label_names == ("0", "1", "2")
    assert ds.feature_names == ("x1", "x2", "x3", "x4")
    assert ds.name == "d"


def test_sparse_choice(tmp_path):
    """5 of the 16 entries of TEXT are stored: 0.3125, just above DENSE_ABOVE = 0.3."""
    path = tmp_path / "d.svm"
    path.write_text(TEXT)
    assert isinstance(read_libsvm(path).X, np.ndarray)
    assert sp.isspmatrix_csr(read_libsvm(path, n_features=5).X)  # 5 of 20: 0.25
    assert isinstance(read_libsvm(path, n_features=5, sparse=False).X, np.ndarray)
    np.testing.assert_array_equal(read_libsvm(path).X, read_libsvm(path, sparse=True).X.toarray())
    for bad in ("yes", None, 1):
        with pytest.raises(ValueError, match="sparse must be 'auto', True or False"):
            read_libsvm(path, sparse=bad)


def test_sizes_zero_based_and_gzip(tmp_path):
    path = tmp_path / "d.libsvm.gz"
    with gzip.open(path, "wt") as handle:
        handle.write("1 0:2\n 2:1\n")
    ds = read_libsvm(path, n_features=5, n_labels=4, zero_based=True)
    assert ds.X.shape == (2, 5) and ds.Y.shape == (2, 4)
    assert ds.feature_names[0] == "x0"
    np.testing.assert_array_equal(ds.X.toarray()[:, :3], [[2, 0, 0], [0, 0, 1]])


def test_writer_format(tmp_path):
    ds = Dataset(np.array([[0.0, 1.5], [0.0, 0.0], [2.0, 0.0]]), np.array([[1, 1], [0, 0], [0, 0]]))
    path = tmp_path / "w.svm"
    write_libsvm(ds, path)
    # No label: the line starts with a blank; nothing at all: one explicit zero, so the row survives.
    assert path.read_text().split("\n") == ["0,1 2:1.5", " 1:0", " 1:2", ""]


@pytest.mark.parametrize(
    "text, kwargs, line, reason",
    [
        ("0 1:1\n0 1:1 2\n", {}, 2, "'index:value' pairs"),
        ("0 1:1\n0 1:x\n", {}, 2, "feature entry 1:x is not index:number"),
        ("0 1:1\na 1:1\n", {}, 2, "labels must be non-negative integers"),
        ("0 1:1\n-1 1:1\n", {}, 2, "labels must be non-negative integers"),
        ("0 0:1\n", {}, 1, r"feature index 0 is below 1 \(zero_based=False\)"),
        ("0 1:1\n0 9:1\n", {"n_features": 4}, 2, "feature index 9 is out of range for n_features=4"),
        ("0 1:1\n5 1:1\n", {"n_labels": 3}, 2, "label 5 is out of range for n_labels=3"),
        ("0 2:1 1:1\n", {}, 1, "strictly increasing"),
        ("0 1:inf\n", {}, 1, "not finite"),
    ],
)
def test_bad_lines_raise_with_file_line_and_reason(tmp_path, text, kwargs, line, reason):
    path = tmp_path / "bad.svm"
    path.write_text(text)
    with pytest.raises(DataFormatError) as exc_info:
        read_libsvm(path, **kwargs)
    message = str(exc_info.value)
    assert message.startswith(f"{path}, line {line}: ")
    assert re.search(reason, message), message


def test_empty_file(tmp_path):
    path = tmp_path / "empty.svm"
    path.write_text("# nothing\n\n")
    with pytest.raises(DataFormatError, match="holds no examples"):
        read_libsvm(path)


def test_bad_sizes(tmp_path):
    path = tmp_path / "d.svm"
    path.write_text("0 1:1\n")
    with pytest.raises(ValueError, match="n_features"):
        read_libsvm(path, n_features=0)
    with pytest.raises(ValueError, match="n_labels"):
        read_libsvm(path, n_labels=1.5)
