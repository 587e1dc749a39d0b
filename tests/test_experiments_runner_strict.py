"""``mlcore compare`` prints the failed fits of every run and ``--strict`` fails on any of them.

The failure is deterministic: ``br`` rejects C = -1 in every fit, so the grid point C = -1
fails in every inner fold of every split while C = 1 is chosen.
"""

from __future__ import annotations

import json

from multilabel_core.cli import EXIT_FAILED_FITS, main

SMALL = ["--protocol", "kfold", "--protocol-param", "n_splits=2", "--inner-cv", "2", "--no-plots", "--quiet"]


def compare(capsys, tmp_path, *extra):
    code = main(["compare", "br", "--data", "synthetic", *SMALL, "--out", str(tmp_path / "run"), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_summary_line_counts_the_failed_inner_fits_and_strict_fails_on_them(capsys, tmp_path):
    code, out, err = compare(capsys, tmp_path, "--grid", "br.C=-1,1")
    assert code == 0, err  # a failed grid point does not fail the run by default...
    summary = "failed fits: 4 (4 in the hyper-parameter searches, at 2 grid point(s) of 2 split(s)); failed splits: 0"
    assert summary in out
    assert "br on synthetic, split 0: grid point C=-1 failed in inner fold(s) 0, 1: ValueError: C must be > 0" in out
    code, out, err = compare(capsys, tmp_path, "--grid", "br.C=-1,1", "--strict")  # resumed: same records
    assert code == EXIT_FAILED_FITS == 1  # ...but does with --strict, after writing everything
    assert summary in out and err.startswith(f"mlcore: error: --strict: {summary}")
    assert (tmp_path / "run" / "report.md").exists()


def test_strict_passes_a_run_without_failures_and_says_zero(capsys, tmp_path):
    code, out, err = compare(capsys, tmp_path, "--grid", "br.C=0.1,1", "--strict")
    assert code == 0, err
    zero = "failed fits: 0 (0 in the hyper-parameter searches, at 0 grid point(s) of 0 split(s)); failed splits: 0"
    assert zero in out
    assert "Failed fits: 0; failed splits: 0." in (tmp_path / "run" / "report.md").read_text()


def test_strict_fails_on_a_failed_final_fit_and_json_lists_it(capsys, tmp_path):
    code, out, err = compare(capsys, tmp_path, "--grid", "br.C=-1", "--strict", "--json")
    assert code == EXIT_FAILED_FITS, err
    payload = json.loads(out)
    assert (payload["n_failed_fits"], payload["n_failed_inner_fits"], payload["n_failed_splits"]) == (2, 0, 2)
    assert [(f["split"], f["stage"], f["params"]) for f in payload["failures"]] == [(0, "fit", {"C": -1}),
                                                                                   (1, "fit", {"C": -1})]
