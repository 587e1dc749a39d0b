"""The results store and the experiment configuration: resume, refusal, new runs, experiment files."""

from __future__ import annotations

import json

import pytest

from multilabel_core import make_method
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.experiments.config import Experiment, load_experiment, parse_grid_option
from multilabel_core.experiments.runner import run_experiment
from multilabel_core.experiments.store import (
    ConfigMismatchError,
    ResultStore,
    config_hash,
    read_records,
    without_timings,
)

DATA = make_correlated_multilabel(n_samples=120, n_features=6, n_labels=3, random_state=1)


def compare(out, data=DATA, **settings):
    settings = {"protocol_params": {"n_splits": 3}, "grids": {"br": {"C": [0.1, 1.0]}}, "inner_cv": 2, **settings}
    return run_experiment(["br"], [data], "kfold", out, progress=False, plots=False, **settings)


def test_resuming_the_same_configuration_computes_nothing(tmp_path):
    first = compare(tmp_path / "run")
    content = (tmp_path / "run" / "results.jsonl").read_bytes()
    again = compare(tmp_path / "run")
    assert (again.computed, again.resumed) == (0, 3)
    assert (tmp_path / "run" / "results.jsonl").read_bytes() == content
    assert again.records == first.records


@pytest.mark.parametrize(
    "change, named",
    [
        ({"protocol_params": {"n_splits": 4}}, "protocol_params.n_splits: 3 -> 4"),
        ({"grids": {"br": {"C": [0.1, 10.0]}}}, "grids.br.C: [0.1,1.0] -> [0.1,10.0]"),
        ({"selection_metric": "ranking_loss"}, 'selection_metric: "average_precision" -> "ranking_loss"'),
        ({"seed": 1}, "seed: 0 -> 1"),
        ({"data": make_correlated_multilabel(n_samples=120, n_features=6, n_labels=3, random_state=2)},
         "datasets.synthetic.sha256"),
    ],
)  # fmt: skip
def test_a_changed_configuration_is_refused_naming_the_change(tmp_path, change, named):
    compare(tmp_path / "run")
    with pytest.raises(ConfigMismatchError) as info:
        compare(tmp_path / "run", **change)
    assert named in str(info.value) and "--new-run" in str(info.value)
    assert len(read_records(tmp_path / "run")) == 3, "nothing was written to the refused store"


def test_a_changed_method_parameter_is_a_changed_configuration(tmp_path):
    run_experiment({"m": make_method("br", tol=1e-3)}, [DATA], "kfold", tmp_path / "run",
                   protocol_params={"n_splits": 2}, progress=False, plots=False)  # fmt: skip
    with pytest.raises(ConfigMismatchError, match=r"methods\.m\.params\.tol: 0\.001 -> 0\.0001"):
        run_experiment({"m": make_method("br", tol=1e-4)}, [DATA], "kfold", tmp_path / "run",
                       protocol_params={"n_splits": 2}, progress=False, plots=False)  # fmt: skip


def test_a_new_run_goes_to_a_sibling_folder_and_resumes_there(tmp_path):
    original = compare(tmp_path / "run")
    changed = compare(tmp_path / "run", seed=5, new_run=True)
    config = json.loads((changed.out_dir / "config.json").read_text())
    assert changed.out_dir == tmp_path / f"run-{config['config_hash'][:8]}"
    assert changed.computed == 3 and read_records(tmp_path / "run") == original.records
    assert compare(tmp_path / "run", seed=5, new_run=True).computed == 0
    assert compare(tmp_path / "run", new_run=True).out_dir == tmp_path / "run", "the same config resumes in place"


def repeated(out, n_repeats, **settings):
    settings = {"grids": {"br": {"C": [0.1, 1.0]}}, "inner_cv": 2, **settings}
    params = {"n_repeats": n_repeats, "train_fraction": 0.5}
    return run_experiment(["br"], [DATA], "fixed_ratio", out, protocol_params=params, progress=False, plots=False,
                          **settings)  # fmt: skip


def test_an_extended_run_keeps_its_records_and_computes_only_the_new_splits(tmp_path):
    first = repeated(tmp_path / "run", 2)
    with pytest.raises(ConfigMismatchError, match=r"n_repeats: 2 -> 4.*--extend"):
        repeated(tmp_path / "run", 4)
    extended = repeated(tmp_path / "run", 4, extend=True)
    assert (extended.computed, extended.resumed) == (2, 2)
    assert read_records(tmp_path / "run")[:2] == first.records, "the old records are kept as they were"
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["config"]["protocol_params"]["n_repeats"] == 4
    assert config["extends"] == [{"config_hash": first.records[0]["config_hash"], "n_repeats": 2}]
    # The same four splits as a run made with n_repeats = 4 from the start, record for record.
    fresh = repeated(tmp_path / "fresh", 4)
    assert without_timings(extended.records) == [
        {**record, "config_hash": old["config_hash"]}
        for record, old in zip(without_timings(fresh.records), without_timings(extended.records))
    ]
    # Resuming the extended store (with or without --extend) and extending it again.
    assert repeated(tmp_path / "run", 4).computed == 0
    assert repeated(tmp_path / "run", 4, extend=True).computed == 0
    again = repeated(tmp_path / "run", 5, extend=True)
    assert (again.computed, again.resumed) == (1, 4)
    assert [e["n_repeats"] for e in json.loads((tmp_path / "run" / "config.json").read_text())["extends"]] == [2, 4]


@pytest.mark.parametrize(
    "change, refusal",
    [
        ({"n_repeats": 1}, "n_repeats must grow"),
        ({"n_repeats": 3, "seed": 1}, "only protocol_params.n_repeats may change"),
        ({"n_repeats": 3, "grids": {"br": {"C": [1.0]}}}, "only protocol_params.n_repeats may change"),
    ],
)
def test_extending_refuses_anything_but_more_repetitions(tmp_path, change, refusal):
    repeated(tmp_path / "run", 2)
    n_repeats = change.pop("n_repeats")
    with pytest.raises(ConfigMismatchError, match=refusal):
        repeated(tmp_path / "run", n_repeats, extend=True, **change)
    assert len(read_records(tmp_path / "run")) == 2, "nothing was written to the refused store"
    assert "extends" not in json.loads((tmp_path / "run" / "config.json").read_text())


def test_a_protocol_whose_splits_depend_on_their_number_cannot_be_extended(tmp_path):
    with pytest.raises(ValueError, match="protocol 'kfold' cannot be extended"):
        compare(tmp_path / "run", extend=True)
    assert not (tmp_path / "run").exists()
    with pytest.raises(ValueError, match="exclude each other"):
        ResultStore.open(tmp_path / "other", {"seed": 0}, new_run=True, extend=True)


def test_a_store_written_with_a_parameter_now_result_neutral_resumes(tmp_path):
    # Stores written before a method's n_jobs was left out of the configuration list it as a
    # parameter; it never changes a result, so they resume (and their config.json is updated).
    first = repeated(tmp_path / "run", 2)
    path = tmp_path / "run" / "config.json"
    stored = json.loads(path.read_text())
    old = stored["config"] | {"methods": {"br": {**stored["config"]["methods"]["br"]}}}
    old["methods"]["br"]["params"] = {**old["methods"]["br"]["params"], "n_jobs": None}
    old_hash = config_hash(old)
    path.write_text(json.dumps({"config_hash": old_hash, "config": old}))
    results = tmp_path / "run" / "results.jsonl"
    results.write_text("".join(json.dumps(r | {"config_hash": old_hash}) + "\n" for r in first.records))
    resumed = repeated(tmp_path / "run", 2)
    assert (resumed.computed, resumed.resumed) == (0, 2)
    assert json.loads(path.read_text())["extends"] == [{"config_hash": old_hash, "n_repeats": 2}]
    assert repeated(tmp_path / "run", 3, extend=True).computed == 1
    # Another parameter is a change, as before.
    old["methods"]["br"]["params"]["tol"] = 0.5
    path.write_text(json.dumps({"config_hash": config_hash(old), "config": old}))
    with pytest.raises(ConfigMismatchError, match=r"methods\.br\.params\.tol"):
        repeated(tmp_path / "run", 3)


def test_a_line_cut_by_a_kill_is_ignored_and_recomputed(tmp_path):
    complete = compare(tmp_path / "run")
    results = tmp_path / "run" / "results.jsonl"
    lines = results.read_bytes().splitlines(keepends=True)
    results.write_bytes(b"".join(lines[:2]) + lines[2][: len(lines[2]) // 2])
    assert len(read_records(tmp_path / "run")) == 2
    resumed = compare(tmp_path / "run")
    assert (resumed.computed, resumed.resumed) == (1, 2)
    assert results.read_bytes().startswith(b"".join(lines[:2]))
    assert without_timings(read_records(tmp_path / "run")) == without_timings(complete.records)


def test_damaged_or_foreign_stores_are_refused(tmp_path):
    compare(tmp_path / "run")
    results = tmp_path / "run" / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    results.write_text(lines[0] + "{not json\n" + "".join(lines[2:]))
    with pytest.raises(ValueError, match=r"results.jsonl:2: not a JSON record"):
        compare(tmp_path / "run")
    record = json.loads(lines[0]) | {"config_hash": "0" * 64}
    results.write_text(json.dumps(record) + "\n")
    with pytest.raises(ValueError, match="line 1 was written under another configuration"):
        compare(tmp_path / "run")
    (tmp_path / "loose").mkdir()
    (tmp_path / "loose" / "results.jsonl").write_text("")
    with pytest.raises(ValueError, match="no config.json"):
        ResultStore.open(tmp_path / "loose", {"seed": 0})


# ------------------------------------------------------------------ experiment files
TOML = """
methods = ["br"]
datasets = ["synthetic"]
protocol = "fixed_ratio"
seed = 3
inner_cv = 4
selection_metric = "ranking_loss"

[protocol_params]
n_repeats = 2

[grid]
tol = [1e-4]

[grids.br]
C = [0.1, 1.0]

[report]
reference_method = "br"
alpha = 0.01
"""


def test_toml_experiment_file_with_command_line_overrides(tmp_path):
    path = tmp_path / "experiment.toml"
    path.write_text(TOML)
    experiment = load_experiment(path)
    assert experiment.methods == {"br": None} and experiment.datasets == ("synthetic",)
    assert (experiment.protocol, experiment.seed, experiment.inner_cv) == ("fixed_ratio", 3, 4)
    assert experiment.protocol_params == {
        "train_fraction": 0.5, "n_repeats": 2, "stratify": True, "require_labels_in": None
    }
    assert experiment.grids == {"br": {"tol": [1e-4], "C": [0.1, 1.0]}}
    assert (experiment.reference_method, experiment.alpha, experiment.selection_metric) == ("br", 0.01, "ranking_loss")
    overridden = load_experiment(path, seed=7, protocol_params={"n_repeats": 5}, grids={"br": {"C": [10.0]}})
    assert overridden.seed == 7 and overridden.protocol_params["n_repeats"] == 5
    assert overridden.grids == {"br": {"tol": [1e-4], "C": [10.0]}}, "later grids win parameter by parameter"


def test_yaml_experiment_file(tmp_path):
    yaml = pytest.importorskip("yaml")
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump({"methods": ["br"], "datasets": ["synthetic"], "grids": {"br": {"C": [1, 2]}}}))
    assert load_experiment(path).grids == {"br": {"C": [1, 2]}}


@pytest.mark.parametrize(
    "text, needle",
    [
        ('methods = ["br"]\nmodel = 1\n', "unknown key(s) model"),
        ('methods = ["br"]\n[report]\nlevel = 1\n', "unknown key(s) report.level"),
        ('methods = ["br"]\ndatasets = ["synthetic"]\n[grids.svm]\nC = [1]\n', "grids are given for ['svm']"),
        ('methods = ["br"]\ndatasets = ["synthetic"]\n[grids.br]\nc = [1]\n', "unknown parameter(s) 'c'"),
        ('methods = ["br"]\ndatasets = ["synthetic"]\n[grids.br]\nC = []\n', "no values for C"),
        ('methods = ["br"]\ndatasets = ["synthetic"]\n[grids.br]\nC = 1\n', "gives C=1; a grid needs a list"),
        ('methods = ["br"]\n', "no datasets given"),
        ('methods = ["br"\n', "invalid TOML"),
    ],
)
def test_bad_experiment_files_are_refused_clearly(tmp_path, text, needle):
    path = tmp_path / "experiment.toml"
    path.write_text(text)
    with pytest.raises(ValueError) as info:
        load_experiment(path)
    assert needle in str(info.value)


@pytest.mark.parametrize(
    "settings, needle",
    [
        ({"methods": ["nope"]}, "unknown method 'nope'"),
        ({"protocol": "loo"}, "unknown protocol 'loo'"),
        ({"protocol_params": {"folds": 3}}, "no parameter 'folds'"),
        ({"selection_metric": "accuracy"}, "unknown metric"),
        ({"inner_cv": 1}, "inner_cv must be >= 2"),
        ({"reference_method": "mlrl"}, "reference_method 'mlrl' is not one of the methods"),
        ({"datasets": ["synthetic", "synthetic"]}, "given twice"),
    ],
)
def test_bad_experiments_are_value_errors(settings, needle):
    with pytest.raises(ValueError) as info:
        Experiment(**{"methods": ["br"], "datasets": ["synthetic"], **settings})
    assert needle in str(info.value)


def test_grid_options_of_the_command_line():
    assert parse_grid_option("C=0.1,1,10") == (None, "C", [0.1, 1, 10])
    assert parse_grid_option("br.solver=cd,lbfgs") == ("br", "solver", ["cd", "lbfgs"])
    assert parse_grid_option("fit_intercept=true,false") == (None, "fit_intercept", [True, False])
    for bad in ("C", "C=", "=1,2", "1C=2"):
        with pytest.raises(ValueError, match="expects"):
            parse_grid_option(bad)


def test_a_methods_thread_count_is_not_part_of_the_configuration():
    """n_jobs gives the same model bitwise for every thread count: a run resumes whatever threads it is given."""
    data = {"synthetic": make_correlated_multilabel(n_samples=30, n_features=4, n_labels=3, random_state=0)}
    one = Experiment(methods={"br": make_method("br", n_jobs=1)}, datasets=["synthetic"])
    two = Experiment(methods={"br": make_method("br", n_jobs=2)}, datasets=["synthetic"])
    assert one.canonical(data) == two.canonical(data)
    assert "n_jobs" not in one.canonical(data)["methods"]["br"]["params"]
