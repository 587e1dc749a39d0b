#!/usr/bin/env bash
# The trace-norm least-squares reproduction (Ji & Ye, ICML 2009): the run of README.md beside this script, from
# the repository root.  It resumes where it stopped; delete runs/given to recompute it.  Options: DATA_HOME
# (default ../shared/datasets beside the checkout), N_JOBS (2), PYTHON, MLCORE.
set -euo pipefail
N_JOBS_DEFAULT=2
source "$(dirname "$0")/../setup.sh"
HERE=benchmarks/reproductions/trace_ls
"$MLCORE" compare --config "$HERE/given.toml" --data-home "$DATA_HOME" --out "$HERE/runs/given" --n-jobs "$N_JOBS" \
    --quiet "${MODE[@]}"
"$PYTHON" "$HERE/tables.py"
