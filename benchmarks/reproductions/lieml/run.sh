#!/usr/bin/env bash
# The LIEML reproduction (Tao, Xu & Geng, Labeling Information Enhancement for Multi-label Learning with
# Low-Rank Subspace, Tables 2-4): every run of README.md beside this script, from the repository root.  Each run
# resumes where it stopped (the results store), so rerunning only completes missing work; delete runs/NAME to
# recompute it.  Options: DATA_HOME (default ../shared/datasets beside the checkout), N_JOBS (2), PYTHON, MLCORE.
#
# One BLAS thread per process: label enhancement is thousands of small BLAS-3 calls, which OpenBLAS's worker
# threads slow down on few shared cores; use N_JOBS for parallelism instead.
set -euo pipefail
N_JOBS_DEFAULT=2
source "$(dirname "$0")/../setup.sh"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
HERE=benchmarks/reproductions/lieml

# text (medical, and enron's LIEML fits: the longest) last.  --extend: the stores first run with five splits take
# the configs' ten and keep their records.
for run in small cal500 baselines text; do
    echo "== $run: $(sed -n 's/^datasets = //p' "$HERE/$run.toml")"
    "$MLCORE" compare --config "$HERE/$run.toml" --data-home "$DATA_HOME" --out "$HERE/runs/$run" \
        --n-jobs "$N_JOBS" --quiet "${EXTEND[@]}"
done
