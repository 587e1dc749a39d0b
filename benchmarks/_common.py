"""Timing and table helpers shared by the benchmark scripts."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np


def data_dir() -> Path:
    env = os.environ.get("MULTILABEL_CORE_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


def median_time(fn, repeat: int = 5) -> tuple[float, object]:
    """Median wall time of ``fn()`` over ``repeat`` runs, and its last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), result


def best_time(fn, repeat: int) -> tuple[float, object]:
    """Smallest wall time of ``fn()`` over ``repeat`` runs (noise from other jobs only adds), and its last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def _cell(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def markdown_table(title, header, rows) -> str:
    """The table as RESULTS.md writes it: the title, a blank line, then the markdown rows."""
    lines = [title, "", "| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows])


def print_table(header, rows) -> None:
    cells = [header] + [[_cell(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for k, r in enumerate(cells):
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
        if k == 0:
            print("  ".join("-" * w for w in widths))
