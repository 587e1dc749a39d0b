"""CSV and .npz: read(write(x)) == x (hypothesis), a chain through every format, the label columns, the npz layout.

The hostile files of both formats are in the corpus (multilabel_core.testing.malformed_files),
run by tests/test_datasets_hostile.py; the command line is tests/test_cli_convert.py's.
"""

from __future__ import annotations

import io
import re
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given
from hypothesis import strategies as st

from multilabel_core.datasets import (
    LABEL_PREFIX,
    DataFormatError,
    Dataset,
    IndexNames,
    load_dataset,
    read_csv,
    read_npz,
    write_csv,
    write_npz,
)
from multilabel_core.datasets.loading import load_file, write_file

# Names a header can carry and read back: no control characters (line breaks among them), no
# blanks at either end (the reader strips spaces and tabs around a name); quotes, commas and
# non-ASCII letters are written quoted.
NAMES = (
    st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Cn")) | st.sampled_from(",\"'\t%"),
            min_size=1, max_size=8)
    .filter(lambda name: name == name.strip(" \t") and not name.startswith(LABEL_PREFIX))
)
VALUES = st.one_of(st.just(0.0), st.integers(-3, 3).map(float), st.floats(allow_nan=False, allow_infinity=False))


@st.composite
def datasets(draw, *, names: bool = True):
    n = draw(st.integers(1, 6))
    d = draw(st.integers(1, 5))
    n_labels = draw(st.integers(1, 4))
    X = np.array(draw(st.lists(st.lists(VALUES, min_size=d, max_size=d), min_size=n, max_size=n)))
    Y = np.array(draw(st.lists(st.lists(st.integers(0, 1), min_size=n_labels, max_size=n_labels), min_size=n,
                               max_size=n)))
    if draw(st.booleans()):
        X = sp.csr_matrix(X)
    if not names:
        return Dataset(X, Y, name="rt")
    listed = draw(st.lists(NAMES, min_size=d + n_labels, max_size=d + n_labels, unique=True))
    return Dataset(X, Y, listed[:d], listed[d:], "rt")


def dense(X) -> np.ndarray:
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def assert_same(read: Dataset, written: Dataset, *, names: bool = True) -> None:
    np.testing.assert_array_equal(dense(read.X), dense(written.X))
    np.testing.assert_array_equal(read.Y, written.Y)
    assert read.Y.dtype == np.int8 and read.X.dtype == np.float64
    if names:
        assert read.feature_names == written.feature_names
        assert read.label_names == written.label_names


# ---------------------------------------------------------------- round trips


@given(datasets(), st.sampled_from(["auto", True, False]), st.sampled_from(["", ".gz"]))
def test_csv_roundtrip(dataset, sparse, gz):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"rt.csv{gz}"
        write_csv(dataset, path)
        read = read_csv(path, sparse=sparse)
    assert_same(read, dataset)
    assert read.is_sparse == (sparse is True)  # a CSV table is dense; only sparse=True makes it CSR
    assert read.name == "rt"


@given(datasets(), st.text(st.sampled_from("yz_#"), min_size=1, max_size=3))
def test_csv_roundtrip_with_another_label_prefix(dataset, prefix):
    assume(not any(name.startswith(prefix) for name in dataset.feature_names))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rt.csv"
        write_csv(dataset, path, label_prefix=prefix)
        read = read_csv(path, label_prefix=prefix)
        columns = read_csv(path, labels=f"{dataset.n_features}-")  # the same columns by position
    assert_same(read, dataset)
    assert columns.label_names == tuple(prefix + name for name in dataset.label_names)
    np.testing.assert_array_equal(columns.Y, dataset.Y)


@given(datasets(), st.booleans(), st.sampled_from(["auto", True, False]))
def test_npz_roundtrip(dataset, compress, sparse):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rt.npz"
        write_npz(dataset, path, compress=compress)
        read = read_npz(path, sparse=True if sparse is True else False if sparse is False else "auto")
    assert_same(read, dataset)
    if sparse == "auto" and not dataset.is_sparse:
        assert not read.is_sparse


@given(datasets(names=False))
def test_npz_keeps_generated_names_without_listing_them(dataset):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rt.npz"
        write_npz(dataset, path)
        read = read_npz(path)
        members = zipfile.ZipFile(path).namelist()
    assert isinstance(read.feature_names, IndexNames) and read.feature_names == dataset.feature_names
    assert "feature_prefix.npy" in members and "feature_names.npy" not in members


@given(datasets())
def test_a_chain_through_every_format_keeps_values_and_labels(dataset):
    """CSV -> .npz -> LibSVM -> Mulan ARFF -> MEKA ARFF -> CSV, each read back by load_dataset before the next.

    LibSVM stores no width and no names: the last feature and label are made used, and the names
    after it are LibSVM's own, carried on by the other formats.
    """
    X = dense(dataset.X).copy()
    Y = dataset.Y.copy()
    X[0, -1] = X[0, -1] or 1.5
    Y[0, -1] = 1
    current = Dataset(sp.csr_matrix(X) if dataset.is_sparse else X, Y, dataset.feature_names, dataset.label_names)
    with tempfile.TemporaryDirectory() as folder:
        for k, (suffix, arff) in enumerate(
            [(".csv", "mulan"), (".npz", "mulan"), (".svm", "mulan"), (".arff", "mulan"), (".arff", "meka"),
             (".csv.gz", "mulan")]
        ):
            path = Path(folder) / f"step{k}{suffix}"
            write_file(current, path, arff=arff)
            read = load_dataset(path)
            assert_same(read, current, names=suffix != ".svm")
            current = read
    np.testing.assert_array_equal(dense(current.X), X)
    np.testing.assert_array_equal(current.Y, Y)


# ---------------------------------------------------------------- CSV label columns

_TABLE = "a,b,c,y_1,y_2\n1,2,3,0,1\n0,5,6,1,1\n"


@pytest.mark.parametrize(
    "options, features, labels",
    [
        ({"labels": "3-4"}, ("a", "b", "c"), ("y_1", "y_2")),
        ({"labels": "3-"}, ("a", "b", "c"), ("y_1", "y_2")),
        ({"labels": "4,3"}, ("a", "b", "c"), ("y_2", "y_1")),
        ({"labels": "y_1, y_2"}, ("a", "b", "c"), ("y_1", "y_2")),
        ({"labels": ["y_2", 3]}, ("a", "b", "c"), ("y_2", "y_1")),
        ({"labels": "0"}, ("b", "c", "y_1", "y_2"), ("a",)),
        ({"label_prefix": "y_"}, ("a", "b", "c"), ("1", "2")),
    ],
)
def test_label_columns_by_position_range_name_or_prefix(tmp_path, options, features, labels):
    path = tmp_path / "t.csv"
    path.write_text(_TABLE)
    ds = read_csv(path, **options)
    assert ds.feature_names == features and ds.label_names == labels
    named = dict(zip(("a", "b", "c", "y_1", "y_2"), np.loadtxt(io.StringIO(_TABLE), delimiter=",", skiprows=1).T))
    for j, name in enumerate(labels):
        np.testing.assert_array_equal(ds.Y[:, j], named[name if name in named else "y_" + name])
    for j, name in enumerate(features):
        np.testing.assert_array_equal(ds.X[:, j], named[name])


def test_an_undeterminable_label_set_is_refused_naming_both_options(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(_TABLE)
    with pytest.raises(DataFormatError) as caught:
        read_csv(path)
    message = str(caught.value)
    assert message.startswith(f"{path}, line 1: cannot tell which columns are labels: no column name starts with 'label:'")
    assert "labels=" in message and "label_prefix=" in message and "--labels 0-5" in message
    assert caught.value.line == 1
    with pytest.raises(DataFormatError, match="no column name starts with the label prefix 'z_'"):
        read_csv(path, label_prefix="z_")


@pytest.mark.parametrize(
    "options, error, reason",
    [
        ({"labels": "3-4", "label_prefix": "y_"}, ValueError, "give labels= or label_prefix=, not both"),
        ({"labels": "5"}, DataFormatError, "label column 5 is out of range: the header has 5 columns"),
        ({"labels": "3-7"}, DataFormatError, "label columns '3-7' are out of range"),
        ({"labels": "y1"}, DataFormatError, "label column 'y1' is not a column of the header; did you mean 'y_1'"),
        ({"labels": "3,y_1"}, DataFormatError, "labels= chooses column 3 ('y_1') twice"),
        ({"labels": "3,,4"}, ValueError, "has an empty entry"),
        ({"labels": []}, ValueError, "labels= is empty"),
        ({"labels": [3.0]}, ValueError, "labels must hold column positions (int) and names (str)"),
        ({"labels": "0-4"}, DataFormatError, "every column is a label column"),
        ({"label_prefix": ""}, ValueError, "label_prefix must be a non-empty string"),
    ],
)
def test_bad_label_choices_are_refused_with_the_reason(tmp_path, options, error, reason):
    path = tmp_path / "t.csv"
    path.write_text(_TABLE)
    with pytest.raises(error) as caught:
        read_csv(path, **options)
    assert reason in str(caught.value)


def test_label_options_are_refused_for_formats_that_mark_their_labels(tmp_path):
    path = tmp_path / "t.svm"
    path.write_text("0 1:1\n1 2:1\n")
    with pytest.raises(ValueError, match=r"labels= \(mlcore: --labels\) chooses the label columns of a CSV file; this "
                       r"file's format \(libsvm\) marks its labels itself"):
        load_dataset(path, labels="0")
    with pytest.raises(ValueError, match="label_prefix="):
        load_file(path, label_prefix="y")


def test_csv_errors_name_the_line_and_the_column(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("f1,f2,label:a\n1,2,0\n\n3,x,1\n")
    with pytest.raises(DataFormatError) as caught:
        read_csv(path)
    assert str(caught.value) == f"{path}, line 4: column 2 ('f2'): 'x' is not a number"
    path.write_text("f1,f2,label:a\n1,2,0\n3,4,7\n")
    with pytest.raises(DataFormatError, match=r"line 3: column 3 \('label:a'\) is a label column and holds 7"):
        read_csv(path)


def test_csv_writer_refuses_names_that_would_not_read_back(tmp_path):
    X, Y = np.zeros((1, 1)), np.ones((1, 1))
    for names, reason in [
        ((["label:x"], ["y"]), "starts with the label prefix 'label:'"),
        ((["a\nb"], ["y"]), "without line breaks"),
        (([" a"], ["y"]), "without spaces or tabs at either end"),
        ((["a"], ["y\t"]), "label name 'y\\t' cannot be written"),
    ]:
        with pytest.raises(ValueError, match=re.escape(reason)):
            write_csv(Dataset(X, Y, *names), tmp_path / "w.csv")
    write_csv(Dataset(X, Y, ["label:x"], ["y"]), tmp_path / "w.csv", label_prefix="y:")
    assert read_csv(tmp_path / "w.csv", label_prefix="y:").feature_names == ("label:x",)


def test_bare_names_find_csv_and_npz_files(tmp_path):
    ds = Dataset(np.array([[1.0, 2.0], [3.0, 0.0]]), np.array([[1, 0], [0, 1]]), ["f", "g"], ["a", "b"])
    write_csv(ds, tmp_path / "mine.csv")
    write_npz(ds, tmp_path / "other.npz")
    assert_same(load_dataset("mine", data_home=tmp_path), ds)
    assert_same(load_dataset("other", data_home=tmp_path), ds)
    with pytest.raises(ValueError, match=r"nothing\.csv or nothing\.npz in data_home"):
        load_dataset("nothing", data_home=tmp_path)


# ---------------------------------------------------------------- .npz layout


def test_numpy_savez_files_are_datasets(tmp_path):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(6, 3)).astype(np.float32), rng.integers(0, 2, size=(6, 2)).astype(bool)
    np.savez(tmp_path / "plain.npz", X=X, Y=Y)
    np.savez_compressed(tmp_path / "packed.npz", X=np.asfortranarray(X), Y=Y.astype(np.int64),
                        feature_names=np.array(["a", "b", "c"]), label_names=np.array(["p", "q"]))
    for name in ("plain", "packed"):
        ds = read_npz(tmp_path / f"{name}.npz")
        np.testing.assert_array_equal(ds.X, X.astype(np.float64))
        np.testing.assert_array_equal(ds.Y, Y.astype(np.int8))
    assert ds.feature_names == ("a", "b", "c") and ds.label_names == ("p", "q")


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_scipy_sparse_parts_are_read_for_every_format_scipy_saves(tmp_path, fmt):
    """The X_ parts are what scipy.sparse.save_npz writes for the matrix, key by key."""
    X = sp.random(7, 9, density=0.3, format=fmt, random_state=1)
    buffer = io.BytesIO()
    sp.save_npz(buffer, X, compressed=False)
    buffer.seek(0)
    parts = dict(np.load(buffer))
    Y = np.eye(7, 3, dtype=np.int8)
    np.savez(tmp_path / "s.npz", Y=Y, **{f"X_{key}": value for key, value in parts.items()})
    ds = read_npz(tmp_path / "s.npz", sparse=True)
    assert ds.is_sparse and (ds.X != X.tocsr()).nnz == 0
    np.testing.assert_array_equal(ds.Y, Y)


def test_duplicate_sparse_entries_are_summed_as_scipy_does(tmp_path):
    np.savez(tmp_path / "d.npz", X_format=np.array("coo"), X_shape=np.array([2, 2]), X_data=np.array([1.0, 2.0]),
             X_row=np.array([0, 0]), X_col=np.array([1, 1]), Y=np.array([[1], [0]]))
    np.testing.assert_array_equal(read_npz(tmp_path / "d.npz", sparse=False).X, [[0.0, 3.0], [0.0, 0.0]])


def test_the_writer_stores_a_member_that_would_pass_the_readers_ratio(tmp_path):
    """12 MB of zeros deflate about 1000:1, past the 100:1 bound: write_npz stores that member, so its file reads."""
    ds = Dataset(np.zeros((1500, 1000)), np.tile([[0, 1]], (1500, 1)))
    write_npz(ds, tmp_path / "z.npz")
    infos = {info.filename: info for info in zipfile.ZipFile(tmp_path / "z.npz").infolist()}
    assert infos["X.npy"].compress_type == zipfile.ZIP_STORED
    assert infos["Y.npy"].compress_type == zipfile.ZIP_DEFLATED  # 3 KB: under the 1 MiB the ratio leaves alone
    assert_same(read_npz(tmp_path / "z.npz"), ds)
    # numpy's own compressed writer does deflate it, and such a file needs max_ratio (or the variable) to read.
    np.savez_compressed(tmp_path / "packed.npz", X=ds.X, Y=ds.Y)
    with pytest.raises(DataFormatError, match="a member may inflate to at most 100 times its compressed size"):
        read_npz(tmp_path / "packed.npz")
    assert_same(read_npz(tmp_path / "packed.npz", max_ratio=5000), ds, names=False)


def test_npz_members_are_capped_by_max_bytes(tmp_path):
    ds = Dataset(np.ones((100, 100)), np.ones((100, 1)))
    write_npz(ds, tmp_path / "a.npz", compress=False)
    with pytest.raises(DataFormatError, match=r"member 'X.npy' inflates to 78.25 KiB \(80128 bytes\), over the cap of "
                       r"9.766 KiB"):
        read_npz(tmp_path / "a.npz", max_bytes=10_000)
    assert read_npz(tmp_path / "a.npz", max_bytes=100_000).n_samples == 100


def test_an_npz_path_that_is_gzipped_or_not_a_file_is_refused(tmp_path):
    with pytest.raises(DataFormatError, match="is a directory, not a data file"):
        read_npz(tmp_path)
    (tmp_path / "d.npz.gz").write_bytes(b"x")
    with pytest.raises(DataFormatError, match="an .npz file is a zip archive already"):
        load_dataset(tmp_path / "d.npz.gz")
    with pytest.raises(ValueError, match="an .npz file is a zip archive already; write NAME.npz"):
        write_file(Dataset(np.ones((1, 1)), np.ones((1, 1))), tmp_path / "e.npz.gz")


def test_a_csv_no_reader_could_read_back_is_not_written(tmp_path, monkeypatch):
    wide = Dataset(sp.csr_matrix(([1.0], ([0], [2**20 - 1])), shape=(200, 2**20)), np.eye(200, 2, dtype=np.int8))
    with pytest.raises(ValueError, match=r"a CSV of 200 rows x 1048578 columns holds at least 400 MiB .* over the "
                       r"readers' cap of 256 MiB .*; write .npz or LibSVM"):
        write_csv(wide, tmp_path / "wide.csv")
    assert not (tmp_path / "wide.csv").exists()
    write_npz(wide, tmp_path / "wide.npz")  # 1 stored value: a few hundred bytes
    assert (tmp_path / "wide.npz").stat().st_size < 10_000 and read_npz(tmp_path / "wide.npz").X.nnz == 1
    monkeypatch.setenv("MULTILABEL_CORE_MAX_BYTES", "100")
    with pytest.raises(ValueError, match="over the readers' cap of 100 bytes"):
        write_csv(Dataset(np.ones((10, 4)), np.ones((10, 2))), tmp_path / "small.csv")
