"""Own data on the command line: CSV and .npz through the commands, ``mlcore convert`` between every format.

The subprocess tests run the installed ``mlcore`` from a temporary folder (outside the checkout,
whose unbuilt sources would shadow a non-editable install); the format matrix runs ``main`` in
this process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from multilabel_core.cli import main
from multilabel_core.datasets import Dataset, load_dataset, write_csv

TIMEOUT = 300


def mlcore(*argv, cwd) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("mlcore")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "multilabel_core.cli"]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run([*command, *map(str, argv)], capture_output=True, text=True, cwd=cwd, timeout=TIMEOUT, env=env)


def own_data(n: int = 80, seed: int = 0) -> Dataset:
    """Five features and three labels that follow them (each label of both values in every half)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    scores = X[:, :3] + 0.3 * rng.normal(size=(n, 3))
    Y = (scores > np.median(scores, axis=0)).astype(np.int8)
    return Dataset(X, Y, [f"f{j}" for j in range(5)], ["sports", "politics", "science"])


def write_plain_csv(dataset: Dataset, path: Path) -> None:
    """A user's CSV: features then labels, the labels' columns named y_NAME (not the default rule)."""
    write_csv(dataset, path, label_prefix="y_")


def dense(X) -> np.ndarray:
    return X.toarray() if sp.issparse(X) else np.asarray(X)


# ---------------------------------------------------------------- through a subprocess


def test_evaluate_reads_a_users_csv_with_the_label_columns_named_by_a_flag(tmp_path):
    write_plain_csv(own_data(), tmp_path / "mine.csv")
    for flags in (["--labels", "5-7"], ["--labels", "y_sports,y_politics,y_science"], ["--label-prefix", "y_"]):
        done = mlcore("evaluate", "br", "mine.csv", *flags, "--cv", "2", "--quiet", "--json", "--compact", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["data"] == "mine.csv" and set(result["mean"]) >= {"hamming_loss", "micro_f1"}
        assert 0.0 <= result["mean"]["hamming_loss"] < 0.35  # the labels follow the features: far from chance


def test_an_undeterminable_label_set_is_one_line_naming_both_flags(tmp_path):
    write_plain_csv(own_data(), tmp_path / "mine.csv")
    done = mlcore("evaluate", "br", "mine.csv", "--cv", "2", "--quiet", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("mlcore: error: mine.csv, line 1: cannot tell which columns are labels")
    assert "--labels 0-5" in done.stderr and "--label-prefix y_" in done.stderr
    both = mlcore("describe", "mine.csv", "--labels", "5-7", "--label-prefix", "y_", cwd=tmp_path)
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


def test_convert_chains_every_format_in_subprocesses(tmp_path):
    """CSV (flagged labels) -> .npz -> LibSVM gzipped -> Mulan ARFF + XML -> MEKA ARFF -> CSV (default rule)."""
    original = own_data()
    write_plain_csv(original, tmp_path / "mine.csv")
    steps = [("mine.csv", "a.npz", ["--label-prefix", "y_"]), ("a.npz", "b.svm.gz", []), ("b.svm.gz", "c.arff", []),
             ("c.arff", "d.arff", ["--arff", "meka"]), ("d.arff", "e.csv", [])]
    for source, target, flags in steps:
        done = mlcore("convert", source, target, *flags, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"converted {source} (80 rows, 5 features, 3 labels) to {target}")
    assert (tmp_path / "c.xml").is_file() and not (tmp_path / "d.xml").exists()
    final = load_dataset(tmp_path / "e.csv")
    np.testing.assert_array_equal(final.X, original.X)
    np.testing.assert_array_equal(final.Y, original.Y)
    assert final.label_names == ("0", "1", "2")  # LibSVM's names, carried on after it
    assert load_dataset(tmp_path / "a.npz").label_names == original.label_names


def test_fit_and_predict_take_csv_and_npz(tmp_path):
    data = own_data(120, seed=1)
    train = Dataset(data.X[:80], data.Y[:80], data.feature_names, data.label_names)
    test = Dataset(data.X[80:], data.Y[80:], data.feature_names, data.label_names)
    write_plain_csv(train, tmp_path / "train.csv")
    write_plain_csv(test, tmp_path / "test.csv")
    fitted = mlcore("fit", "br", "train.csv", "--labels", "5-", "--out", "m.mlcore", "--quiet", cwd=tmp_path)
    assert fitted.returncode == 0, fitted.stderr
    assert mlcore("convert", "test.csv", "test.npz", "--labels", "5-", cwd=tmp_path).returncode == 0
    scored = [mlcore("predict", "m.mlcore", *data, "--quiet", "--json", cwd=tmp_path)
              for data in (["test.csv", "--label-prefix", "y_"], ["test.npz"])]
    for done in scored:
        assert done.returncode == 0, done.stderr
    metrics = [json.loads(done.stdout)["metrics"] for done in scored]
    assert metrics[0] == metrics[1] and metrics[0]["hamming_loss"] < 0.35


# ---------------------------------------------------------------- the format matrix, in process

_FORMATS = {"csv": ("d.csv", []), "csv.gz": ("d.csv.gz", []), "npz": ("d.npz", []), "libsvm": ("d.svm", []),
            "mulan": ("d.arff", []), "meka": ("d.arff", ["--arff", "meka"])}


@pytest.mark.parametrize("source", sorted(_FORMATS))
@pytest.mark.parametrize("target", sorted(_FORMATS))
def test_convert_between_every_pair_of_formats(tmp_path, capsys, source, target):
    """Every format to every other: the values and labels survive; names wherever both formats keep them."""
    X = sp.random(12, 6, density=0.4, format="csr", random_state=3)
    X[0, 5] = 2.5  # LibSVM stores no width: the last column is used
    Y = np.eye(12, 3, dtype=np.int8)
    Y[3:, 0] = 1
    original = Dataset(X, Y, [f"f{j}" for j in range(6)], ["a", "b", "c"])
    name, _ = _FORMATS[source]
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    from multilabel_core.datasets.loading import write_file

    write_file(original, tmp_path / "in" / name, arff="meka" if source == "meka" else "mulan")
    out_name, flags = _FORMATS[target]
    status = main(["convert", str(tmp_path / "in" / name), str(tmp_path / "out" / out_name), *flags, "--quiet"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    read = load_dataset(tmp_path / "out" / out_name)
    np.testing.assert_array_equal(dense(read.X), X.toarray())
    np.testing.assert_array_equal(read.Y, Y)
    if "libsvm" not in (source, target):
        assert read.feature_names == original.feature_names and read.label_names == original.label_names


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["convert", "{d}/in.csv", "{d}/out.parquet"], "out.parquet: unknown output format; name it .arff"),
        (["convert", "{d}/in.csv", "{d}/exists.npz"], "exists.npz exists; pass --force to overwrite it"),
        (["convert", "{d}/in.csv", "{d}/in.csv", "--force"], "in.csv is the file being converted"),
        (["convert", "{d}/in.csv", "{d}/out.npz.gz"], "an .npz file is a zip archive already; write NAME.npz"),
        (["convert", "{d}/exists.npz", "{d}/o.csv", "--labels", "0"], "labels= (mlcore: --labels) chooses the label"),
        (["convert", "{d}/in.csv", "{d}/x.arff", "--arff", "meka"], "x.xml lies beside"),
        (["describe", "synthetic", "--labels", "0"], "'synthetic' is not a file"),
        (["describe", "{d}/in.csv", "--labels", "0,9"], "label column 9 is out of range: the header has 8 columns"),
    ],
)
def test_convert_and_label_flags_refuse_in_one_line(tmp_path, capsys, argv, needle):
    write_csv(own_data(10), tmp_path / "in.csv")
    (tmp_path / "exists.npz").write_bytes(b"")
    from multilabel_core.datasets import write_npz

    write_npz(own_data(10), tmp_path / "exists.npz")
    (tmp_path / "x.xml").write_text("<labels/>")
    status = main([part.format(d=tmp_path) for part in argv])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and err.startswith("mlcore: error: "), err
    assert needle in err, err


def test_compare_loads_its_csv_data_with_the_label_flags(tmp_path, capsys):
    write_plain_csv(own_data(), tmp_path / "mine.csv")
    status = main(["compare", "br", "--data", str(tmp_path / "mine.csv"), "--labels", "5-7", "--out",
                   str(tmp_path / "run"), "--protocol-param", "n_splits=2", "--grid", "C=1", "--quiet", "--no-plots",
                   "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert {record["dataset"] for record in records} == {"mine"} and len(records) == 2
    assert all(record["status"] == "ok" for record in records)
    assert main(["compare", "br", "--data", "synthetic", "--labels", "0", "--out", str(tmp_path / "r2")]) == 2
    assert "choose the label columns of CSV files; give them with --data FILE.csv" in capsys.readouterr().err


def test_an_experiment_file_names_csv_and_npz_datasets(tmp_path, capsys):
    """A CSV dataset entry follows the default label: rule; an .npz entry needs no option."""
    write_csv(own_data(), tmp_path / "mine.csv")
    from multilabel_core.datasets import write_npz

    write_npz(own_data(seed=2), tmp_path / "other.npz")
    config = tmp_path / "exp.toml"
    config.write_text(
        f'methods = ["br"]\ndatasets = ["{tmp_path / "mine.csv"}", "{tmp_path / "other.npz"}"]\n'
        '[protocol_params]\nn_splits = 2\n[grids.br]\nC = [1.0]\n'
    )
    status = main(["compare", "--config", str(config), "--out", str(tmp_path / "run"), "--quiet", "--no-plots"])
    assert status == 0, capsys.readouterr().err
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert sorted({record["dataset"] for record in records}) == sorted([str(tmp_path / "mine.csv"),
                                                                        str(tmp_path / "other.npz")])
    assert len(records) == 4 and all(record["status"] == "ok" for record in records)


def test_compare_joins_csv_files_with_the_label_flags_for_the_given_protocol(tmp_path, capsys):
    data = own_data(90, seed=3)
    write_plain_csv(Dataset(data.X[:60], data.Y[:60], data.feature_names, data.label_names), tmp_path / "train.csv")
    write_plain_csv(Dataset(data.X[60:], data.Y[60:], data.feature_names, data.label_names), tmp_path / "test.csv")
    joined = f"{tmp_path / 'train.csv'}+{tmp_path / 'test.csv'}"
    status = main(["compare", "br", "--data", joined, "--label-prefix", "y_", "--protocol", "given", "--grid", "C=1",
                   "--out", str(tmp_path / "run"), "--quiet", "--no-plots"])
    assert status == 0, capsys.readouterr().err
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert len(records) == 1 and records[0]["dataset"] == "train+test" and records[0]["status"] == "ok"
