"""Helpers for readers that collect the entries of all rows in flat arrays.

A reader stores the entries of row r at positions ``starts[r]:starts[r + 1]`` of flat
arrays (a CSR ``indptr``) and keeps each row's file line; :class:`Entries` maps a bad
entry back to its line, so that the conversions can run on whole arrays and the
errors still name the line.
"""

from __future__ import annotations

import attrs
import numpy as np

from ._files import DataFormatError


def row_starts(counts) -> np.ndarray:
    """Offsets of each row's first entry, plus the total: a CSR ``indptr``."""
    return np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])


@attrs.frozen
class Entries:
    """Where the flat entries of a file's rows come from: the file, row offsets, row lines."""

    path: object
    starts: np.ndarray
    linenos: np.ndarray

    def error(self, position: int, reason: str) -> DataFormatError:
        """The error for flat entry ``position``, located at its row's line."""
        row = np.searchsorted(self.starts, position, side="right") - 1
        return DataFormatError(self.path, int(self.linenos[row]), reason)

    def first_unordered(self, indices: np.ndarray) -> int | None:
        """The first entry whose index is not above the previous one in the same row, or None."""
        opens_row = np.zeros(indices.size, dtype=bool)
        opens_row[self.starts[:-1][self.starts[:-1] < indices.size]] = True
        bad = np.flatnonzero((np.diff(indices) <= 0) & ~opens_row[1:])
        return int(bad[0]) + 1 if bad.size else None


def is_number(token) -> bool:
    """A finite or infinite decimal number written in ASCII.

    Python's ``float`` (and numpy's conversion, which calls it) also reads ``1_0`` as 10 and
    Unicode digits such as ``\u0661`` as 1; no ARFF or LibSVM writer produces those, so a
    file holding them is damaged rather than exotic.
    """
    if not token.isascii() or "_" in token:
        return False
    try:
        float(token)
    except ValueError:
        return False
    return True


def first_non_number_spelling(tokens) -> int | None:
    """The first token spelled with non-ASCII characters or ``_`` (see :func:`is_number`), or None.

    One pass over the joined text for the usual all-ASCII file; token by token only when it fails.
    """
    joined = "".join(tokens)
    if joined.isascii() and "_" not in joined:
        return None
    return next(k for k, token in enumerate(tokens) if not token.isascii() or "_" in token)


def as_numbers(tokens) -> tuple[np.ndarray | None, int | None]:
    """The tokens as float64 in one numpy conversion, or (None, index of the first that is not a number)."""
    if first_non_number_spelling(tokens) is None:  # else numpy would read some of them (see is_number)
        try:
            return np.array(tokens, dtype=np.float64), None
        except ValueError:
            pass
    return None, next(k for k, token in enumerate(tokens) if not is_number(token))


def first_not_digits(tokens) -> int | None:
    """The first token that is not a run of ASCII digits 0-9, or None."""
    if not len(tokens):
        return None
    joined = "".join(tokens)
    if joined.isascii() and joined.isdigit() and all(tokens):
        return None
    return next(k for k, token in enumerate(tokens) if not (token.isascii() and token.isdigit()))


def as_indices(tokens, limit: int) -> tuple[np.ndarray, int | None]:
    """ASCII-digit tokens as int64, and the first one that is not below ``limit`` (or None).

    Tokens too long for int64 are located without converting them all to Python ints.
    """
    try:
        indices = np.array(tokens, dtype=np.int64)
    except (OverflowError, ValueError):  # ValueError: Python refuses to convert over 4300 digits
        big = next(k for k, token in enumerate(tokens) if len(token) > 18 or int(token) >= limit)
        return np.zeros(0, dtype=np.int64), big
    beyond = np.flatnonzero(indices >= limit)
    return indices, int(beyond[0]) if beyond.size else None


def cut(text, width: int = 32) -> str:
    """``text`` cut to ``width`` characters: a megabyte-long token still gives a one-line message."""
    text = str(text)
    short = text if len(text) <= width else f"{text[:width]}... ({len(text)} characters)"
    return short if short.isprintable() else repr(short)


def shown(token, width: int = 32) -> str:
    """``repr(token)``, cut to ``width`` characters (see :func:`cut`)."""
    token = str(token)
    return repr(token) if len(token) <= width else repr(token[:width]) + f"... ({len(token)} characters)"
