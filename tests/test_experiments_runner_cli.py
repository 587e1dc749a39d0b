"""``mlcore compare`` and ``mlcore demo``: the runner from the command line."""

from __future__ import annotations

import json

import pytest

from multilabel_core.cli import main
from multilabel_core.experiments.store import read_records

SMALL = ["--protocol", "kfold", "--protocol-param", "n_splits=2", "--inner-cv", "2", "--no-plots"]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_json_summarises_the_store(capsys, tmp_path):
    code, out, err = run(capsys, "compare", "br", "--data", "synthetic", *SMALL, "--grid", "C=0.1,1",
                         "--out", tmp_path / "run", "--json", "--reference-method", "br")  # fmt: skip
    assert code == 0, err
    payload = json.loads(out)
    assert (payload["computed"], payload["resumed"], payload["failures"]) == (2, 0, [])
    records = read_records(tmp_path / "run")
    assert [r["params"]["C"] in (0.1, 1) for r in records] == [True, True]
    assert all([e["params"] for e in r["search"]] == [{"C": 0.1}, {"C": 1}] for r in records)
    ap = next(row for row in payload["summary"] if row["metric"] == "average_precision")
    assert ap["n"] == 2 and ap["mean"] == pytest.approx(sum(r["metrics"]["average_precision"] for r in records) / 2)
    assert "br" in (tmp_path / "run" / "report.md").read_text()
    assert payload["report"]["report"] == str(tmp_path / "run" / "report.md")


def test_compare_text_output_and_resume(capsys, tmp_path):
    argv = ["compare", "br", "--data", "synthetic", *SMALL, "--grid", "br.C=1", "--out", tmp_path / "run"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert "protocol kfold (n_splits=2), seed 0" in out and "2 evaluation(s) computed, 0 resumed" in out
    assert "synthetic  br" in out and "average_precision" in out
    code, out, _ = run(capsys, *argv)
    assert code == 0 and "0 evaluation(s) computed, 2 resumed" in out


def test_compare_from_an_experiment_file_with_overrides(capsys, tmp_path):
    config = tmp_path / "experiment.toml"
    config.write_text(
        'methods = ["br"]\ndatasets = ["synthetic"]\nprotocol = "fixed_ratio"\nseed = 2\n'
        "[protocol_params]\nn_repeats = 3\n[grids.br]\nC = [0.5]\n"
    )
    code, out, err = run(capsys, "compare", "--config", config, "--protocol-param", "n_repeats=2",
                         "--out", tmp_path / "run", "--json", "--no-plots")  # fmt: skip
    assert code == 0, err
    records = read_records(tmp_path / "run")
    assert [(r["protocol"], r["split"], r["params"]) for r in records] == [("fixed_ratio", 0, {"C": 0.5}),
                                                                          ("fixed_ratio", 1, {"C": 0.5})]
    stored = json.loads((tmp_path / "run" / "config.json").read_text())["config"]
    assert stored["seed"] == 2 and stored["protocol_params"]["n_repeats"] == 2


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["compare", "br", "--data", "synthetic", "--protocol", "holdout"], "unknown protocol 'holdout'"),
        (["compare", "br", "--data", "synthetic", "--grid", "C"], "--grid expects"),
        (["compare", "br", "--data", "synthetic", "--grid", "gamma=1,2"], "unknown parameter(s) 'gamma'"),
        (["compare", "br", "--data", "synthetic", "--protocol-param", "n_splits"], "--protocol-param expects"),
        (["compare", "br"], "no datasets given"),
        (["compare", "--data", "synthetic"], "no methods given"),
        (["compare", "br", "--data", "nowhere_dataset"], "nowhere_dataset"),
        (["compare", "br", "--data", "synthetic", "--config", "/nonexistent/experiment.toml"], "experiment.toml"),
    ],
)
def test_compare_bad_input_is_one_line(capsys, tmp_path, monkeypatch, argv, needle):
    monkeypatch.setenv("MULTILABEL_CORE_DATA", str(tmp_path))
    code, _, err = run(capsys, *argv, "--out", tmp_path / "run")
    assert code == 2 and err.count("\n") == 1 and err.startswith("mlcore: error:")
    assert needle in err


def test_compare_refuses_a_changed_configuration_then_makes_a_new_run(capsys, tmp_path):
    base = ["compare", "br", "--data", "synthetic", *SMALL, "--grid", "C=1", "--out", tmp_path / "run"]
    assert run(capsys, *base)[0] == 0
    code, _, err = run(capsys, *base, "--seed", "3")
    assert code == 2 and "changed: " in err and "seed: 0 -> 3" in err
    code, out, err = run(capsys, *base, "--seed", "3", "--new-run", "--json")
    assert code == 0, err
    assert json.loads(out)["out"].startswith(str(tmp_path / "run-"))


def test_compare_extend_adds_splits_to_a_finished_run(capsys, tmp_path):
    base = ["compare", "br", "--data", "synthetic", "--protocol", "fixed_ratio", "--inner-cv", "2", "--no-plots",
            "--grid", "C=1", "--out", tmp_path / "run", "--json"]  # fmt: skip
    assert run(capsys, *base, "--protocol-param", "n_repeats=2")[0] == 0
    code, _, err = run(capsys, *base, "--protocol-param", "n_repeats=3")
    assert code == 2 and "n_repeats: 2 -> 3" in err and "--extend" in err
    code, out, err = run(capsys, *base, "--protocol-param", "n_repeats=3", "--extend")
    assert code == 0, err
    assert (json.loads(out)["computed"], json.loads(out)["resumed"]) == (1, 2)
    assert sorted(r["split"] for r in read_records(tmp_path / "run")) == [0, 1, 2]


def test_report_only_writes_the_report_of_a_stopped_run_and_counts_what_is_missing(capsys, tmp_path):
    base = ["compare", "br", "--data", "synthetic", "--protocol", "fixed_ratio", "--inner-cv", "2", "--no-plots",
            "--grid", "C=1", "--out", tmp_path / "run"]  # fmt: skip
    code, _, err = run(capsys, *base, "--protocol-param", "n_repeats=3", "--report-only")
    assert code == 2 and "nothing to report" in err and not (tmp_path / "run").exists()
    assert run(capsys, *base, "--protocol-param", "n_repeats=2")[0] == 0
    (tmp_path / "run" / "report.md").unlink()
    # Three repetitions of which two are stored: the store is extended without computing the third.
    code, out, err = run(capsys, *base, "--protocol-param", "n_repeats=3", "--extend", "--report-only", "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert (payload["computed"], payload["resumed"], payload["missing"]) == (0, 2, 1)
    assert sorted(r["split"] for r in read_records(tmp_path / "run")) == [0, 1]
    assert "# Experiment report (partial: 2 of 3 evaluations)" in (tmp_path / "run" / "report.md").read_text()
    code, out, err = run(capsys, *base, "--protocol-param", "n_repeats=3", "--report-only")
    assert code == 0, err
    assert "0 evaluation(s) computed, 2 resumed; 1 not computed yet" in out
    code, _, err = run(capsys, *base, "--protocol-param", "n_repeats=3", "--report-only", "--new-run")
    assert code == 2 and "exclude each other" in err


def test_demo_is_a_small_compare_kept_in_the_given_folder(capsys, tmp_path):
    code, out, err = run(capsys, "demo", "--out", tmp_path / "demo", "--json")
    assert code == 0, err
    payload = json.loads(out)
    records = read_records(tmp_path / "demo")
    assert {r["method"] for r in records} >= {"br"} and {r["split"] for r in records} == {0, 1, 2}
    assert all(len(r["search"]) == 3 for r in records if r["method"] == "br"), "a small grid: three values"
    assert payload["params"]["br"] in [r["params"] for r in records if r["method"] == "br"]
    assert len(payload["true_label_correlation"]) == 6 and "br" in payload["weight_label_correlation"]
