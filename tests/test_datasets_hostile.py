"""Hostile data files: bounded memory, and one located DataFormatError (never another exception).

Registry-driven: every case of the corpus (:mod:`multilabel_core.testing.malformed_files`)
through ``load_dataset`` and every loadable one through ``fit``, ``evaluate``, ``compare`` and
``predict``, and every registered method refused a declared width by the commands before it
fits; the commands' peak memory on the width cases is tests/test_commands_memory.py's.

The memory checks read the file in a fresh interpreter and assert on its peak resident set
(``VmHWM``); that interpreter also runs under an address-space limit, so that a regression
ends in a MemoryError there instead of swapping the machine.
"""

from __future__ import annotations

import gzip
import json
import os
import pickle
import subprocess
import sys
import tempfile

import numpy as np
import pytest
import scipy.sparse as sp

from multilabel_core import list_methods
from multilabel_core.cli import WORK_PER_STORED, WORK_PER_STORED_ENV, main
from multilabel_core.datasets import (
    MAX_BYTES,
    MAX_BYTES_ENV,
    MAX_COLUMNS,
    DataFormatError,
    Dataset,
    IndexNames,
    describe,
    load_dataset,
    read_libsvm,
    read_meka,
)
from multilabel_core.testing.malformed_files import (
    BOMB_BYTES,
    CASES,
    ERROR,
    MULAN_ARFF,
    WIDTH_CASES,
    gzip_bomb,
    write_case,
)

PEAK_RSS_LIMIT_MB = 200
CHILD_TIMEOUT = 120
CHILD_ADDRESS_SPACE = 3 * 2**30

_CHILD = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from multilabel_core import datasets
reader, path, kwargs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
result = {{}}
try:
    ds = getattr(datasets, reader)(path, **kwargs)
    stats = datasets.describe(ds)
    result["shape"] = [stats["n_samples"], stats["n_features"], stats["n_labels"]]
    result["last_name"] = ds.feature_names[-1]
except BaseException as exc:
    result["error"] = type(exc).__name__
    result["message"] = str(exc)
with open("/proc/self/status") as status:
    hwm = next(line for line in status if line.startswith("VmHWM:"))
result["peak_mb"] = int(hwm.split()[1]) / 1024
print(json.dumps(result))
"""


def read_in_child(path, reader: str = "load_dataset", **kwargs) -> dict:
    """Read ``path`` in a fresh interpreter: the outcome and its peak resident set in MB."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    env.pop(MAX_BYTES_ENV, None)
    code = _CHILD.format(limit=CHILD_ADDRESS_SPACE)
    # The child runs outside the checkout: an unbuilt multilabel_core/ in the working
    # directory would shadow the installed package (CI runs from the checkout).
    done = subprocess.run(
        [sys.executable, "-c", code, reader, str(path), json.dumps(kwargs)],
        capture_output=True, text=True, timeout=CHILD_TIMEOUT, env=env, cwd=tempfile.gettempdir(),
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# ---------------------------------------------------------------- bounded memory


def test_a_wide_libsvm_file_costs_nothing_per_declared_column(tmp_path):
    """20 bytes declaring 10^8 features: names are generated on demand, X stays CSR."""
    path = tmp_path / "wide.svm"
    path.write_bytes(b"0 100000000:1\n")
    result = read_in_child(path, "read_libsvm", max_columns=10**9)
    assert result.get("shape") == [1, 10**8, 1], result
    assert result["last_name"] == "x100000000"
    assert result["peak_mb"] < PEAK_RSS_LIMIT_MB, result


@pytest.mark.parametrize(
    "text, kwargs, reason",
    [
        (b"0 100000000:1\n", {}, "feature index 100000000 is beyond the limit of 16777216 features"),
        (b"1000000000 1:1\n", {}, "label 1000000000 is beyond the limit of 16777216 labels"),
        (b"1000000000 1:1\n", {"n_labels": 2 * 10**9}, "label matrix Y (int8) would take 1 x 2000000000"),
        (b"16777215 1:1\n" * 200, {}, "label 16777215 sets the width"),
        (b"0 16777216:1\n" * 3, {"sparse": False}, "X (float64) would take 3 x 16777216"),
    ],
    ids=["feature-index-1e8", "label-1e9", "n_labels-2e9", "200-rows-widest-label", "densify-wide"],
)
def test_huge_indices_are_refused_in_bounded_memory(tmp_path, text, kwargs, reason):
    path = tmp_path / "huge.svm"
    path.write_bytes(text)
    result = read_in_child(path, "read_libsvm", **kwargs)
    assert result.get("error") == "DataFormatError", result
    assert result["message"].startswith(f"{path}") and reason in result["message"], result
    assert result["peak_mb"] < PEAK_RSS_LIMIT_MB, result


@pytest.mark.parametrize("unit, head", [(b"0,1,0,0\n", True), (b"%\n", False)], ids=["rows", "comments"])
def test_a_gzip_bomb_is_refused_before_it_is_held(tmp_path, unit, head):
    header = b"@relation 'r: -C 2'\n@attribute a {0,1}\n@attribute b {0,1}\n@attribute c numeric\n@data\n"
    path = tmp_path / "bomb.arff.gz"
    path.write_bytes(gzip_bomb(BOMB_BYTES, unit, header if head else b""))
    assert path.stat().st_size < 600_000
    result = read_in_child(path)
    assert result.get("error") == "DataFormatError", result
    assert "decompresses to more than the cap of 256 MiB" in result["message"] and str(path) in result["message"]
    assert result["peak_mb"] < PEAK_RSS_LIMIT_MB, result


def test_a_wide_nominal_attribute_is_refused_before_its_dense_one_hot_columns(tmp_path):
    """A 450 KB dense file with one nominal attribute of 30000 values: 30000 x 30000 one-hot floats (6.7 GiB)."""
    levels = ",".join(f"v{k}" for k in range(30000)).encode()
    rows = b"".join(b"0,v%d\n" % (k % 30000) for k in range(30000))
    path = tmp_path / "wide.arff"
    path.write_bytes(b"@relation 'r: -C 1'\n@attribute y {0,1}\n@attribute a {" + levels + b"}\n@data\n" + rows)
    assert path.stat().st_size < 1_000_000
    result = read_in_child(path)
    assert result.get("error") == "DataFormatError", result
    assert "the feature matrix X (float64) would take 30000 x 30000" in result["message"], result
    assert result["peak_mb"] < PEAK_RSS_LIMIT_MB, result


@pytest.mark.parametrize(
    "name, data, reader, reason",
    [
        ("wide.csv", b"," * 5_000_000 + b"\n", "read_csv", "the header's 5000001 column names would take about 305.2 MiB"),
        ("wider.csv", b"," * 2**24 + b"\n", "read_csv", "the header has 16777217 columns, beyond the limit"),
        ("bomb.npz", next(c.data for c in CASES if c.name == "npz-bomb"), "read_npz", "inflates to 320 MiB"),
        ("ratio.npz", next(c.data for c in CASES if c.name == "npz-bomb-under-the-cap"), "read_npz", "1010 times"),
        ("lie.npz", next(c.data for c in CASES if c.name == "npz-shape-lie"), "read_npz", "shape (100000, 100000)"),
        ("size.npz", next(c.data for c in CASES if c.name == "npz-declared-size-lie"), "read_npz", "inflates to 4 GiB"),
    ],
    ids=["csv-5e6-names", "csv-2^24+1-columns", "npz-bomb", "npz-ratio", "npz-declared-shape", "npz-declared-size"],
)
def test_csv_and_npz_declared_sizes_are_refused_in_bounded_memory(tmp_path, name, data, reader, reason):
    """A header of commas, a zip bomb, an .npy header declaring 80 GB: refused before anything that size is held."""
    path = tmp_path / name
    path.write_bytes(data)
    assert path.stat().st_size < 20_000_000
    result = read_in_child(path, reader)
    assert result.get("error") == "DataFormatError", result
    assert result["message"].startswith(f"{path}") and reason in result["message"], result
    assert result["peak_mb"] < PEAK_RSS_LIMIT_MB, result


def test_the_cap_follows_the_argument_and_the_environment(tmp_path, monkeypatch):
    text = MULAN_ARFF.replace(b"@relation r", b"@relation 'r: -C -2'")
    plain, packed = tmp_path / "d.arff", tmp_path / "p.arff.gz"
    plain.write_bytes(text)
    packed.write_bytes(gzip.compress(text * 40))
    assert read_meka(plain).n_samples == 2
    with pytest.raises(DataFormatError, match=rf"{plain}: is {len(text)} bytes, over the cap of 100 bytes"):
        read_meka(plain, max_bytes=100)
    # The decompressed size counts, not the file's.
    assert packed.stat().st_size < 200
    with pytest.raises(DataFormatError, match="decompresses to more than the cap of 1000 bytes"):
        load_dataset(packed, max_bytes=1000)
    monkeypatch.setenv(MAX_BYTES_ENV, "100")
    with pytest.raises(DataFormatError, match=f"set \\${MAX_BYTES_ENV} to allow more"):
        load_dataset(plain)
    assert load_dataset(plain, max_bytes=10**6).n_samples == 2  # the argument wins
    monkeypatch.setenv(MAX_BYTES_ENV, "lots")
    with pytest.raises(ValueError, match=f"\\${MAX_BYTES_ENV} must be a positive whole number of bytes, got 'lots'"):
        load_dataset(plain)
    monkeypatch.delenv(MAX_BYTES_ENV)
    with pytest.raises(ValueError, match="max_bytes must be a positive whole number"):
        load_dataset(plain, max_bytes=0)


def test_the_label_matrix_is_capped_in_sparse_arff_rows(tmp_path):
    """A sparse row of 3 bytes still has one dense Y row: many labels times many rows is refused."""
    labels = "".join(f"@attribute l{j} {{0,1}}\n" for j in range(300))
    path = tmp_path / "wide.arff"
    path.write_text(f"@relation 'r: -C 300'\n{labels}@attribute f numeric\n@data\n" + "{300 1}\n" * 400)
    assert read_meka(path).Y.shape == (400, 300)
    with pytest.raises(DataFormatError, match=f"{path}: the label matrix Y \\(int8\\) would take 400 x 300"):
        read_meka(path, max_bytes=100_000)


def test_limits_comfortably_cover_the_shared_datasets(datasets_dir):
    """The widest shared file is far inside the limits; the largest is far below the cap."""
    names = ("bibtex", "enron", "medical")
    widest = max(len(load_dataset(datasets_dir / f"{name}.arff").feature_names) for name in names)
    assert widest == 1836 and widest * 1000 < MAX_COLUMNS
    largest = max(path.stat().st_size for path in datasets_dir.glob("*.arff"))
    assert largest * 20 < MAX_BYTES


def test_n_features_given_by_the_caller_overrides_the_column_limit(tmp_path):
    path = tmp_path / "w.svm"
    path.write_bytes(b"0 33554432:1\n1 1:1\n")
    with pytest.raises(DataFormatError, match="line 1: feature index 33554432 is beyond the limit"):
        read_libsvm(path)
    ds = read_libsvm(path, n_features=2**25)
    assert ds.X.shape == (2, 2**25) and sp.issparse(ds.X)
    with pytest.raises(DataFormatError, match="line 1: feature index 33554432 is out of range for n_features=100"):
        read_libsvm(path, n_features=100)
    with pytest.raises(DataFormatError, match="line 2: label 1 is beyond the limit of 1 labels"):
        read_libsvm(path, max_columns=1)


# ---------------------------------------------------------------- generated names


def test_index_names_behave_like_the_tuple_of_names():
    names = IndexNames("x", 1, 4)
    as_tuple = ("x1", "x2", "x3", "x4")
    assert names == as_tuple and as_tuple == names and list(names) == list(as_tuple)
    assert names != ("x1", "x2", "x3") and names != ("x0", "x1", "x2", "x3")
    assert names[0] == "x1" and names[-1] == "x4" and names[1:3] == ("x2", "x3")
    assert "x3" in names and "x5" not in names and "x03" not in names and "x0" not in names
    assert names.index("x3") == 2 and names.count("x4") == 1 and names.count("y") == 0
    with pytest.raises(IndexError):
        names[4]
    with pytest.raises(ValueError):
        names.index("x9")
    assert pickle.loads(pickle.dumps(names)) == names and hash(names) == hash(as_tuple)
    assert IndexNames("x1", 0, 2) == IndexNames("x", 10, 2)  # the same strings
    huge = IndexNames("x", 0, 10**12)
    assert len(huge) == 10**12 and huge[-1] == "x999999999999" and "x5" in huge


def test_default_names_are_generated_and_given_ones_still_checked():
    ds = Dataset(sp.csr_matrix((2, 5_000_000)), np.array([[1], [0]]))
    assert isinstance(ds.feature_names, IndexNames) and ds.feature_names[-1] == "x4999999"
    assert ds.label_names == ("y0",)
    with pytest.raises(ValueError, match="'a' is used twice"):
        Dataset(np.zeros((2, 2)), np.array([[1], [0]]), feature_names=("a", "a"))
    with pytest.raises(ValueError, match="3 feature names for 2 feature columns"):
        Dataset(np.zeros((2, 2)), np.array([[1], [0]]), feature_names=IndexNames("x", 0, 3))


# ---------------------------------------------------------------- one located error


@pytest.mark.parametrize(
    "text, line, reason",
    [
        ("0 1:1\n0 \u00b2:1\n", 2, "feature index '\u00b2' is not a non-negative integer"),
        ("0 1:1\n\u00b2 1:1\n", 2, "labels must be non-negative integers separated by ',', got '\u00b2'"),
        ("0 1:1\n0 1234567890123456789012345678901:1\n", 2, "feature index 1234567890123456789012345678901 is beyond"),
        ("0 1:1\n1234567890123456789012345678901 1:1\n", 2, "label 1234567890123456789012345678901 is beyond"),
        ("0 1:1\n0 " + "9" * 5000 + ":1\n", 2, "feature index 99999999999999999999999999999999... (5000 characters)"),
        ("0 1:1\n0 1:\u0661\n", 2, "feature entry 1:\u0661 is not index:number"),
        ("0 1:1\n0 1_0:1\n", 2, "feature index '1_0' is not a non-negative integer"),
        ("0 1::2\n", 1, "features must be 'index:value' pairs"),
    ],
    ids=["superscript-index", "superscript-label", "31-digit-index", "31-digit-label", "5000-digit-index",
         "arabic-digit-value", "underscore-index", "double-colon"],
)
def test_libsvm_bad_tokens_are_located(tmp_path, text, line, reason):
    path = tmp_path / "bad.svm"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataFormatError) as caught:
        read_libsvm(path)
    assert str(caught.value).startswith(f"{path}, line {line}: ") and reason in str(caught.value)


@pytest.mark.parametrize(
    "row, reason",
    [
        ("{1234567890123456789012345678901 1}", "sparse index 1234567890123456789012345678901 is out of range"),
        ("{\u00b2 1}", "sparse index '\u00b2' is not a non-negative integer"),
        ("{\u0661 1}", "sparse index '\u0661' is not a non-negative integer"),
        ("0,1,\u0661", "attribute 'f': '\u0661' is not a finite number"),
        ("0,1,1_5", "attribute 'f': '1_5' is not a finite number"),
    ],
)
def test_arff_bad_tokens_are_located(tmp_path, row, reason):
    path = tmp_path / "bad.arff"
    path.write_text(
        "@relation 'r: -C 2'\n@attribute a {0,1}\n@attribute b {0,1}\n@attribute f numeric\n@data\n" + row + "\n",
        encoding="utf-8",
    )
    with pytest.raises(DataFormatError) as caught:
        read_meka(path)
    assert str(caught.value).startswith(f"{path}, line 6: ") and reason in str(caught.value)


@pytest.mark.parametrize("gz", [False, True])
def test_a_byte_order_mark_is_accepted(tmp_path, gz):
    arff = b"\xef\xbb\xbf@relation 'r: -C 1'\r\n@attribute a {0,1}\r\n@attribute f numeric\r\n@data\r\n1,2.5\r\n"
    svm = b"\xef\xbb\xbf0 1:2.5\n"
    write = (lambda p, data: p.write_bytes(gzip.compress(data))) if gz else (lambda p, data: p.write_bytes(data))
    suffix = ".gz" if gz else ""
    write(tmp_path / f"b.arff{suffix}", arff)
    write(tmp_path / f"b.svm{suffix}", svm)
    meka = load_dataset(tmp_path / f"b.arff{suffix}")
    assert meka.label_names == ("a",) and meka.X.tolist() == [[2.5]]
    libsvm = load_dataset(tmp_path / f"b.svm{suffix}")
    assert libsvm.Y.tolist() == [[1]] and np.asarray(libsvm.X).tolist() == [[2.5]]


def test_invalid_utf8_is_located_at_its_line(tmp_path):
    path = tmp_path / "bad.svm"
    path.write_bytes(b"0 1:1\n0 1:1 \xff\n")
    with pytest.raises(DataFormatError, match=f"{path}, line 2: is not UTF-8 text: byte 0xff"):
        read_libsvm(path)


# ---------------------------------------------------------------- the corpus


def test_the_corpus_bombs_pass_the_default_cap():
    assert BOMB_BYTES > MAX_BYTES
    assert len(CASES) >= 70 and len({case.name for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_every_corpus_case_loads_or_raises_one_located_error(tmp_path, case):
    path = write_case(case, tmp_path)
    if case.expectation == ERROR:
        with pytest.raises(DataFormatError) as caught:
            load_dataset(path)
        message = str(caught.value)
        assert message.startswith(caught.value.path) and str(tmp_path) in message
        assert "\n" not in message and len(message) < 400
    else:
        ds = load_dataset(path)
        assert (ds.n_samples, ds.n_features, ds.n_labels) == case.expectation
        describe(ds)


# ---------------------------------------------------------------- through the CLI

_CLI_SAMPLE = [
    "libsvm-superscript-feature-index", "libsvm-superscript-label", "libsvm-31-digit-feature-index",
    "libsvm-31-digit-label", "libsvm-huge-feature-index", "libsvm-huge-label", "libsvm-gz-corrupt-deflate",
    "libsvm-many-rows-of-widest-label", "libsvm-binary-junk", "meka-sparse-31-digit-index",
    "meka-sparse-superscript-index", "meka-gz-bomb-rows", "meka-bom", "libsvm-bom", "mulan-xml-billion-laughs",
    "libsvm-feature-index-at-limit", "csv-valid", "csv-no-label-column", "csv-gz-bomb", "npz-valid-sparse",
    "npz-object-array", "npz-bomb-under-the-cap",
]
_BY_NAME = {case.name: case for case in CASES}


@pytest.mark.parametrize("name", _CLI_SAMPLE)
def test_cli_describe_gives_one_line_or_the_statistics(tmp_path, capsys, name):
    case = _BY_NAME[name]
    path = write_case(case, tmp_path)
    status = main(["describe", str(path)])
    out, err = capsys.readouterr()
    if case.expectation == ERROR:
        assert status == 2 and out == ""
        assert err.count("\n") == 1 and err.startswith(f"mlcore: error: {tmp_path}")
    else:
        assert status == 0 and err == ""
        assert ["n_features", str(case.expectation[1])] in [line.split() for line in out.splitlines()]


@pytest.mark.parametrize(
    "data, reason",
    [
        ("0 \u00b2:1\n".encode(), "line 1: feature index '\u00b2' is not a non-negative integer"),
        ("\u00b2 1:1\n".encode(), "line 1: labels must be non-negative integers"),
        (b"0 1234567890123456789012345678901:1\n", "line 1: feature index 1234567890123456789012345678901 is beyond"),
        (b"0 100000000:1\n", "line 1: feature index 100000000 is beyond the limit of 16777216 features"),
        (b"1000000000 1:1\n", "line 1: label 1000000000 is beyond the limit of 16777216 labels"),
    ],
    ids=["superscript-index", "superscript-label", "31-digit-index", "huge-index", "huge-label"],
)
def test_mlcore_describe_in_a_subprocess_prints_one_line(tmp_path, data, reason):
    path = tmp_path / "bad.svm"
    path.write_bytes(data)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    env.pop(MAX_BYTES_ENV, None)
    done = subprocess.run(
        [sys.executable, "-m", "multilabel_core.cli", "describe", str(path)],
        capture_output=True, text=True, timeout=CHILD_TIMEOUT, cwd=tmp_path, env=env,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"mlcore: error: {path}, {reason}"), done.stderr


# ---------------------------------------------------------------- every command on the corpus

_LOADABLE = [case.name for case in CASES if case.expectation != ERROR]
_SMALL_MODEL_DATA = b"0,2 1:0.5 3:1\n1 2:1\n0 1:1\n1,2 3:1\n" * 3


@pytest.fixture(scope="module")
def small_model(tmp_path_factory):
    """A model of three features and three labels (what ``predict`` is given)."""
    folder = tmp_path_factory.mktemp("model")
    (folder / "small.svm").write_bytes(_SMALL_MODEL_DATA)
    assert main(["fit", "br", str(folder / "small.svm"), "--out", str(folder / "small.mlcore"), "--quiet"]) == 0
    return folder / "small.mlcore"


def _command(command: str, data: str, folder, model) -> list[str]:
    return {
        "fit": ["fit", "br", data, "--out", str(folder / "m.mlcore"), "--quiet"],
        "evaluate": ["evaluate", "br", data, "--cv", "2", "--quiet"],
        "compare": ["compare", "br", "--data", data, "--out", str(folder / "run"), "--protocol-param", "n_splits=2",
                    "--quiet", "--no-plots"],  # fmt: skip
        "predict": ["predict", str(model), data, "--quiet"],
    }[command]


@pytest.mark.parametrize("command", ["fit", "evaluate", "compare", "predict"])
@pytest.mark.parametrize("name", _LOADABLE + _CLI_SAMPLE[:4])
def test_every_command_on_the_corpus_succeeds_or_says_one_line(tmp_path, capsys, small_model, name, command):
    """The corpus files that load, and a sample of the refused ones, through the commands that use the data.

    A loadable file may still be unfit for a command (two rows for a 2-fold CV, a label of one
    value, a declared width): the command says so in one line, never a traceback.  ``compare``
    exits 1 when every evaluation failed (its results and report are written).
    """
    case = _BY_NAME[name]
    path = write_case(case, tmp_path / "data")
    status = main(_command(command, str(path), tmp_path, small_model))
    out, err = capsys.readouterr()
    assert status in (0, 1, 2), (status, err)
    if status == 0:
        assert all(line.startswith("mlcore: ") for line in err.splitlines()), err  # warnings' summary lines only
    else:
        assert err.count("\n") == 1 and err.startswith("mlcore: error: "), err
        assert status == 2 or command == "compare", (status, err)
    if name in WIDTH_CASES:
        assert status == 2 and out == ""
        assert ("but the model" if command == "predict" else "to allow more") in err, err


_WIDE_ROWS = b"0 1:1\n1 16777216:1\n" * 10


@pytest.mark.parametrize("method", [spec.name for spec in list_methods()])
def test_every_registered_method_is_refused_a_declared_width_before_it_fits(tmp_path, capsys, method):
    """20 rows declaring 2^24 features: refused by the command (check_width), whatever the method costs."""
    path = tmp_path / "wide.svm"
    path.write_bytes(_WIDE_ROWS)
    status = main(["fit", method, str(path), "--out", str(tmp_path / "m.mlcore"), "--quiet"])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"mlcore: error: {path}: 20 row(s) x 16777216 feature(s) and 2 label(s) store 60 value(s)")
    assert f"more than {WORK_PER_STORED:g} per stored value" in err and not (tmp_path / "m.mlcore").exists()


def test_the_width_limit_follows_the_environment(tmp_path, capsys, monkeypatch):
    path = tmp_path / "wide.svm"
    path.write_bytes(b"0 1:1\n1 2:1\n" * 10 + b"0 2000000:1\n")
    monkeypatch.delenv(WORK_PER_STORED_ENV, raising=False)
    assert main(["evaluate", "br", str(path), "--cv", "2", "--quiet"]) == 2
    assert "(n + d) x L = 4000042 dense values" in capsys.readouterr().err
    monkeypatch.setenv(WORK_PER_STORED_ENV, "inf")
    assert main(["evaluate", "br", str(path), "--cv", "2", "--quiet"]) == 0
    capsys.readouterr()
    monkeypatch.setenv(WORK_PER_STORED_ENV, "-1")
    assert main(["evaluate", "br", str(path), "--cv", "2", "--quiet"]) == 2
    assert f"${WORK_PER_STORED_ENV} must be a positive number (or inf), got '-1'" in capsys.readouterr().err
