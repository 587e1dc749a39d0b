#!/usr/bin/env bash
# The LLSF reproduction (Huang, Li, Huang & Wu, ICDM 2015): every run of README.md beside this script, from the
# repository root.  Each run resumes where it stopped; delete runs/NAME to recompute it.  Options: DATA_HOME
# (default ../shared/datasets beside the checkout), N_JOBS (2), PYTHON, MLCORE.
set -euo pipefail
N_JOBS_DEFAULT=2
source "$(dirname "$0")/../setup.sh"
HERE=benchmarks/reproductions/llsf
for run in llsf text distance; do
    echo "== $run: $(sed -n 's/^datasets = //p' "$HERE/$run.toml")"
    "$MLCORE" compare --config "$HERE/$run.toml" --data-home "$DATA_HOME" --out "$HERE/runs/$run" \
        --n-jobs "$N_JOBS" --quiet "${MODE[@]}"
done
"$PYTHON" "$HERE/tables.py"
