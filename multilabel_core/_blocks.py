"""Row blocks sized from a memory budget, for computations too large to do at once."""

from __future__ import annotations

from typing import Iterator

#: Bytes one block's temporaries may take (kernel blocks, pairwise-difference tensors).
BLOCK_BUDGET_BYTES = 64 * 2**20


def row_blocks(n_rows: int, bytes_per_row: int, budget: int = BLOCK_BUDGET_BYTES) -> Iterator[slice]:
    """Consecutive slices covering ``range(n_rows)``, each holding at most ``budget`` bytes.

    A block always has at least one row, whatever the budget.
    """
    size = max(1, budget // max(1, bytes_per_row))
    for start in range(0, n_rows, size):
        yield slice(start, min(start + size, n_rows))
