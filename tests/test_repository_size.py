"""The repository stays light: no generated run output is tracked, and the tracked files stay under 10 MB.

The reproductions' results stores (``benchmarks/reproductions/*/runs/``: records, reports and plots) are
generated files; they are published on the branch ``reproduction-stores``
(benchmarks/reproductions/README.md) and ``.gitignore`` keeps them out.  The size is the sum of the tracked
blobs, what a clone's working tree holds (``git ls-files -z | xargs -0 du -cb`` measures the same on disk).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The ceiling on the tracked files, in bytes (10 MB).
MAX_TRACKED_BYTES = 10 * 10**6


def _git(root: Path, *args: str, input: str | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, input=input, check=True)
    return done.stdout


def _in_git_checkout(root: Path) -> bool:
    if shutil.which("git") is None:
        return False
    done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True)
    return done.returncode == 0 and Path(done.stdout.strip()).resolve() == root.resolve()


def tracked_sizes(root: Path) -> dict[str, int]:
    """Tracked path -> size in bytes of its blob in the index."""
    entries = [line.split("\t", 1) for line in _git(root, "ls-files", "-s", "-z").split("\0") if line]
    blobs = {path: meta.split()[1] for meta, path in entries if meta.split()[0] != "160000"}  # not submodules
    sizes = _git(root, "cat-file", "--batch-check=%(objectsize)", input="\n".join(blobs.values()) + "\n").split()
    return {path: int(size) for path, size in zip(blobs, sizes)}


def under_runs(paths) -> list[str]:
    """The paths with a folder named ``runs`` on their way (run output, wherever it is)."""
    return sorted(path for path in paths if "runs" in PurePosixPath(path).parts[:-1])


def largest_folders(sizes: dict[str, int], n: int = 5) -> list[str]:
    totals: dict[str, int] = {}
    for path, size in sizes.items():
        parts = PurePosixPath(path).parts
        folder = "/".join(parts[:3]) if len(parts) > 3 else str(PurePosixPath(path).parent)
        totals[folder] = totals.get(folder, 0) + size
    return [f"{folder} {size / 1e6:.2f} MB" for folder, size in sorted(totals.items(), key=lambda kv: -kv[1])[:n]]


checkout = pytest.mark.skipif(not _in_git_checkout(ROOT), reason="not run from a git checkout of the repository")


def test_the_run_folder_check_finds_run_output():
    paths = ["benchmarks/reproductions/prml/runs/yeast/report.md", "runs/x.png", "docs/runs.md",
             "benchmarks/reproductions/prml/tables/converged_fit.md", "a/runs"]
    assert under_runs(paths) == ["benchmarks/reproductions/prml/runs/yeast/report.md", "runs/x.png"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_size_is_the_tracked_blobs(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.bin").write_bytes(b"x" * 2048)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "b.txt").write_text("hello")
    (tmp_path / "untracked.txt").write_text("not counted")
    _git(tmp_path, "add", "a.bin", "runs/b.txt")
    sizes = tracked_sizes(tmp_path)
    assert sizes == {"a.bin": 2048, "runs/b.txt": 5}
    assert under_runs(sizes) == ["runs/b.txt"]


@checkout
def test_no_run_output_is_tracked():
    tracked = under_runs(tracked_sizes(ROOT))
    assert not tracked, (
        f"{len(tracked)} tracked file(s) under a runs/ folder (generated output; .gitignore keeps them out, the "
        f"stores go to the branch reproduction-stores): {tracked[:10]}"
    )


@checkout
def test_the_tracked_files_stay_under_10_mb():
    sizes = tracked_sizes(ROOT)
    total = sum(sizes.values())
    assert len(sizes) > 100  # the measure sees the repository
    assert total <= MAX_TRACKED_BYTES, (
        f"the tracked files hold {total / 1e6:.2f} MB (> {MAX_TRACKED_BYTES / 1e6:.0f} MB) in {len(sizes)} files; "
        f"largest folders: {', '.join(largest_folders(sizes))}"
    )
