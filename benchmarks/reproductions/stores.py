"""The reproductions' results stores (``<reproduction>/runs/NAME``) are not in version control.

They are published on the branch ``reproduction-stores`` (benchmarks/reproductions/README.md says how to get
them); ``run.sh`` computes them again.  A table writer calls :func:`require_stores` first, so that without the
stores it stops with that advice instead of writing tables of dashes over the committed ones.
"""

from __future__ import annotations

from pathlib import Path

FETCH = (
    "git fetch origin reproduction-stores && git archive FETCH_HEAD benchmarks/reproductions | tar -x  "
    "(from the repository root; benchmarks/reproductions/README.md, 'The results stores')"
)


def missing_stores(here: Path, runs) -> list[str]:
    """The names of ``runs`` without a ``runs/NAME/results.jsonl`` under ``here``."""
    return [run for run in runs if not (Path(here) / "runs" / run / "results.jsonl").is_file()]


def require_stores(here: Path, runs) -> None:
    """Exit with the way to get the stores when any of ``runs`` has none under ``here/runs``."""
    missing = missing_stores(here, runs)
    if missing:
        raise SystemExit(
            f"no results store for {', '.join(missing)} under {Path(here) / 'runs'}: the stores are not in version "
            f"control. Get them with\n    {FETCH}\nor compute them with {Path(here) / 'run.sh'}."
        )
