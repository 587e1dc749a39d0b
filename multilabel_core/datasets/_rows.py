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
    try:
        float(token)
    except ValueError:
        return False
    return True
