"""Dataset statistics of MLRL Table I (Zhang & Yeung, after Read et al. 2009).

For a dataset D of n examples with label sets Y_i over L labels:

- ``n_samples`` = |D|, ``n_features`` = dim(D), ``n_labels`` = L(D);
- ``label_cardinality`` LCard(D) = (1/n) sum_i |Y_i|, the mean number of relevant labels;
- ``label_density`` LDen(D) = LCard(D) / L(D);
- ``distinct_label_sets`` DLS(D) = |{Y_i}|, the number of distinct label combinations;
- ``proportion_distinct_label_sets`` PDLS(D) = DLS(D) / |D|.
"""

from __future__ import annotations

import numpy as np

from ..validation import check_X, check_Y
from ._dataset import Dataset

__all__ = ["describe"]


def describe(data) -> dict:
    """The MLRL Table I statistics of a :class:`Dataset` or an ``(X, Y)`` pair.

    >>> describe((np.zeros((4, 2)), [[1, 0], [1, 1], [0, 1], [1, 0]]))["distinct_label_sets"]
    3
    """
    if isinstance(data, Dataset):
        X, Y = data.X, data.Y
    else:
        try:
            X, Y = data
        except (TypeError, ValueError):
            raise ValueError("describe expects a Dataset or an (X, Y) pair") from None
        X = check_X(X)
        Y = check_Y(Y, n_samples=X.shape[0])
    n, n_labels = Y.shape
    cardinality = float(Y.sum()) / n
    # Rows packed to bytes make each label set one hashable row for np.unique.
    distinct = int(np.unique(np.packbits(Y.astype(bool), axis=1), axis=0).shape[0])
    return {
        "n_samples": n,
        "n_features": int(X.shape[1]),
        "n_labels": n_labels,
        "label_cardinality": cardinality,
        "label_density": cardinality / n_labels,
        "distinct_label_sets": distinct,
        "proportion_distinct_label_sets": distinct / n,
    }
