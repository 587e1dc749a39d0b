"""Comma-separated values: one header line naming the columns, then one example per line.

::

    f1,f2,label:sports,label:politics
    0.5,1.25,1,0
    -2,0,0,1

The header names every column; the label columns are chosen by one of (in this order):

- ``labels``: columns by 0-based position, inclusive range or name: ``"0-5"``, ``"10-"`` (column
  10 to the last), ``"3,7,9"``, ``"sports,politics"``, or a sequence of ints and names.  A token
  of ASCII digits is a position and ``A-B`` with A and B digits a range; anything else is a name.
  The label names are the column names as written.
- ``label_prefix``: the columns whose name starts with it (``"y_"``); the label names are the
  column names without it.
- neither: the columns whose name starts with :data:`LABEL_PREFIX` (``"label:"``), which is
  what :func:`write_csv` writes, so that a written file reads back without options.  When no
  column name starts with it the reader cannot tell labels from features and refuses the file,
  naming both options.

The other columns are the features, in file order.  Every value is an ASCII decimal number
(``1_0``, Unicode digits, ``nan`` and ``inf`` are refused, as in the other formats); a label
value is 0 or 1 (``1.0`` too).  Fields are separated by commas, with spaces and tabs allowed
around a value; any other whitespace is refused with its line and column.  Header names may be
quoted (``"a, b"``: RFC 4180 quoting, ``""`` for a quote inside); values may not.  Empty lines
are skipped; a leading byte-order mark and CRLF line ends are accepted, and ``NAME.csv.gz`` is
read gunzipped.  Missing values (an empty field) are refused: the methods have no rule for them.

The whole table is held dense (``n x columns`` float64, capped by ``max_bytes`` like every dense
array the readers build); ``sparse=True`` hands X back as CSR.
"""

from __future__ import annotations

import csv
import difflib
import io
import itertools
import numbers
import re
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from ..validation import check_scalar
from ._dataset import Dataset
from ._files import (
    MAX_BYTES_ENV,
    DataFormatError,
    byte_cap,
    check_blanks,
    check_dense_size,
    dataset_name,
    format_number,
    over_cap,
    read_text,
    size_text,
    write_lines,
)
from ._rows import cut, first_non_number_spelling, is_number, shown
from .storage import check_sparse, to_storage
from .libsvm import MAX_COLUMNS

__all__ = ["LABEL_PREFIX", "read_csv", "write_csv"]

#: The prefix that marks a label column when neither ``labels`` nor ``label_prefix`` is given.
LABEL_PREFIX = "label:"
# A column name held as a Python string costs about this much beside its characters: the
# header's names are an array built from the text, so they count against the cap too.
_NAME_BYTES = 64
_RANGE = re.compile(r"([0-9]+)-([0-9]*)")
_BLANKS = " \t"


def read_csv(
    path,
    labels=None,
    *,
    label_prefix: str | None = None,
    sparse="auto",
    max_columns: int = MAX_COLUMNS,
    max_bytes: int | None = None,
) -> Dataset:
    """Read a CSV file with a header line (see the module docstring for the format).

    Parameters
    ----------
    path : str or path-like
        The file; ``.gz`` is gunzipped.
    labels : str or sequence of int and str, optional
        The label columns: positions (0-based), inclusive ranges ``A-B`` / ``A-`` and names,
        e.g. ``"0-5"`` or ``["sports", "politics"]``.
    label_prefix : str, optional
        The label columns are those whose name starts with it; it is cut from their names.
    sparse : "auto", True or False
        X as held (dense: "auto" or False) or CSR (True).
    max_columns : int
        The widest header read (default :data:`~multilabel_core.datasets.MAX_COLUMNS`).
    max_bytes : int, optional
        The cap on the text and on each array built from it (:func:`~._files.byte_cap`).

    Returns
    -------
    Dataset
        Named after the file; ``feature_names`` and ``label_names`` from the header.

    Raises
    ------
    DataFormatError
        A malformed file, located at its line and column, or label columns that cannot be
        determined (no option given and no column named with :data:`LABEL_PREFIX`).
    ValueError
        Both ``labels`` and ``label_prefix`` given, or a bad argument.
    """
    if labels is not None and label_prefix is not None:
        raise ValueError("give labels= or label_prefix=, not both: each chooses the label columns on its own")
    if label_prefix is not None and (not isinstance(label_prefix, str) or not label_prefix):
        raise ValueError(f"label_prefix must be a non-empty string, got {label_prefix!r}")
    check_scalar(max_columns, "max_columns", kind=numbers.Integral, low=1)
    sparse = check_sparse(sparse)
    text = read_text(path, max_bytes)
    header_end = text.find("\n")
    header_line, body = (text, "") if header_end < 0 else (text[:header_end], text[header_end + 1:])
    del text
    names = _header(path, header_line, max_columns, max_bytes)
    try:  # the header is left out (a quoted name may hold any character)
        check_blanks(path, body, lambda line: [], "CSV")
    except DataFormatError as exc:
        raise DataFormatError(path, exc.line + 1, exc.reason) from None
    columns = label_columns(names, labels, label_prefix, path)
    label_set = set(columns)
    features = [j for j in range(len(names)) if j not in label_set]
    if not features:
        raise DataFormatError(path, 1, "every column is a label column; a dataset needs at least one feature column")
    values, linenos = _rows(path, body, names, max_bytes)
    _check_labels(path, values, linenos, columns, names)
    Y = values[:, columns].astype(np.int8)
    X = np.ascontiguousarray(values[:, features])
    del values
    cut_prefix = LABEL_PREFIX if labels is None and label_prefix is None else label_prefix
    label_names = [names[j][len(cut_prefix):] if cut_prefix else names[j] for j in columns]
    return Dataset(
        to_storage(X, sparse, path=path, max_bytes=max_bytes), Y, tuple(names[j] for j in features),
        tuple(label_names), dataset_name(path),
    )


def _header(path, line: str, max_columns: int, max_bytes) -> list[str]:
    """The column names of the header line; DataFormatError (line 1) for a missing or bad header."""
    if not line.strip(_BLANKS):
        raise DataFormatError(path, 1, "is empty where the header belongs: a CSV file starts with a line naming its columns")
    count = line.count(",") + 1  # an upper bound (a quoted name may hold commas): checked before splitting
    if count > max_columns and line.count('"') == 0:
        raise DataFormatError(path, 1, f"the header has {count} columns, beyond the limit of {max_columns} (max_columns)")
    cap = byte_cap(max_bytes)
    if count * _NAME_BYTES > cap:
        raise DataFormatError(
            path, 1, f"the header's {count} column names would take about {size_text(count * _NAME_BYTES)} in memory, "
            f"{over_cap(cap)}"
        )
    try:
        rows = list(csv.reader(io.StringIO(line), strict=True))
    except csv.Error as exc:
        raise DataFormatError(path, 1, f"the header is not valid CSV: {exc}") from None
    names = [name.strip(_BLANKS) for name in rows[0]] if rows else []
    if len(names) > max_columns:
        raise DataFormatError(path, 1, f"the header has {len(names)} columns, beyond the limit of {max_columns} (max_columns)")
    for k, name in enumerate(names):
        if not name:
            raise DataFormatError(path, 1, f"column {k + 1} of the header has no name; every column needs one")
    if all(is_number(name) for name in names):
        raise DataFormatError(
            path, 1, f"the first line holds only numbers ({cut(line, 40)}); a CSV file here starts with a header "
            "line naming its columns"
        )
    seen = {}
    for k, name in enumerate(names):
        if name in seen:
            raise DataFormatError(path, 1, f"column name {shown(name)} is used twice (columns {seen[name] + 1} and {k + 1})")
        seen[name] = k
    return names


def label_columns(names: Sequence[str], labels=None, label_prefix: str | None = None, path="CSV") -> list[int]:
    """The positions of the label columns among the header ``names`` (module docstring).

    Raises
    ------
    DataFormatError
        (At line 1 of ``path``.) A position, range or name that is not among the columns, a
        column chosen twice, or no label column found.
    """
    if labels is None:
        prefix = LABEL_PREFIX if label_prefix is None else label_prefix
        chosen = [j for j, name in enumerate(names) if name.startswith(prefix)]
        if not chosen:
            shown_names = ", ".join(repr(cut(name, 20)) for name in names[:6]) + (", ..." if len(names) > 6 else "")
            if label_prefix is None:
                raise DataFormatError(
                    path, 1, f"cannot tell which columns are labels: no column name starts with {LABEL_PREFIX!r} (the "
                    f"default rule; columns: {shown_names}); choose them with labels= (mlcore: --labels 0-5 or "
                    "--labels NAME1,NAME2) or label_prefix= (mlcore: --label-prefix y_)"
                )
            raise DataFormatError(path, 1, f"no column name starts with the label prefix {prefix!r} (columns: {shown_names})")
        empty = next((names[j] for j in chosen if names[j] == prefix), None)
        if empty is not None:
            raise DataFormatError(path, 1, f"column {shown(empty)} is the label prefix alone: its label has no name")
        return chosen
    tokens = _label_tokens(labels)
    chosen: list[int] = []
    where = {name: j for j, name in enumerate(names)}
    for token in tokens:
        chosen.extend(_resolve(token, names, where, path))
    seen = set()
    for j in chosen:
        if j in seen:
            raise DataFormatError(path, 1, f"labels= chooses column {j} ({shown(names[j])}) twice")
        seen.add(j)
    return chosen


def _label_tokens(labels) -> list:
    if isinstance(labels, str):
        tokens = [token.strip(_BLANKS) for token in labels.split(",")]
        if not all(tokens):
            raise ValueError(f"labels={labels!r} has an empty entry; separate positions, ranges and names by single commas")
        return tokens
    if isinstance(labels, Sequence):
        tokens = list(labels)
        for token in tokens:
            if isinstance(token, bool) or not isinstance(token, (numbers.Integral, str)):
                raise ValueError(f"labels must hold column positions (int) and names (str), got {token!r}")
        if not tokens:
            raise ValueError("labels= is empty; name at least one label column")
        return tokens
    raise ValueError(f"labels must be a string such as '0-5' or a sequence of positions and names, got {labels!r}")


def _resolve(token, names: Sequence[str], where: dict, path) -> list[int]:
    width = len(names)
    if isinstance(token, numbers.Integral) or (token.isascii() and token.isdigit()):
        j = int(token)
        if not 0 <= j < width:
            raise DataFormatError(path, 1, f"label column {j} is out of range: the header has {width} columns (0..{width - 1})")
        return [j]
    match = _RANGE.fullmatch(token) if token.isascii() else None
    if match is not None and token not in where:
        low = int(match[1])
        high = int(match[2]) if match[2] else width - 1
        if not low <= high < width:
            raise DataFormatError(
                path, 1, f"label columns {token!r} are out of range: the header has {width} columns (0..{width - 1})"
            )
        return list(range(low, high + 1))
    if token in where:
        return [where[token]]
    close = difflib.get_close_matches(token, list(where), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
    raise DataFormatError(path, 1, f"label column {shown(token)} is not a column of the header{hint}")


def _rows(path, body: str, names: list[str], max_bytes) -> tuple[np.ndarray, np.ndarray]:
    """Every data line's values as one (n, columns) float64 array, and each row's line number."""
    lines = body.split("\n")
    keep = [k for k, line in enumerate(lines) if line.strip(_BLANKS)]
    if not keep:
        raise DataFormatError(path, None, "holds a header and no examples")
    width = len(names)
    check_dense_size(path, (len(keep), width), 8, "the table of values (float64)", max_bytes)
    values = np.empty((len(keep), width), dtype=np.float64)
    linenos = np.asarray(keep, dtype=np.int64) + 2  # the header is line 1
    for row, k in enumerate(keep):
        line, lineno = lines[k], k + 2
        lines[k] = ""  # the text of a line is dropped once its values are held
        if '"' in line:
            raise DataFormatError(path, lineno, "holds a quote: values are plain numbers (only header names may be quoted)")
        tokens = line.split(",")
        if len(tokens) != width:
            more = " (a trailing comma?)" if len(tokens) == width + 1 and not tokens[-1].strip(_BLANKS) else ""
            raise DataFormatError(path, lineno, f"expected {width} values (the header's columns), found {len(tokens)}{more}")
        parsed = None
        if (line.isascii() and "_" not in line) or first_non_number_spelling(tokens) is None:
            try:
                parsed = np.array(tokens, dtype=np.float64)
            except ValueError:
                parsed = None
        if parsed is None:
            j = next(j for j, token in enumerate(tokens) if not is_number(token.strip(_BLANKS)))
            token = tokens[j].strip(_BLANKS)
            what = "is empty (missing values are not supported)" if not token else f"{shown(token)} is not a number"
            raise DataFormatError(path, lineno, f"column {j + 1} ({shown(names[j])}): {what}")
        bad = ~np.isfinite(parsed)
        if bad.any():
            j = int(np.argmax(bad))
            raise DataFormatError(path, lineno, f"column {j + 1} ({shown(names[j])}): {shown(tokens[j].strip(_BLANKS))} is not finite")
        values[row] = parsed
    return values, linenos


def _check_labels(path, values: np.ndarray, linenos: np.ndarray, columns: list[int], names: list[str]) -> None:
    block = values[:, columns]
    bad = (block != 0) & (block != 1)
    if bad.any():
        row, k = np.argwhere(bad)[0]
        j = columns[k]
        raise DataFormatError(
            path, int(linenos[row]), f"column {j + 1} ({shown(names[j])}) is a label column and holds "
            f"{format_number(float(block[row, k]))}; labels must be 0 or 1"
        )


def write_csv(dataset: Dataset, path, *, label_prefix: str = LABEL_PREFIX) -> None:
    """Write ``dataset`` as CSV: a header of the feature names then the label names, each label
    name after ``label_prefix``; then one line per example, the values with ``repr`` precision.

    Parameters
    ----------
    dataset : Dataset
        Written densely (a sparse X row by row, every zero written).
    path : str or path-like
        The file; a name ending in ``.gz`` is gzipped.
    label_prefix : str
        Marks the label columns (default :data:`LABEL_PREFIX`, which :func:`read_csv` looks
        for when given no option).

    Raises
    ------
    ValueError
        A name that would not read back as itself: empty, with blanks at either end or a line
        break inside, or a feature name starting with ``label_prefix`` (it would read back as a
        label); or a table whose text would pass the readers' cap (:func:`~._files.byte_cap`)
        at two bytes a cell, which no reader under that cap could read back (a sparse X of
        many columns: write ``.npz`` or LibSVM instead).
    """
    if not isinstance(label_prefix, str) or not label_prefix:
        raise ValueError(f"label_prefix must be a non-empty string, got {label_prefix!r}")
    cells = dataset.n_samples * (dataset.n_features + dataset.n_labels)
    cap = byte_cap()
    if 2 * cells > cap:
        raise ValueError(
            f"a CSV of {dataset.n_samples} rows x {dataset.n_features + dataset.n_labels} columns holds at least "
            f"{size_text(2 * cells)} of text (two bytes a cell), over the readers' cap of {size_text(cap)}: it could "
            f"not be read back; write .npz or LibSVM (which store a sparse X's values only), or set "
            f"${MAX_BYTES_ENV} to allow more"
        )
    features, labels = list(dataset.feature_names), list(dataset.label_names)
    for kind, name in [("feature", name) for name in features] + [("label", name) for name in labels]:
        if not name or name != name.strip(_BLANKS) or "\n" in name or "\r" in name:
            raise ValueError(
                f"{kind} name {name!r} cannot be written to CSV: names must be non-empty, without spaces or tabs at "
                "either end and without line breaks (rename it in the Dataset)"
            )
        if kind == "feature" and name.startswith(label_prefix):
            raise ValueError(
                f"feature name {name!r} starts with the label prefix {label_prefix!r} and would read back as a label; "
                "pass another label_prefix= or rename the feature"
            )
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(features + [label_prefix + name for name in labels])
    header = buffer.getvalue()
    X, Y = dataset.X, dataset.Y
    sparse_X = sp.issparse(X)
    if sparse_X:
        X = sp.csr_matrix(X)

    def line(i: int) -> str:
        row = X[i].toarray()[0] if sparse_X else X[i]
        return ",".join([format_number(v) for v in row.tolist()] + [str(int(v)) for v in Y[i]])

    write_lines(path, itertools.chain([header], map(line, range(dataset.n_samples))))
