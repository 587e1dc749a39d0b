#!/usr/bin/env bash
# The PrML reproduction (You, Xu, Wang, Xu & Tao, Privileged Multi-label Learning, Table 2): every run of
# README.md beside this script, from the repository root, then the report (REPRODUCTION.md).  Each run resumes
# where it stopped (the results store), so rerunning only completes missing work; delete runs/NAME to recompute it.
# Options: DATA_HOME (default ../shared/datasets beside the checkout), N_JOBS (2), PYTHON, MLCORE.
#
# One BLAS thread per process: the family's small dense products between its Cython sweeps are slower with
# OpenBLAS's spinning worker threads on few shared cores; use N_JOBS for parallelism instead.
set -euo pipefail
N_JOBS_DEFAULT=2
source "$(dirname "$0")/../setup.sh"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
HERE=benchmarks/reproductions/prml

echo "== yeast: 10 splits, 3-fold inner search on C (gamma2 = 1, k = 0.9 L), standardised"
"$MLCORE" compare --config "$HERE/yeast.toml" --data-home "$DATA_HOME" --out "$HERE/runs/yeast" \
    --n-jobs "$N_JOBS" --quiet --extend

echo "== yeast: label powerset, RAkEL and ECC on the same 10 splits"
"$MLCORE" compare --config "$HERE/baselines.toml" --data-home "$DATA_HOME" --out "$HERE/runs/baselines" \
    --n-jobs "$N_JOBS" --quiet --extend

echo "== enron: 10 splits, fixed hyper-parameters, sparse X"
"$MLCORE" compare --config "$HERE/enron.toml" --data-home "$DATA_HOME" --out "$HERE/runs/enron" \
    --n-jobs "$N_JOBS" --quiet --extend

echo "== bibtex: 2 splits, fixed hyper-parameters, sparse X, D-step epochs capped at 300"
"$MLCORE" compare --config "$HERE/bibtex.toml" --data-home "$DATA_HOME" --out "$HERE/runs/bibtex" \
    --n-jobs "$N_JOBS" --quiet --extend

echo "== corel5k: 1 split, fixed hyper-parameters, sparse X, D-step epochs capped at 300"
"$MLCORE" compare --config "$HERE/corel5k.toml" --data-home "$DATA_HOME" --out "$HERE/runs/corel5k" \
    --n-jobs "$N_JOBS" --quiet --extend

echo "== converged PrML fits on a yeast half (README finding 2)"
"$PYTHON" "$HERE/converged_fit.py" --data-home "$DATA_HOME"

echo "== report"
"$PYTHON" "$HERE/tables.py" > /dev/null
echo "wrote $HERE/REPRODUCTION.md"
