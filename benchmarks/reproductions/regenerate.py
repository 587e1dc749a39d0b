"""Write every reproduction's reports, plots and tables again from its results stores, fitting nothing.

The stores (``<reproduction>/runs/NAME/results.jsonl``) are not in version control: get them first (README.md
beside this file, "The results stores").  For each store this writes ``report.md``, ``summary.csv``,
``summary.json``, ``splits.csv`` and ``plots/`` into the store folder from its records, with the report settings
(the papers' numbers, the reference method, the t-test level) of the experiment file that made it, then runs the
reproduction's ``tables.py`` (REPRODUCTION.md, or the tables the docs cite).  No dataset is read and nothing is
fitted, so a store computed by an older version of the code is reported as it stands (``mlcore compare
--report-only`` would first check the store against the current configuration and refuse a changed default).

    python benchmarks/reproductions/regenerate.py [REPRODUCTION ...] [--no-plots]

Run it from the repository root (the experiment files name the reference tables from there).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tomllib
from pathlib import Path

from multilabel_core.experiments import read_records
from multilabel_core.experiments.config import REPORT_KEYS
from multilabel_core.experiments.report import write_report

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from stores import FETCH  # noqa: E402

#: Store -> experiment file (without .toml) where run.sh does not name the store after its file.
EXPERIMENT_FILES = {
    "concept_network": {
        "fixed": "fixed", "fixed-yahoo": "yahoo", "sigma0": "fixed", "sigma0-yahoo": "yahoo",
        "random-emotions": "random", "random-yeast": "random", "random-scene": "random",
        "random-yahoo": "yahoo-random",
    },
}
#: Reference tables run.sh passes on the command line (``--reference``) instead of in the experiment file.
REFERENCES = {"concept_network": "reference_tables.csv"}
#: Where a tables.py that prints its tables puts them (the others write REPRODUCTION.md themselves); ranking's
#: are printed here, to be pasted into docs/methods/ranking.md.
TABLE_OUTPUT = {"mlrl": "tables/tables.md", "ranking": None}
REPRODUCTIONS = ["concept_network", "lieml", "llsf", "mlrl", "prml", "ranking", "trace_ls"]


def stores(reproduction: str) -> list[Path]:
    runs = HERE / reproduction / "runs"
    return sorted(p for p in runs.iterdir() if (p / "results.jsonl").is_file()) if runs.is_dir() else []


def report(reproduction: str, store: Path, plots: bool) -> dict:
    name = EXPERIMENT_FILES.get(reproduction, {}).get(store.name, store.name)
    experiment_file = HERE / reproduction / f"{name}.toml"
    if not experiment_file.is_file():
        raise SystemExit(f"{store}: no experiment file {experiment_file.name} to take the report settings from")
    # The report settings only (the experiment file's [report] table, or its top level as the runner merges them):
    # loading the whole experiment would ask for what run.sh gives on the command line (--data, protocol options).
    settings = tomllib.loads(experiment_file.read_text(encoding="utf-8"))
    report_settings = {**{k: settings[k] for k in REPORT_KEYS if k in settings}, **settings.get("report", {})}
    reference = REFERENCES.get(reproduction)
    return write_report(
        read_records(store),
        store,
        reference=HERE / reproduction / reference if reference else report_settings.get("reference"),
        reference_method=report_settings.get("reference_method"),
        alpha=report_settings.get("alpha", 0.05),
        plots=plots,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reproductions", nargs="*", default=REPRODUCTIONS, metavar="REPRODUCTION",
                        help=f"any of {', '.join(REPRODUCTIONS)} (default: all)")
    parser.add_argument("--no-plots", action="store_true", help="no PNG figures (they need the plot extra)")
    args = parser.parse_args()
    unknown = sorted(set(args.reproductions) - set(REPRODUCTIONS))
    if unknown:
        parser.error(f"unknown reproduction {', '.join(unknown)}; known: {', '.join(REPRODUCTIONS)}")
    for reproduction in args.reproductions:
        found = stores(reproduction)
        if not found:
            raise SystemExit(f"{reproduction}: no results store under {HERE / reproduction / 'runs'}; get them with\n"
                             f"    {FETCH}")
        for store in found:
            paths = report(reproduction, store, plots=not args.no_plots)
            print(f"{reproduction}/{store.name}: {paths['report'].name}, {len(paths['plots'])} plots")
        command = [sys.executable, str(HERE / reproduction / "tables.py")]
        output = TABLE_OUTPUT.get(reproduction)
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
        if output:
            (HERE / reproduction / output).write_text(done.stdout, encoding="utf-8")
        elif reproduction in TABLE_OUTPUT:
            print(done.stdout)
        print(f"{reproduction}: tables written ({output or 'above' if reproduction in TABLE_OUTPUT else 'REPRODUCTION.md'})")


if __name__ == "__main__":
    main()
