"""The Dataset record, its validation, and describe() on hand-worked examples."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from multilabel_core.datasets import DataFormatError, Dataset, NominalFeature, describe


def test_defaults_and_conversion():
    ds = Dataset([[1, 2], [3, 4]], [[1, 0, 1], [0, 0, 1]])
    assert ds.X.dtype == np.float64 and ds.X.flags.c_contiguous
    assert ds.Y.dtype == np.int8
    assert ds.feature_names == ("x0", "x1") and ds.label_names == ("y0", "y1", "y2")
    assert (ds.n_samples, ds.n_features, ds.n_labels) == (2, 2, 3)
    assert "n_samples=2" in repr(ds)


def test_sparse_input_becomes_canonical_csr_and_stays_sparse():
    X = sp.coo_matrix(([1.0, 0.0, 2.0], ([0, 1, 1], [1, 0, 1])), shape=(2, 3)).astype(np.float32)
    ds = Dataset(X, [[1], [0]])
    assert sp.isspmatrix_csr(ds.X) and ds.X.dtype == np.float64 and ds.X.nnz == 2
    assert ds.is_sparse


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"X": [[1.0]], "Y": [[2]]}, "binary"),
        ({"X": [[1.0], [2.0]], "Y": [[1]]}, "rows"),
        ({"X": [[np.nan]], "Y": [[1]]}, "NaN"),
        ({"X": [[1.0, 2.0]], "Y": [[1]], "feature_names": ["a"]}, "1 feature names for 2"),
        ({"X": [[1.0, 2.0]], "Y": [[1]], "feature_names": ["a", "a"]}, "'a' is used twice"),
        ({"X": [[1.0]], "Y": [[1, 0]], "label_names": ["a", 1]}, "must be strings"),
        ({"X": [[1.0]], "Y": [[1]], "nominal_features": [NominalFeature("c", ["p", "q"], [0, 1])]}, "beyond"),
    ],
)
def test_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Dataset(**kwargs)


def test_nominal_feature_validation():
    with pytest.raises(ValueError, match="needs 2 column"):
        NominalFeature("c", ["p", "q"], [0])
    with pytest.raises(ValueError, match="consecutive"):
        NominalFeature("c", ["p", "q"], [0, 2])
    with pytest.raises(ValueError, match="distinct values"):
        NominalFeature("c", ["p", "p"], [0, 1])
    assert NominalFeature("c", ["p", "q", "r"], [4], "ordinal").columns == (4,)


def test_describe_hand_example():
    Y = np.array([[1, 0, 0], [1, 1, 0], [1, 0, 0], [0, 0, 0]])
    stats = describe((np.zeros((4, 5)), Y))
    assert stats == {
        "n_samples": 4,
        "n_features": 5,
        "n_labels": 3,
        "label_cardinality": 1.0,
        "label_density": 1 / 3,
        "distinct_label_sets": 3,
        "proportion_distinct_label_sets": 0.75,
    }
    with pytest.raises(ValueError, match="Dataset or an"):
        describe(Y)


def test_data_format_error_parts():
    error = DataFormatError("f.arff", 3, "bad")
    assert str(error) == "f.arff, line 3: bad" and (error.path, error.line, error.reason) == ("f.arff", 3, "bad")
    assert str(DataFormatError("f.arff", None, "empty")) == "f.arff: empty"
