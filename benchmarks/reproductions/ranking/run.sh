#!/usr/bin/env bash
# The ranking-family reproduction (Gu, Li & Han, CMLFS, section 4.3): every run of docs/methods/ranking.md
# "Reproduction", from the repository root.  Each run resumes where it stopped (the results store), so rerunning
# only completes missing work; delete runs/NAME to recompute it.  Options: DATA_HOME (default ../shared/datasets
# beside the checkout), N_JOBS (1), PYTHON, MLCORE.
#
# OPENBLAS_NUM_THREADS=1: between its Cython solves the family computes small dense products (X^T beta for the
# certificates, eq. 32's scores); OpenBLAS's worker threads keep spinning after each of them and, on a machine
# with few (shared) cores, make every fit 2-5 times slower.  One thread per process is faster here; use N_JOBS
# for parallelism instead.
set -euo pipefail
N_JOBS_DEFAULT=1
source "$(dirname "$0")/../setup.sh"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
HERE=benchmarks/reproductions/ranking

echo "== table2: scene and yeast"
"$MLCORE" compare --config "$HERE/table2.toml" --data-home "$DATA_HOME" --out "$HERE/runs/table2" \
    --n-jobs "$N_JOBS" --quiet "${MODE[@]}"

echo "== table2_fs: MLFS and CMLFS of table2 again, every fit converged (the proximal bundle; converged_rerun.py compares)"
"$MLCORE" compare --config "$HERE/table2_fs.toml" --data-home "$DATA_HOME" --out "$HERE/runs/table2_fs" \
    --n-jobs "$N_JOBS" --quiet "${MODE[@]}"

echo "== arts: yahoo-arts with the paper's label filter (19 labels)"
"$PYTHON" "$HERE/arts.py" --data-home "$DATA_HOME" --out "$HERE/runs/arts" --n-jobs "$N_JOBS" "${MODE[@]}"

echo "== arts_fs: MLFS and CMLFS of arts again, every fit converged (the proximal bundle)"
"$PYTHON" "$HERE/arts.py" --data-home "$DATA_HOME" --config "$HERE/arts_fs.toml" --out "$HERE/runs/arts_fs" \
    --n-jobs "$N_JOBS" "${MODE[@]}"

if computing; then
    echo "== figure 2: macro AUC against the number of selected features"
    "$PYTHON" "$HERE/figure2.py" --data-home "$DATA_HOME" --out "$HERE"
fi

echo "== the tables of docs/methods/ranking.md"
"$PYTHON" "$HERE/tables.py"
