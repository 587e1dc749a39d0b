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

# compare CONFIG RUN MESSAGE: one experiment file into runs/RUN, resumed where it stopped.
compare() {
    echo "== $3"
    "$MLCORE" compare --config "$HERE/$1.toml" --data-home "$DATA_HOME" --out "$HERE/runs/$2" \
        --n-jobs "$N_JOBS" --quiet "${EXTEND[@]}"
}

compare yeast yeast "yeast: 10 splits, 3-fold inner search on C (gamma2 = 1, k = 0.9 L), standardised"
compare baselines baselines "yeast: label powerset, RAkEL and ECC on the same 10 splits"
compare enron enron "enron: 10 splits, fixed hyper-parameters, sparse X"
compare bibtex bibtex "bibtex: 2 splits, fixed hyper-parameters, sparse X, D-step epochs capped at 300"
compare corel5k corel5k "corel5k: 1 split, fixed hyper-parameters, sparse X, D-step epochs capped at 300"

if computing; then
    echo "== converged PrML fits on a yeast half (README finding 2)"
    "$PYTHON" "$HERE/converged_fit.py" --data-home "$DATA_HOME"
fi

echo "== report"
"$PYTHON" "$HERE/tables.py" > /dev/null
echo "wrote $HERE/REPRODUCTION.md"
