"""The LibSVM multi-label format: reader and writer.

One example per line::

    0,3 1:0.5 7:1.25      labels 0 and 3; features 1 and 7 (1-based), the others 0
     2:1                  a line starting with a blank: no relevant label
    4 1:2 # a comment     everything after '#' is ignored

Labels are 0-based indices, separated by commas without blanks; features are
``index:value`` pairs with strictly increasing indices, 1-based by default
(``zero_based=True`` for files counting from 0).  Empty lines (and lines holding
only a comment) are skipped.  The reader builds a CSR ``X``; ``sparse="auto"``
(default) densifies it when more than :data:`~._storage.DENSE_ABOVE` of its entries
are stored, True keeps it CSR, False always densifies.  Names are not
stored in the format: labels are named "0".."L-1" and features "x1".."xd" (the file's
indices; "x0".. for a zero-based file).

The writer writes every nonzero value with ``repr`` precision; an example with no
label and no nonzero feature is written as `` 1:0`` (one explicit zero), since a
blank line would be skipped on reading.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from ..validation import check_scalar
from ._dataset import Dataset
from ._files import DataFormatError, dataset_name, format_number, read_text, write_lines
from ._rows import Entries, is_number, row_starts
from ._storage import check_sparse, to_storage

__all__ = ["read_libsvm", "write_libsvm"]


def read_libsvm(
    path, n_features: int | None = None, n_labels: int | None = None, *, zero_based: bool = False, sparse="auto"
) -> Dataset:
    """Read a LibSVM multi-label file.

    ``n_features`` / ``n_labels`` default to one more than the largest index seen; pass
    them when the last features or labels may be absent from the file (a larger index
    in the file is then an error).  ``sparse``: "auto", True or False (module docstring).
    """
    for value, name in ((n_features, "n_features"), (n_labels, "n_labels")):
        if value is not None:
            check_scalar(value, name, kind=numbers.Integral, low=1)
    sparse = check_sparse(sparse)
    offset = 0 if zero_based else 1
    rows, label_tokens, label_counts, index_tokens, value_tokens, feature_counts = [], [], [], [], [], []
    for lineno, line in enumerate(read_text(path).split("\n"), start=1):
        if "#" in line:
            line = line[: line.index("#")]
        if not line.strip():
            continue
        labels, features = _split_line(line)
        if labels and not all(token.isdigit() for token in labels):
            got = ",".join(labels)
            raise DataFormatError(path, lineno, f"labels must be non-negative integers separated by ',', got {got!r}")
        parts = features.replace(":", " ").split()
        if len(parts) != 2 * len(features.split()):
            raise DataFormatError(path, lineno, "features must be 'index:value' pairs separated by blanks")
        rows.append(lineno)
        label_tokens.extend(labels)
        label_counts.append(len(labels))
        index_tokens.extend(parts[0::2])
        value_tokens.extend(parts[1::2])
        feature_counts.append(len(parts) // 2)
    if not rows:
        raise DataFormatError(path, None, "holds no examples")
    linenos = np.array(rows)
    label_entries = Entries(path, row_starts(label_counts), linenos)
    feature_entries = Entries(path, row_starts(feature_counts), linenos)
    Y = _label_matrix(label_tokens, n_labels, label_entries)
    X = _feature_matrix(index_tokens, value_tokens, n_features, offset, feature_entries)
    feature_names = tuple(f"x{j + offset}" for j in range(X.shape[1]))
    label_names = tuple(str(j) for j in range(Y.shape[1]))
    return Dataset(to_storage(X, sparse), Y, feature_names, label_names, dataset_name(path))


def _split_line(line: str) -> tuple[list[str], str]:
    """(label tokens, feature text); a leading blank or a first token with ':' means no labels."""
    if line[0].isspace():
        return [], line
    first, *rest = line.split(None, 1)
    if ":" in first:
        return [], line
    return [token for token in first.split(",") if token], rest[0] if rest else ""


def _label_matrix(tokens: list[str], n_labels: int | None, entries: Entries) -> np.ndarray:
    labels = np.array(tokens, dtype=np.int64)
    size = int(labels.max()) + 1 if labels.size else 0
    if n_labels is not None:
        if size > n_labels:
            k = int(np.argmax(labels >= n_labels))
            raise entries.error(k, f"label {labels[k]} is out of range for n_labels={n_labels}")
        size = n_labels
    if size == 0:
        raise DataFormatError(entries.path, None, "no example has a label; pass n_labels")
    n = entries.linenos.size
    Y = np.zeros((n, size), dtype=np.int8)
    Y[np.repeat(np.arange(n), np.diff(entries.starts)), labels] = 1
    return Y


def _feature_matrix(index_tokens, value_tokens, n_features, offset: int, entries: Entries) -> sp.csr_matrix:
    try:
        indices = np.array(index_tokens, dtype=np.int64) - offset
        values = np.array(value_tokens, dtype=np.float64)
    except ValueError:
        k = next(k for k, (i, v) in enumerate(zip(index_tokens, value_tokens)) if not (i.isdigit() and is_number(v)))
        raise entries.error(k, f"feature entry {index_tokens[k]}:{value_tokens[k]} is not index:number") from None
    checks = [
        (indices < 0, lambda k: f"feature index {index_tokens[k]} is below {offset} (zero_based={not offset})"),
        (~np.isfinite(values), lambda k: f"feature value {value_tokens[k]!r} is not finite"),
    ]
    if n_features is not None:
        beyond = f"is out of range for n_features={n_features}"
        checks.append((indices >= n_features, lambda k: f"feature index {index_tokens[k]} {beyond}"))
    for bad, reason in checks:
        if bad.any():
            k = int(np.argmax(bad))
            raise entries.error(k, reason(k))
    unordered = entries.first_unordered(indices)
    if unordered is not None:
        raise entries.error(unordered, "feature indices must be strictly increasing")
    width = n_features if n_features is not None else (int(indices.max()) + 1 if indices.size else 0)
    if width == 0:
        raise DataFormatError(entries.path, None, "no example has a feature; pass n_features")
    X = sp.csr_matrix((values, indices, entries.starts), shape=(entries.linenos.size, width))
    X.eliminate_zeros()
    return X


def write_libsvm(dataset: Dataset, path, *, zero_based: bool = False) -> None:
    """Write ``dataset`` in the LibSVM multi-label format (see the module docstring)."""
    offset = 0 if zero_based else 1
    X = sp.csr_matrix(dataset.X)
    X.sum_duplicates()
    X.eliminate_zeros()
    label_rows = [",".join(map(str, np.flatnonzero(row))) for row in dataset.Y]
    bounds = X.indptr.tolist()
    entries = [f"{j + offset}:{format_number(v)}" for j, v in zip(X.indices.tolist(), X.data.tolist())]

    def line(i: int) -> str:
        features = " ".join(entries[bounds[i]:bounds[i + 1]])
        if not label_rows[i] and not features:
            features = f"{offset}:0"
        return f"{label_rows[i]} {features}".rstrip()

    write_lines(path, (line(i) for i in range(dataset.n_samples)))
