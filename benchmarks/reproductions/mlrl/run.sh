#!/usr/bin/env bash
# The MLRL-family reproduction (Zhang & Yeung, Multi-Label Relationship Learning, section 5): every run of docs/methods/mlrl.md "Reproduction", from the
# repository root.  Each run resumes where it stopped (the results store), so rerunning only completes
# missing work; delete runs/NAME to recompute it.  Environment: DATA_HOME (default ../shared/datasets
# beside the checkout), N_JOBS (default 1), MLCORE and PYTHON (default `mlcore` and `python` on PATH).
set -euo pipefail
N_JOBS_DEFAULT=1
source "$(dirname "$0")/../setup.sh"
HERE=benchmarks/reproductions/mlrl

for run in supervised supervised_lowgrid semi_supervised semi_supervised_lowgrid rcv1 rcv1_lowlam mtrl; do
    echo "== $run"
    "$MLCORE" compare --config "$HERE/$run.toml" --data-home "$DATA_HOME" --out "$HERE/runs/$run" \
        --n-jobs "$N_JOBS" --quiet "${MODE[@]}"
done

if computing; then
    echo "== kernel-width convention (emotions, evidence)"
    "$PYTHON" "$HERE/kernel_width.py" --data-home "$DATA_HOME" | tee "$HERE/tables/kernel_width.md"

    echo "== how close the fits are to the optimum of (6): the joint certificate (evidence)"
    "$PYTHON" "$HERE/joint_gap.py" --data-home "$DATA_HOME" | tee "$HERE/tables/joint_gap.md"
fi

echo "== the tables of docs/methods/mlrl.md (tables/tables.md)"
"$PYTHON" "$HERE/tables.py" > "$HERE/tables/tables.md"
