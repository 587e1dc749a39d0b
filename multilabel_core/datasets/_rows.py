"""Helpers for readers that collect all rows' entries in flat arrays.

A reader stores the entries of row r at positions ``starts[r]:starts[r + 1]`` of flat
arrays and keeps each row's file line in ``linenos``; these helpers map a bad entry
back to its line and run the checks shared by the sparse formats.
"""

from __future__ import annotations

import numpy as np


def row_starts(counts) -> np.ndarray:
    """Offsets of each row's first entry, plus the total: a CSR ``indptr``."""
    return np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])


def line_of(position: int, starts: np.ndarray, linenos: np.ndarray) -> int:
    """The file line of the row holding flat entry ``position``."""
    return int(linenos[np.searchsorted(starts, position, side="right") - 1])


def first_unordered(indices: np.ndarray, starts: np.ndarray) -> int | None:
    """The first entry whose index is not above the previous one in the same row, or None."""
    opens_row = np.zeros(indices.size, dtype=bool)
    opens_row[starts[:-1][starts[:-1] < indices.size]] = True
    bad = np.flatnonzero((np.diff(indices) <= 0) & ~opens_row[1:])
    return int(bad[0]) + 1 if bad.size else None


def is_number(token) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True
