"""The in-memory multi-label dataset every reader returns and every writer takes."""

from __future__ import annotations

import operator
from collections.abc import Sequence

import attrs
import numpy as np
import scipy.sparse as sp

from ..validation import check_X, check_Y

ENCODINGS = ("onehot", "ordinal")
# "binary" is not a choice of the readers' ``nominal`` argument: a nominal attribute
# with values 0 and 1 is always read as one 0/1 column, whatever that argument says.
FEATURE_ENCODINGS = ENCODINGS + ("binary",)


def _as_features(X):
    """Dense -> C-contiguous float64 array; sparse -> canonical float64 CSR (never densified)."""
    X = check_X(X)
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sum_duplicates()
        X.eliminate_zeros()
        return X
    return np.ascontiguousarray(X, dtype=np.float64)


class IndexNames(Sequence):
    """Generate the names ``PREFIX{start}``, ``PREFIX{start + 1}``, ... (``count`` of them), each when asked for.

    A LibSVM file declares its width by its largest index alone: ``0 16777216:1`` is a
    16,777,216-column dataset in 13 bytes.  Generated names cost nothing per column; a
    tuple of them would cost some 60 bytes each (1 GB for that line).  Compares equal to
    any sequence of the same strings (a tuple included); slicing gives a tuple.

    Parameters
    ----------
    prefix : str
        The text before each number (``"x"``, ``"y"``).
    start : int
        The number of the first name.
    count : int
        How many names, at least 0.

    Raises
    ------
    ValueError
        If ``count`` is negative.
    """

    __slots__ = ("prefix", "start", "length")

    def __init__(self, prefix: str, start: int, count: int):
        self.prefix, self.start, self.length = str(prefix), int(start), int(count)
        if self.length < 0:
            raise ValueError(f"count must be >= 0, got {count}")

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, item):
        if isinstance(item, slice):
            return tuple(self[j] for j in range(*item.indices(self.length)))
        j = operator.index(item)
        if j < 0:
            j += self.length
        if not 0 <= j < self.length:
            raise IndexError("name index out of range")
        return f"{self.prefix}{self.start + j}"

    def __iter__(self):
        return (f"{self.prefix}{self.start + j}" for j in range(self.length))

    def _position(self, name) -> int | None:
        if not isinstance(name, str) or not name.startswith(self.prefix):
            return None
        digits = name[len(self.prefix):]
        # Only the canonical spelling: no sign, no leading zero, ASCII digits.
        if not (digits.isascii() and digits.isdigit()) or (len(digits) > 1 and digits[0] == "0"):
            return None
        j = int(digits) - self.start
        return j if 0 <= j < self.length else None

    def __contains__(self, name) -> bool:
        return self._position(name) is not None

    def index(self, name, start=0, stop=None):
        """Return the position of ``name`` among the names.

        Parameters
        ----------
        name : str
            A name in its canonical spelling (``PREFIX`` then the number, no sign or leading zero).
        start : int, default=0
            Search from this position on.
        stop : int or None, default=None
            Search up to (not including) this position; None: to the end.

        Returns
        -------
        int
            The position j with ``self[j] == name``.

        Raises
        ------
        ValueError
            If ``name`` is not among the names in ``[start, stop)``.
        """
        j = self._position(name)
        if j is None or j not in range(self.length)[start:stop]:
            raise ValueError(f"{name!r} is not in the names")
        return j

    def count(self, name) -> int:
        """Count the occurrences of ``name`` (the names are distinct, so 0 or 1).

        Parameters
        ----------
        name : object
            The value looked for.

        Returns
        -------
        int
            1 if ``name`` is one of the names, else 0.
        """
        return int(self._position(name) is not None)

    def __eq__(self, other):
        if isinstance(other, IndexNames) and (self.prefix, self.start, self.length) == (
            other.prefix, other.start, other.length
        ):
            return True
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(other) == self.length and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self):
        return hash(tuple(self))

    def __reduce__(self):
        return IndexNames, (self.prefix, self.start, self.length)

    def __repr__(self) -> str:
        if self.length <= 4:
            return repr(tuple(self))
        return f"IndexNames({self.prefix!r}, {self.start}, {self.length}: {self[0]!r}..{self[-1]!r})"


def _names(values) -> Sequence:
    if isinstance(values, IndexNames):
        return values
    names = tuple(values)
    if not all(isinstance(name, str) for name in names):
        raise ValueError(f"names must be strings, got {names!r}")
    return names


def _default_names(prefix: str, count: int) -> IndexNames:
    return IndexNames(prefix, 0, count)


@attrs.frozen
class NominalFeature:
    """Describe a nominal (categorical) attribute of the source file and the columns of ``X`` holding it.

    Parameters
    ----------
    name : str
        The attribute's name in the source file.
    values : sequence of str
        Its declared values, in order.
    columns : sequence of int
        The columns of ``X`` that hold it.
    encoding : {"onehot", "ordinal", "binary"}, default="onehot"
        ``"onehot"``: one column per value, in the declared order, named ``name=value``; a row
        holds 1.0 in the column of its value and 0.0 elsewhere.  ``"ordinal"``: one column named
        ``name`` holding the value's position (0.0 for the first declared value, 1.0 for the
        second, ...).  ``"binary"``: values ``("0", "1")`` or ``("1", "0")``; one column named
        ``name`` holding the value itself as a number (0.0 or 1.0), whatever the order.
    """

    name: str = attrs.field(validator=attrs.validators.instance_of(str))
    values: tuple[str, ...] = attrs.field(converter=_names)
    columns: tuple[int, ...] = attrs.field(converter=lambda cols: tuple(int(c) for c in cols))
    encoding: str = attrs.field(default="onehot", validator=attrs.validators.in_(FEATURE_ENCODINGS))

    def __attrs_post_init__(self):
        if not self.values or len(set(self.values)) != len(self.values):
            raise ValueError(f"nominal feature {self.name!r} needs distinct values, got {self.values!r}")
        if self.encoding == "binary" and set(self.values) != {"0", "1"}:
            raise ValueError(f"binary nominal feature {self.name!r} needs the values '0' and '1', got {self.values!r}")
        width = len(self.values) if self.encoding == "onehot" else 1
        if len(self.columns) != width:
            raise ValueError(
                f"nominal feature {self.name!r} ({self.encoding}) needs {width} column(s), got {self.columns!r}"
            )
        start = self.columns[0]
        if start < 0 or self.columns != tuple(range(start, start + width)):
            raise ValueError(
                f"nominal feature {self.name!r}: columns must be consecutive and >= 0, got {self.columns!r}"
            )


@attrs.frozen(eq=False, repr=False)
class Dataset:
    """Hold features, labels and their names.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        Features; stored as a C-contiguous float64 ndarray, or a canonical scipy.sparse CSR
        float64 matrix for sparse input (readers of sparse files never densify).
    Y : array-like of shape (n, L)
        Binary label matrix, stored as an int8 {0, 1} ndarray; ``Y[i, j] = 1`` when label j is
        relevant to example i.
    feature_names : sequence of str, optional
        Names of the columns of X: a tuple of strings, or :class:`IndexNames` (generated names
        made on demand: the default ``x0..`` and LibSVM's), which compares equal to the tuple of
        the same names.  Default ``x0, x1, ...``.
    label_names : sequence of str, optional
        Names of the columns of Y, likewise; default ``y0, y1, ...``.
    name : str, default=""
        The dataset's name (a file's stem, or e.g. "synthetic").
    nominal_features : sequence of NominalFeature, default=()
        How nominal source attributes were encoded into columns of X (see
        :class:`NominalFeature`); empty when every feature is numeric.  Writers use it to write
        such attributes back as nominal ones.
    parts : sequence of int, default=()
        The row counts of the datasets this one joins, in order (a Mulan train file then its test
        file: ``(391, 202)``), made by :func:`~multilabel_core.datasets.concatenate`; empty for a
        dataset from one source.  The experiments' ``given`` protocol splits at these boundaries.
    """

    X: np.ndarray | sp.csr_matrix = attrs.field(converter=_as_features)
    Y: np.ndarray = attrs.field(converter=lambda Y: np.ascontiguousarray(check_Y(Y)))
    feature_names: Sequence[str] = attrs.field(
        default=attrs.Factory(lambda self: _default_names("x", self.X.shape[1]), takes_self=True), converter=_names
    )
    label_names: Sequence[str] = attrs.field(
        default=attrs.Factory(lambda self: _default_names("y", self.Y.shape[1]), takes_self=True), converter=_names
    )
    name: str = attrs.field(default="", validator=attrs.validators.instance_of(str))
    nominal_features: tuple[NominalFeature, ...] = attrs.field(default=(), converter=tuple)
    parts: tuple[int, ...] = attrs.field(default=(), converter=tuple)

    def __attrs_post_init__(self):
        if self.Y.shape[0] != self.n_samples:
            raise ValueError(f"Y has {self.Y.shape[0]} rows but X has {self.n_samples}")
        self._check_parts()
        for kind, names, count in (
            ("feature", self.feature_names, self.n_features),
            ("label", self.label_names, self.n_labels),
        ):
            if len(names) != count:
                raise ValueError(f"{len(names)} {kind} names for {count} {kind} columns")
            if not isinstance(names, IndexNames) and len(set(names)) != count:
                duplicate = next(n for n in names if names.count(n) > 1)
                raise ValueError(f"{kind} name {duplicate!r} is used twice; names must be distinct")
        self._check_nominal_features()

    def _check_parts(self):
        if not self.parts:
            return
        counts = all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 1 for n in self.parts)
        if len(self.parts) < 2 or not counts or sum(self.parts) != self.n_samples:
            raise ValueError(
                f"parts must be two or more positive row counts summing to the {self.n_samples} rows, "
                f"got {self.parts!r}"
            )
        object.__setattr__(self, "parts", tuple(int(size) for size in self.parts))

    def _check_nominal_features(self):
        taken = set()
        for feature in self.nominal_features:
            if not isinstance(feature, NominalFeature):
                raise ValueError(f"nominal_features must hold NominalFeature records, got {feature!r}")
            if feature.columns[-1] >= self.n_features:
                raise ValueError(f"nominal feature {feature.name!r} refers to columns beyond X's {self.n_features}")
            if taken & set(feature.columns):
                raise ValueError(f"nominal feature {feature.name!r} shares columns with another nominal feature")
            taken.update(feature.columns)

    @property
    def n_samples(self) -> int:
        """Number of examples (rows of ``X``)."""
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        """Number of features (columns of ``X``)."""
        return self.X.shape[1]

    @property
    def n_labels(self) -> int:
        """Number of labels (columns of ``Y``)."""
        return self.Y.shape[1]

    @property
    def is_sparse(self) -> bool:
        """Whether ``X`` is a scipy sparse matrix."""
        return sp.issparse(self.X)

    def __repr__(self) -> str:
        storage = f"sparse CSR, {self.X.nnz} stored values" if self.is_sparse else "dense"
        nominal = f", {len(self.nominal_features)} nominal features" if self.nominal_features else ""
        parts = f", parts {' + '.join(map(str, self.parts))}" if self.parts else ""
        return (
            f"Dataset(name={self.name!r}, n_samples={self.n_samples}, n_features={self.n_features}, "
            f"n_labels={self.n_labels}, X {storage}{nominal}{parts})"
        )
