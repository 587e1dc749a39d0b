"""REPRODUCTION.md of the trace-norm least-squares reproduction (Ji & Ye, *An Accelerated Gradient Method for
Trace Norm Minimization*, ICML 2009): the run of given.toml (README.md), tabled by ../measured_tables.py.

    python benchmarks/reproductions/trace_ls/tables.py
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from measured_tables import write  # noqa: E402

PREAMBLE = [
    "Written by `python benchmarks/reproductions/trace_ls/tables.py` from `runs/given/results.jsonl` (config "
    "`given.toml`; README.md gives the protocol and why no paper value stands beside ours).",
]

if __name__ == "__main__":
    print(write(HERE, ["given"], "trace_ls", "Trace-norm least squares: measured tables", PREAMBLE))
