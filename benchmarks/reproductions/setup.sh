# Sourced by each reproduction's run.sh, after it sets N_JOBS_DEFAULT: the repository root as the working
# directory, and the settings every run.sh takes from the environment -- DATA_HOME (default ../shared/datasets
# beside the checkout), N_JOBS (default N_JOBS_DEFAULT, else 1), MLCORE and PYTHON (default `mlcore` and
# `python` on PATH).
cd "$(dirname "$0")/../../.."
DATA_HOME="${DATA_HOME:-$(cd .. && pwd)/shared/datasets}"
N_JOBS="${N_JOBS:-${N_JOBS_DEFAULT:-1}}"
MLCORE="${MLCORE:-mlcore}"
PYTHON="${PYTHON:-python}"
# REPORT_ONLY=1 fits nothing: every `mlcore compare` writes its run's report, summaries and plots again from the
# store (--report-only; the stores are on the branch reproduction-stores, README.md beside this file), the
# scripts that fit models of their own are skipped, and the tables are written again.  The datasets are still
# read: a store is checked against the data it was computed from.
if [[ -n "${REPORT_ONLY:-}" ]]; then
    MODE=(--report-only)
    EXTEND=(--report-only)
else
    MODE=()
    EXTEND=(--extend)
fi
computing() { [[ -z "${REPORT_ONLY:-}" ]]; }
