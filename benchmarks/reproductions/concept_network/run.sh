#!/usr/bin/env bash
# The concept-network reproduction (Zhang, Xue, Fan, Huang, Wu & Liu, Multi-Kernel Multi-Label Learning with
# Max-Margin Concept Network, IJCAI 2011, Tables 2-4): every run of README.md, from the repository root, then the
# report (REPRODUCTION.md).  Each run resumes where it stopped (the results store); delete runs/NAME to recompute.
# Options: DATA_HOME (default ../shared/datasets beside the checkout), N_JOBS (2), MLCORE, PYTHON.
set -euo pipefail
N_JOBS_DEFAULT=2
source "$(dirname "$0")/../setup.sh"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
HERE=benchmarks/reproductions/concept_network
run() { "$MLCORE" compare "$@" --data-home "$DATA_HOME" --n-jobs "$N_JOBS" --quiet --reference "$HERE/reference_tables.csv" "${MODE[@]}"; }

echo "== fixed splits: the Mulan train/test files of emotions, yeast and scene"
run --config "$HERE/fixed.toml" --out "$HERE/runs/fixed"

echo "== fixed split: yahoo-arts-mkml, the first 2000 rows train, the other 3000 test (sparse, features as given)"
run --config "$HERE/yahoo.toml" --out "$HERE/runs/fixed-yahoo"

echo "== sigma = 0 (no network), C searched as before (P0 changes nothing without the edge terms)"
run --config "$HERE/fixed.toml" --grid concept_network.sigma=0 --grid concept_network.C=0.1,1,10 --out "$HERE/runs/sigma0" concept_network
run --config "$HERE/yahoo.toml" --grid concept_network.sigma=0 --grid concept_network.C=0.1,1,10 --out "$HERE/runs/sigma0-yahoo" concept_network

echo "== 10 random splits of the same sizes"
for spec in emotions:391 yeast:1500 scene:1211; do
    name=${spec%%:*}; n_train=${spec##*:}
    run --config "$HERE/random.toml" --data "$name-train+$name-test" --protocol-param n_train="$n_train" \
        --out "$HERE/runs/random-$name"
done
run --config "$HERE/yahoo-random.toml" --out "$HERE/runs/random-yahoo"

echo "== report"
"$PYTHON" "$HERE/tables.py" > /dev/null
echo "wrote $HERE/REPRODUCTION.md"
