"""The LibSVM multi-label format: reader and writer.

One example per line::

    0,3 1:0.5 7:1.25      labels 0 and 3; features 1 and 7 (1-based), the others 0
     2:1                  a line starting with a blank: no relevant label
    4 1:2 # a comment     everything after '#' is ignored

Labels are 0-based indices, separated by single commas without blanks (no leading,
trailing or doubled comma) and each listed once; features are ``index:value`` pairs
with strictly increasing indices, 1-based by default (``zero_based=True`` for files
counting from 0).  Fields are separated by spaces and tabs, and by nothing else: a
no-break space, a vertical tab, a form feed or any other whitespace character outside a
comment is an error naming its line (:func:`~._files.check_blanks`).  Empty lines (and
lines holding only a comment) are skipped.  A label listed twice on one line is refused
rather than read once: a writer that repeats a label has lost track of the example, and
reading it once would hide that.  The reader builds a CSR ``X``; ``sparse="auto"``
(default) densifies it when more than :data:`~.storage.DENSE_ABOVE` of its entries
are stored, True keeps it CSR, False always densifies.  Names are not
stored in the format: labels are named "0".."L-1" and features "x1".."xd" (the file's
indices; "x0".. for a zero-based file).

The writer writes every nonzero value with ``repr`` precision; an example with no
label and no nonzero feature is written as `` 1:0`` (one explicit zero), since a
blank line would be skipped on reading.
"""

from __future__ import annotations

import numbers
import os

import numpy as np
import scipy.sparse as sp

from ..validation import check_scalar
from ._dataset import Dataset, IndexNames
from ._files import (
    MAX_BYTES_ENV,
    DataFormatError,
    check_blanks,
    check_dense_size,
    dataset_name,
    format_number,
    read_text,
    size_text,
    write_lines,
)
from ._rows import Entries, as_indices, as_numbers, cut, first_not_digits, row_starts, shown
from .storage import check_sparse, to_storage

__all__ = ["DENSE_Y_FLOOR", "DENSE_Y_PER_STORED", "MAX_COLUMNS", "read_libsvm", "write_libsvm"]

# The widest file read without asking: 2**24 = 16,777,216 features and as many labels, far
# above the text benchmarks (bibtex 1836 features and 159 labels, rcv1 47,236 features) and
# the extreme-classification sets (Amazon-3M: 337,067 features, 2,812,281 labels).  A width
# costs nothing by itself (CSR X, generated names), but Y is dense: n x L bytes, capped by
# max_bytes.
MAX_COLUMNS = 2**24
#: Under the default cap, a dense Y of more than DENSE_Y_FLOOR bytes (32 MiB) is refused when it
#: holds more than DENSE_Y_PER_STORED cells per stored value (a relevant label, or a row): ten
#: lines ``16777215 1:1`` (130 bytes) would hold a 160 MiB Y, and every check and copy of it
#: another.  The benchmarks are far inside: eurlex (19,348 x 3,993, 5.3 labels a row) holds 75
#: cells per stored value, delicious (16,105 x 983) 50, Amazon-3M's Y is over the byte cap anyway.
#: A cap set by the caller (``max_bytes=`` or ``$MULTILABEL_CORE_MAX_BYTES``) replaces this rule.
DENSE_Y_FLOOR = 2**25
DENSE_Y_PER_STORED = 4096


def read_libsvm(
    path,
    n_features: int | None = None,
    n_labels: int | None = None,
    *,
    zero_based: bool = False,
    sparse="auto",
    max_columns: int = MAX_COLUMNS,
    max_bytes: int | None = None,
) -> Dataset:
    """Read a LibSVM multi-label file.

    Under the default cap a Y whose declared width leaves it mostly empty is refused too
    (:data:`DENSE_Y_FLOOR`, :data:`DENSE_Y_PER_STORED`): Y is held dense, so a few bytes naming
    label 16777215 on ten lines would cost 160 MiB.

    Parameters
    ----------
    path : str or path-like
        The file (optionally ``.gz``).
    n_features : int or None, default=None
        The width d of X; None: one more than the largest feature index seen.  Pass it when the
        last features may be absent from the file (a larger index in the file is then an error).
    n_labels : int or None, default=None
        The number of labels L; None: one more than the largest label seen.  Likewise.
    zero_based : bool, default=False
        Whether feature indices start at 0 (else at 1, LibSVM's convention).
    sparse : {"auto", True, False}, default="auto"
        Whether X comes back CSR or dense (module docstring).
    max_columns : int, default=MAX_COLUMNS
        Without ``n_features`` / ``n_labels``, the widest file accepted, in features or labels
        (:data:`MAX_COLUMNS`).
    max_bytes : int or None, default=None
        Caps the file's text and each dense array built from it (Y, a densified X): see
        :func:`~._files.byte_cap`.

    Returns
    -------
    Dataset
        The file's data, with generated feature and label names.

    Raises
    ------
    DataFormatError
        For a malformed line, naming the file and the line, or an index beyond a given width.
    """
    for value, name in ((n_features, "n_features"), (n_labels, "n_labels"), (max_columns, "max_columns")):
        if value is not None:
            check_scalar(value, name, kind=numbers.Integral, low=1)
    sparse = check_sparse(sparse)
    offset = 0 if zero_based else 1
    rows, label_tokens, label_counts, index_tokens, value_tokens, feature_counts = [], [], [], [], [], []
    text = read_text(path, max_bytes)
    check_blanks(path, text, _comment, "the LibSVM format")
    for lineno, line in enumerate(text.split("\n"), start=1):
        if "#" in line:
            line = line[: line.index("#")]
        if not line.strip():
            continue
        labels, features = _split_line(line)
        if not all(labels):
            raise DataFormatError(
                path, lineno, f"the label list {shown(','.join(labels))} has an empty label: labels are separated by "
                "single commas, with no comma before the first or after the last"
            )
        parts = features.replace(":", " ").split()
        n_pairs = len(features.split())
        if len(parts) != 2 * n_pairs or features.count(":") != n_pairs:
            raise DataFormatError(path, lineno, "features must be 'index:value' pairs separated by blanks")
        rows.append(lineno)
        label_tokens.extend(labels)
        label_counts.append(len(labels))
        index_tokens.extend(parts[0::2])
        value_tokens.extend(parts[1::2])
        feature_counts.append(n_pairs)
    if not rows:
        raise DataFormatError(path, None, "holds no examples")
    linenos = np.array(rows)
    label_entries = Entries(path, row_starts(label_counts), linenos)
    feature_entries = Entries(path, row_starts(feature_counts), linenos)
    Y = _label_matrix(label_tokens, n_labels, max_columns, label_entries, max_bytes)
    X = _feature_matrix(index_tokens, value_tokens, n_features, max_columns, offset, feature_entries)
    return Dataset(
        to_storage(X, sparse, path=path, max_bytes=max_bytes), Y, IndexNames("x", offset, X.shape[1]),
        IndexNames("", 0, Y.shape[1]), dataset_name(path)
    )


def _comment(line: str) -> list[tuple[int, int]]:
    """The column range of a line's comment (from '#' to the end), where any character may stand."""
    start = line.find("#")
    return [] if start < 0 else [(start, len(line))]


def _split_line(line: str) -> tuple[list[str], str]:
    """(label tokens, empty ones kept; feature text); a leading blank or a first token with ':' means no labels."""
    if line[0].isspace():
        return [], line
    first, *rest = line.split(None, 1)
    if ":" in first:
        return [], line
    return first.split(","), rest[0] if rest else ""


def _beyond(limit_given: int | None, max_columns: int, kind: str) -> tuple[int, str]:
    """The number of columns allowed, and why, for the error message."""
    if limit_given is not None:
        return limit_given, f"is out of range for n_{kind}s={limit_given}"
    return max_columns, (
        f"is beyond the limit of {max_columns} {kind}s (max_columns; pass n_{kind}s= or max_columns= to read "
        "a wider file)"
    )


def _label_matrix(tokens: list[str], n_labels, max_columns: int, entries: Entries, max_bytes) -> np.ndarray:
    bad = first_not_digits(tokens)
    if bad is not None:
        raise entries.error(bad, f"labels must be non-negative integers separated by ',', got {shown(tokens[bad])}")
    limit, beyond = _beyond(n_labels, max_columns, "label")
    labels, big = as_indices(tokens, limit)
    if big is not None:
        raise entries.error(big, f"label {cut(tokens[big])} {beyond}")
    repeated = _first_repeated(labels, entries.starts)
    if repeated is not None:
        raise entries.error(repeated, f"label {labels[repeated]} is listed twice; an example lists each label once")
    size = int(labels.max()) + 1 if labels.size else 0
    if n_labels is not None:
        size = n_labels
    if size == 0:
        raise DataFormatError(entries.path, None, "no example has a label; pass n_labels")
    n = entries.linenos.size
    try:
        check_dense_size(entries.path, (n, size), 1, "the label matrix Y (int8)", max_bytes)
        _check_label_density(entries.path, n, size, labels.size, max_bytes)
    except DataFormatError as exc:
        if n_labels is not None:
            raise
        widest = int(np.argmax(labels))
        raise entries.error(widest, f"label {labels[widest]} sets the width: {exc.reason}") from None
    Y = np.zeros((n, size), dtype=np.int8)
    Y[np.repeat(np.arange(n), np.diff(entries.starts)), labels] = 1
    return Y


def _check_label_density(path, n: int, n_labels: int, n_relevant: int, max_bytes) -> None:
    """DataFormatError when a dense (n, n_labels) Y would be mostly declared width (:data:`DENSE_Y_FLOOR`).

    Only under the default cap: a ``max_bytes`` given here or in the environment is the caller's
    own bound on the dense arrays, and :func:`~._files.check_dense_size` holds it.
    """
    if max_bytes is not None or os.environ.get(MAX_BYTES_ENV, "").strip():
        return
    cells, stored = n * n_labels, n_relevant + n
    if cells <= DENSE_Y_FLOOR or cells <= DENSE_Y_PER_STORED * stored:
        return
    raise DataFormatError(
        path, None, f"the label matrix Y (int8) would take {n} x {n_labels} = {size_text(cells)} dense for "
        f"{n_relevant} relevant label(s): over {size_text(DENSE_Y_FLOOR)} and more than {DENSE_Y_PER_STORED} "
        f"cells per stored value; pass max_bytes= or set ${MAX_BYTES_ENV} to read it dense anyway"
    )


def _first_repeated(labels: np.ndarray, starts: np.ndarray) -> int | None:
    """The flat position of the first label (in file order) that its row has listed before, or None."""
    if labels.size < 2:
        return None
    rows = np.repeat(np.arange(starts.size - 1), np.diff(starts))
    order = np.lexsort((labels, rows))  # by row, then label; stable, so a repeat comes after its first listing
    same = (np.diff(labels[order]) == 0) & (np.diff(rows[order]) == 0)
    return int(order[1:][same].min()) if same.any() else None


def _feature_matrix(index_tokens, value_tokens, n_features, max_columns: int, offset: int, entries: Entries):
    bad = first_not_digits(index_tokens)
    if bad is not None:
        raise entries.error(bad, f"feature index {shown(index_tokens[bad])} is not a non-negative integer")
    limit, beyond = _beyond(n_features, max_columns, "feature")
    indices, big = as_indices(index_tokens, limit + offset)
    if big is not None:
        raise entries.error(big, f"feature index {cut(index_tokens[big])} {beyond}")
    indices -= offset
    values, k = as_numbers(value_tokens)
    if values is None:
        raise entries.error(k, f"feature entry {cut(index_tokens[k] + ':' + value_tokens[k])} is not index:number")
    checks = [
        (indices < 0, lambda k: f"feature index {index_tokens[k]} is below {offset} (zero_based={not offset})"),
        (~np.isfinite(values), lambda k: f"feature value {shown(value_tokens[k])} is not finite"),
    ]
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
    """Write ``dataset`` in the LibSVM multi-label format (see the module docstring).

    Parameters
    ----------
    dataset : Dataset
        The data to write; X's zeros are left out.
    path : str or path-like
        The file (gzipped when it ends in ``.gz``).
    zero_based : bool, default=False
        Whether feature indices start at 0 (else at 1).
    """
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
