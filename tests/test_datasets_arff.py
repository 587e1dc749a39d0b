"""Mulan and MEKA ARFF reading: syntax, encodings, and located errors for bad files."""

from __future__ import annotations

import gzip
import re

import numpy as np
import pytest
import scipy.sparse as sp

from multilabel_core.datasets import DataFormatError, read_meka, read_mulan, write_mulan
from multilabel_core.datasets.arff import meka_label_count

XML = """<?xml version="1.0" encoding="utf-8"?>
<labels xmlns="http://mulan.sourceforge.net/labels">
{}
</labels>
"""


def mulan_files(tmp_path, arff: str, labels=("l1", "l2"), *, name="data", xml: str | None = None):
    arff_path = tmp_path / f"{name}.arff"
    arff_path.write_text(arff)
    xml_path = tmp_path / f"{name}.xml"
    if xml is None:
        xml = XML.format("\n".join(f'<label name="{label}"></label>' for label in labels))
    xml_path.write_text(xml)
    return arff_path, xml_path


DENSE = """% a comment before the header
@RELATION test
@attribute f1 NUMERIC % a comment after an attribute
@Attribute l1 {0,1}
@attribute 'f 2' real
% a comment among the attributes
@attribute "f'3" integer
@attribute l2 {0, 1}

@DATA
1.5,1,2,3,0 % a comment after a row
% a comment among the rows

-1e-3,0,0.25,4,1
"""


def test_dense_rows_labels_matched_by_name_anywhere(tmp_path):
    ds = read_mulan(*mulan_files(tmp_path, DENSE))
    assert ds.feature_names == ("f1", "f 2", "f'3")
    assert ds.label_names == ("l1", "l2")
    np.testing.assert_array_equal(ds.X, [[1.5, 2, 3], [-1e-3, 0.25, 4]])
    np.testing.assert_array_equal(ds.Y, [[1, 0], [0, 1]])
    assert ds.X.dtype == np.float64 and ds.Y.dtype == np.int8
    assert ds.name == "data"


def test_label_order_follows_the_arff_not_the_xml(tmp_path):
    ds = read_mulan(*mulan_files(tmp_path, DENSE, labels=("l2", "l1")))
    assert ds.label_names == ("l1", "l2")


def test_sibling_xml_is_found(tmp_path):
    arff_path, _ = mulan_files(tmp_path, DENSE)
    assert read_mulan(arff_path).n_labels == 2


def test_sparse_rows_give_csr(tmp_path):
    text = "@relation s\n@attribute a numeric\n@attribute b numeric\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n@data\n"
    text += "{0 2.5,3 1}\n{}\n{ 1 -1 , 2 1 }\n"
    ds = read_mulan(*mulan_files(tmp_path, text), sparse=True)
    assert sp.isspmatrix_csr(ds.X) and ds.X.dtype == np.float64
    np.testing.assert_array_equal(ds.X.toarray(), [[2.5, 0], [0, 0], [0, -1]])
    np.testing.assert_array_equal(ds.Y, [[0, 1], [0, 0], [1, 0]])


NOMINAL = """@relation n
@attribute colour {red, 'dark blue', green}
@attribute size numeric
@attribute l1 {0,1}
@data
red,1,1
'dark blue',2,0
green,3,1
"""


def test_nominal_features_onehot_by_default(tmp_path):
    ds = read_mulan(*mulan_files(tmp_path, NOMINAL, labels=("l1",)))
    assert ds.feature_names == ("colour=red", "colour=dark blue", "colour=green", "size")
    np.testing.assert_array_equal(ds.X, [[1, 0, 0, 1], [0, 1, 0, 2], [0, 0, 1, 3]])
    (feature,) = ds.nominal_features
    assert (feature.name, feature.values, feature.columns, feature.encoding) == (
        "colour", ("red", "dark blue", "green"), (0, 1, 2), "onehot",
    )


def test_nominal_features_ordinal(tmp_path):
    ds = read_mulan(*mulan_files(tmp_path, NOMINAL, labels=("l1",)), nominal="ordinal")
    assert ds.feature_names == ("colour", "size")
    np.testing.assert_array_equal(ds.X[:, 0], [0, 1, 2])
    assert ds.nominal_features[0].encoding == "ordinal"


def test_sparse_absent_nominal_means_first_value(tmp_path):
    text = "@relation n\n@attribute c {a,b}\n@attribute x numeric\n@attribute l1 {0,1}\n@data\n{1 5}\n{0 b,2 1}\n"
    ds = read_mulan(*mulan_files(tmp_path, text, labels=("l1",)), sparse=True)
    np.testing.assert_array_equal(ds.X.toarray(), [[1, 0, 5], [0, 1, 0]])


def test_quoted_values_and_escapes_in_rows(tmp_path):
    text = (
        "@relation q\n@attribute c {'it\\'s', \"a%b\"}\n@attribute l1 {0,1}\n"
        "@data\n'it\\'s',1\n\"a%b\",0 % the second row\n{0 'a%b'}\n"
    )
    with pytest.raises(DataFormatError, match="mixes dense and sparse"):
        read_mulan(*mulan_files(tmp_path, text, labels=("l1",)))
    ds = read_mulan(*mulan_files(tmp_path, text.rsplit("{", 1)[0], labels=("l1",)))
    assert ds.feature_names == ("c=it's", "c=a%b")
    np.testing.assert_array_equal(ds.X, [[1, 0], [0, 1]])


def test_gzip_for_arff_and_xml(tmp_path):
    arff_path, xml_path = mulan_files(tmp_path, DENSE)
    for path in (arff_path, xml_path):
        with gzip.open(f"{path}.gz", "wt") as handle:
            handle.write(path.read_text())
    ds = read_mulan(tmp_path / "data.arff.gz", tmp_path / "data.xml.gz")
    np.testing.assert_array_equal(ds.Y, [[1, 0], [0, 1]])


def test_crlf_line_ends(tmp_path):
    arff_path, xml_path = mulan_files(tmp_path, "")
    arff_path.write_bytes(DENSE.replace("\n", "\r\n").encode())
    assert read_mulan(arff_path, xml_path).n_samples == 2


@pytest.mark.parametrize(
    "relation, count",
    [("'scene: -C 6'", 6), ("'Yeast: -C -14 -split-percentage 67'", -14), ('"x -C 2"', 2), ("plain", None)],
)
def test_meka_relation_option(relation, count):
    assert meka_label_count(relation.strip("'\"")) == count


def test_read_meka_first_and_last_labels(tmp_path):
    body = "@attribute a {0,1}\n@attribute b numeric\n@attribute c {0,1}\n@data\n1,2.5,0\n0,-1,1\n"
    first = tmp_path / "first.arff"
    first.write_text("@relation 'first: -C 1'\n" + body)
    last = tmp_path / "last.arff"
    last.write_text("@relation 'last: -C -1 -other option'\n" + body)
    ds = read_meka(first)
    assert ds.label_names == ("a",) and ds.feature_names == ("b", "c")
    np.testing.assert_array_equal(ds.X, [[2.5, 0], [-1, 1]])
    ds = read_meka(last)
    assert ds.label_names == ("c",) and ds.feature_names == ("a", "b")
    np.testing.assert_array_equal(ds.X, [[1, 2.5], [0, -1]])


# ------------------------------------------------------------------ located errors


def assert_located(exc_info, path, line, reason):
    message = str(exc_info.value)
    assert str(path) in message
    assert (f"line {line}:" in message) if line is not None else ("line" not in message.split(":")[0])
    assert re.search(reason, message), message
    assert isinstance(exc_info.value, ValueError)


HEADER = "@relation t\n@attribute f1 numeric\n@attribute f2 numeric\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n@data\n"


@pytest.mark.parametrize(
    "rows, line, reason",
    [
        ("1,2,0,1\n3,4,1\n", 8, r"expected 4 values, found 3 \(truncated row\?\)"),
        ("1,2,0,1,5\n", 7, "expected 4 values, found 5"),
        ("1,2,0,2\n", 7, "label 'l2' has value '2'; labels must be 0 or 1"),
        ("1,x,0,1\n", 7, "attribute 'f2': 'x' is not a finite number"),
        ("1,?,0,1\n", 7, "missing value '\\?'"),
        ("1,nan,0,1\n", 7, "not a finite number"),
        ("{0 1,1 2}\n{0 1,7 1}\n", 8, "sparse index 7 is out of range"),
        ("{0 1,1 2}\n{0 1,1 1\n", 8, r"no closing '\}' \(truncated row\?\)"),
        ("{1 1,0 2}\n", 7, "strictly increasing"),
        ("{0 1,1}\n", 7, "'index value' pairs"),
        ("1,2,0,1\n{0 1}\n", 8, "mixes dense and sparse"),
    ],
)
def test_bad_rows_raise_with_file_line_and_reason(tmp_path, rows, line, reason):
    arff_path, xml_path = mulan_files(tmp_path, HEADER + rows)
    with pytest.raises(DataFormatError) as exc_info:
        read_mulan(arff_path, xml_path)
    assert_located(exc_info, arff_path, line, reason)


def test_non_binary_nominal_label_value(tmp_path):
    text = HEADER.replace("@attribute l2 {0,1}", "@attribute l2 {0,1,2}") + "1,2,0,2\n"
    arff_path, xml_path = mulan_files(tmp_path, text)
    with pytest.raises(DataFormatError) as exc_info:
        read_mulan(arff_path, xml_path)
    assert_located(exc_info, arff_path, 7, "labels must be 0 or 1")


def test_unknown_nominal_value(tmp_path):
    arff_path, xml_path = mulan_files(tmp_path, NOMINAL.replace("green,3", "purple,3"), labels=("l1",))
    with pytest.raises(DataFormatError) as exc_info:
        read_mulan(arff_path, xml_path)
    assert_located(exc_info, arff_path, 8, "unknown nominal value 'purple'")


def test_unknown_label_name_in_xml(tmp_path):
    arff_path, xml_path = mulan_files(tmp_path, DENSE, labels=("l1", "nope"))
    with pytest.raises(DataFormatError) as exc_info:
        read_mulan(arff_path, xml_path)
    assert_located(exc_info, xml_path, 4, "label 'nope' is not an attribute of")


@pytest.mark.parametrize(
    "header, line, reason",
    [
        ("@relation t\n@attribute f1 numeric\n@attribute f1 numeric\n@data\n", 3, "declared twice"),
        ("@relation t\n@attribute f1 string\n@data\n", 2, "only numeric and nominal"),
        ("@relation t\n@attribute f1 bogus\n@data\n", 2, "unknown type"),
        ("@relation t\n@attribute f1 {a,b\n@data\n", 2, "missing closing"),
        ("@relation t\n@attribute 'f1 numeric\n@data\n", 2, "unterminated quoted name"),
        ("@relation t\nf1 numeric\n@data\n", 2, "expected @relation, @attribute or @data"),
        ("@relation t\n@attribute l1 {0,1}\n", None, "no @data section"),
        ("@relation t\n@attribute f1 numeric\n@attribute l1 {0,1}\n@data\n", None, "holds no rows"),
        ("@relation t\n@attribute f1 numeric\n@attribute l1 {no,yes}\n@data\n1,yes\n", 3, "must be numeric or nominal"),
    ],
)
def test_bad_headers(tmp_path, header, line, reason):
    arff_path, xml_path = mulan_files(tmp_path, header, labels=("l1",))
    with pytest.raises(DataFormatError) as exc_info:
        read_mulan(arff_path, xml_path)
    assert_located(exc_info, arff_path, line, reason)


@pytest.mark.parametrize(
    "xml, line, reason",
    [
        ('<labels xmlns="http://mulan.sourceforge.net/labels">\n<label name="l1">\n</labels>\n', 3, "malformed XML"),
        ("<other>\n</other>\n", 1, "not <labels>"),
        ('<labels>\n<label/>\n</labels>\n', 2, "without a name"),
        ("<labels>\n</labels>\n", None, "no <label> elements"),
        ('<labels>\n<label name="l1"/>\n<label name="l1"/>\n</labels>\n', 3, "declared twice"),
    ],
)
def test_bad_xml(tmp_path, xml, line, reason):
    arff_path, xml_path = mulan_files(tmp_path, DENSE, xml=xml)
    with pytest.raises(DataFormatError) as exc_info:
        read_mulan(arff_path, xml_path)
    assert_located(exc_info, xml_path, line, reason)


def test_meka_without_class_option(tmp_path):
    path = tmp_path / "m.arff"
    path.write_text("@relation plain\n@attribute a numeric\n@attribute b {0,1}\n@data\n1,0\n")
    with pytest.raises(DataFormatError) as exc_info:
        read_meka(path)
    assert_located(exc_info, path, 1, "no MEKA '-C L' option")
    path.write_text("@relation 'm: -C 5'\n@attribute a numeric\n@attribute b {0,1}\n@data\n1,0\n")
    with pytest.raises(DataFormatError, match="between 1 and 1 label attributes"):
        read_meka(path)


def test_bad_nominal_option(tmp_path):
    with pytest.raises(ValueError, match="nominal must be one of"):
        read_mulan(*mulan_files(tmp_path, DENSE), nominal="binary")


def test_writer_refuses_a_name_used_by_a_feature_and_a_label(tmp_path):
    ds = read_mulan(*mulan_files(tmp_path, DENSE))
    from multilabel_core.datasets import Dataset

    clash = Dataset(ds.X, ds.Y, ("f1", "l1", "f3"), ds.label_names)
    with pytest.raises(ValueError, match="'l1' names two attributes"):
        write_mulan(clash, tmp_path / "out.arff")


# ------------------------------------------------------------------ 0/1 nominal attributes

BINARY = """@relation b
@attribute w1 {0,1}
@attribute w2 {1,0}
@attribute w3 {'0','1'}
@attribute w4 { 1 , 0 }
@attribute x numeric
@attribute l1 {0,1}
@data
"""


@pytest.mark.parametrize("nominal", ["onehot", "ordinal"])
def test_binary_nominal_is_one_column_holding_its_value(tmp_path, nominal):
    rows = "1,1,1,1,2.5,1\n0,0,0, 0,0,0\n0,1,'1',1,-1,1\n"
    ds = read_mulan(*mulan_files(tmp_path, BINARY + rows, labels=("l1",)), nominal=nominal)
    assert ds.feature_names == ("w1", "w2", "w3", "w4", "x")
    np.testing.assert_array_equal(ds.X, [[1, 1, 1, 1, 2.5], [0, 0, 0, 0, 0], [0, 1, 1, 1, -1]])
    assert [(f.name, f.values, f.columns, f.encoding) for f in ds.nominal_features] == [
        ("w1", ("0", "1"), (0,), "binary"),
        ("w2", ("1", "0"), (1,), "binary"),
        ("w3", ("0", "1"), (2,), "binary"),
        ("w4", ("1", "0"), (3,), "binary"),
    ]


def test_binary_nominal_in_sparse_rows(tmp_path):
    """An absent entry is the first declared value: 0 for {0,1}, but 1 for {1,0}."""
    rows = "{0 1,4 2.5,5 1}\n{}\n{1 0,2 1,3 1}\n{0 0,1 1,3 0}\n"
    ds = read_mulan(*mulan_files(tmp_path, BINARY + rows, labels=("l1",)), sparse=True)
    assert sp.isspmatrix_csr(ds.X)
    np.testing.assert_array_equal(
        ds.X.toarray(), [[1, 1, 0, 1, 2.5], [0, 1, 0, 1, 0], [0, 0, 1, 1, 0], [0, 1, 0, 0, 0]]
    )
    np.testing.assert_array_equal(ds.Y.ravel(), [1, 0, 0, 0])
    # Row 3's explicit "0 0" is not stored: the non-zeros of w1, w3 and x are 1, 2.5 and 1.
    assert ds.X[:, [0, 2, 4]].nnz == 3


def test_other_nominal_attributes_keep_their_encoding(tmp_path):
    text = (
        "@relation o\n@attribute a {0,1,2}\n@attribute b {yes,no}\n@attribute c {1}\n@attribute d {0.0,1.0}\n"
        "@attribute l1 {0,1}\n@data\n2,no,1,1.0,1\n0,yes,1,0.0,0\n"
    )
    ds = read_mulan(*mulan_files(tmp_path, text, labels=("l1",)))
    assert ds.feature_names == ("a=0", "a=1", "a=2", "b=yes", "b=no", "c=1", "d=0.0", "d=1.0")
    assert {f.encoding for f in ds.nominal_features} == {"onehot"}
    np.testing.assert_array_equal(ds.X, [[0, 0, 1, 0, 1, 1, 0, 1], [1, 0, 0, 1, 0, 1, 1, 0]])


@pytest.mark.parametrize(
    "rows, line, reason",
    [
        ("1,0,0,1,2,1\n1,0,2,1,2,1\n", 10, "attribute 'w3': unknown nominal value '2' \\(declared: 0, 1\\)"),
        ("1,0,?,1,2,1\n", 9, "attribute 'w3': missing value"),
        ("{0 1}\n{2 x}\n", 10, "attribute 'w3': unknown nominal value 'x'"),
        ("1,0,0,1.0,2,1\n", 9, "attribute 'w4': unknown nominal value '1.0'"),
        ("1,0,0,1,2,2\n", 9, "label 'l1' has value '2'"),
    ],
)
def test_binary_nominal_bad_value_is_located(tmp_path, rows, line, reason):
    arff_path, xml_path = mulan_files(tmp_path, BINARY + rows, labels=("l1",))
    with pytest.raises(DataFormatError) as exc_info:
        read_mulan(arff_path, xml_path)
    assert_located(exc_info, arff_path, line, reason)


def test_binary_features_written_back_as_declared(tmp_path):
    rows = "1,1,1,1,2.5,1\n0,0,0,0,0,0\n"
    ds = read_mulan(*mulan_files(tmp_path, BINARY + rows, labels=("l1",)))
    for sparse in (False, True):
        out = tmp_path / f"out{sparse}.arff"
        write_mulan(ds, out, sparse=sparse)
        declared = [line.split()[-1] for line in out.read_text().splitlines() if line.startswith("@attribute")]
        assert declared == ["{0,1}", "{1,0}", "{0,1}", "{1,0}", "numeric", "{0,1}"]
        back = read_mulan(out, sparse=sparse)
        assert back.nominal_features == ds.nominal_features
        np.testing.assert_array_equal(back.X.toarray() if sparse else back.X, ds.X)


@pytest.mark.parametrize("column", [0, 1])
def test_writer_refuses_a_binary_column_holding_another_value(tmp_path, column):
    from multilabel_core.datasets import Dataset, NominalFeature

    X = np.array([[0.0, 1.0], [1.0, 0.0]])
    X[1, column] = 0.5
    features = [NominalFeature("w1", ("0", "1"), (0,), "binary"), NominalFeature("w2", ("1", "0"), (1,), "binary")]
    for given in (X, sp.csr_matrix(X)):
        ds = Dataset(given, [[0], [1]], ("w1", "w2"), ("l1",), nominal_features=features)
        with pytest.raises(ValueError, match=f"nominal feature 'w{column + 1}': row 1 does not encode"):
            write_mulan(ds, tmp_path / "out.arff")


def test_binary_feature_record_needs_the_values_0_and_1():
    from multilabel_core.datasets import NominalFeature

    with pytest.raises(ValueError, match="needs the values '0' and '1'"):
        NominalFeature("w", ("0", "2"), (0,), "binary")


# ------------------------------------------------------------------ sparse or dense X

SPARSE_HEADER = (
    "@relation s\n" + "".join(f"@attribute a{j} numeric\n" for j in range(10)) + "@attribute l1 {0,1}\n@data\n"
)


def sparse_rows(stored_per_row: int) -> str:
    """Four sparse rows of 10 features, each storing the first ``stored_per_row`` ones."""
    entries = ",".join(f"{j} {j + 1}" for j in range(stored_per_row))
    return "".join(f"{{{entries}{',' if entries else ''}10 1}}\n" for _ in range(4))


@pytest.mark.parametrize("stored, auto_sparse", [(0, True), (1, True), (3, True), (4, False), (10, False)])
def test_auto_densifies_a_sparse_file_above_the_threshold(tmp_path, stored, auto_sparse):
    """DENSE_ABOVE = 0.3: 3 of 10 features stored stays CSR, 4 of 10 comes back dense."""
    from multilabel_core.datasets import DENSE_ABOVE

    assert DENSE_ABOVE == 0.3
    files = mulan_files(tmp_path, SPARSE_HEADER + sparse_rows(stored), labels=("l1",))
    auto = read_mulan(*files)
    assert sp.issparse(auto.X) == auto_sparse
    assert sp.isspmatrix_csr(read_mulan(*files, sparse=True).X)
    dense = read_mulan(*files, sparse=False).X
    assert isinstance(dense, np.ndarray)
    expected = np.zeros((4, 10))
    expected[:, :stored] = np.arange(1, stored + 1)
    np.testing.assert_array_equal(dense, expected)
    np.testing.assert_array_equal(auto.X.toarray() if auto_sparse else auto.X, expected)


def test_a_dense_file_stays_dense_under_auto(tmp_path):
    text = SPARSE_HEADER + "".join("1" + ",0" * 9 + ",1\n" for _ in range(3))
    files = mulan_files(tmp_path, text, labels=("l1",))
    assert isinstance(read_mulan(*files).X, np.ndarray)
    X = read_mulan(*files, sparse=True).X
    assert sp.isspmatrix_csr(X) and X.nnz == 3


@pytest.mark.parametrize("bad", ["yes", "True", None, 1, 0.5])
def test_bad_sparse_option(tmp_path, bad):
    files = mulan_files(tmp_path, SPARSE_HEADER + sparse_rows(1), labels=("l1",))
    meka = tmp_path / "m.arff"
    meka.write_text("@relation 'm: -C 1'\n@attribute l {0,1}\n@attribute a numeric\n@data\n1,2\n")
    for read in (lambda: read_mulan(*files, sparse=bad), lambda: read_meka(meka, sparse=bad)):
        with pytest.raises(ValueError, match="sparse must be 'auto', True or False, got"):
            read()
