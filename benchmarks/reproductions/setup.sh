# Sourced by each reproduction's run.sh, after it sets N_JOBS_DEFAULT: the repository root as the working
# directory, and the settings every run.sh takes from the environment -- DATA_HOME (default ../shared/datasets
# beside the checkout), N_JOBS (default N_JOBS_DEFAULT, else 1), MLCORE and PYTHON (default `mlcore` and
# `python` on PATH).
cd "$(dirname "$0")/../../.."
DATA_HOME="${DATA_HOME:-$(cd .. && pwd)/shared/datasets}"
N_JOBS="${N_JOBS:-${N_JOBS_DEFAULT:-1}}"
MLCORE="${MLCORE:-mlcore}"
PYTHON="${PYTHON:-python}"
