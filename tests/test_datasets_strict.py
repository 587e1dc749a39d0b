"""Strict parsing: blanks as the formats define them, no empty or repeated labels, ASCII digits
in the MEKA header, and a path that is not a regular file said to be what it is.

Each case here was read (or reported as "no such data file") before: NBSP, vertical tab and form
feed taken as separators, ``0,1, 1:0.5`` read as labels 0 and 1, ``0,0,1`` as 0 and 1, ``-C`` with
an Arabic-Indic two read as 2, and a directory, a FIFO, a symbolic link to /dev/zero and a
symbolic link loop all "no such data file".  The malformed-files corpus
(:mod:`multilabel_core.testing.malformed_files`) is kept by another suite; the new hostile files
are listed here, in its :class:`MalformedFile` form, and run the same way.
"""

from __future__ import annotations

import gzip
import os
import contextlib
import subprocess
import sys
import tempfile
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core.cli import main
from multilabel_core.datasets import DataFormatError, load_dataset, read_libsvm, read_meka, read_mulan
from multilabel_core.datasets.arff import meka_label_count
from multilabel_core.testing.malformed_files import ERROR, MULAN_XML, MalformedFile, write_case

MEKA_HEAD = "@relation 'r: -C 2'\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n@attribute f1 numeric\n@data\n"

# The whitespace characters other than space, tab and the line end that str.split() takes as blanks.
FOREIGN_BLANKS = {
    "\u00a0": "NO-BREAK SPACE (U+00A0)",
    "\x0b": "a vertical tab (U+000B)",
    "\x0c": "a form feed (U+000C)",
    "\x1c": "a file separator (U+001C)",
    "\x85": "a next-line character (U+0085)",
    "\u2003": "EM SPACE (U+2003)",
    "\u3000": "IDEOGRAPHIC SPACE (U+3000)",
}


def _write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


# ---------------------------------------------------------------- LibSVM: blanks


@pytest.mark.parametrize("blank", FOREIGN_BLANKS, ids=[f"U+{ord(c):04X}" for c in FOREIGN_BLANKS])
@pytest.mark.parametrize(
    "template, column",
    [("0{b}1:1\n", 2), ("0 1:1{b}2:1\n", 6), ("{b}1:1\n", 1), ("0 1:1{b}\n", 6)],
    ids=["after-labels", "between-features", "leading", "trailing"],
)
def test_libsvm_separates_fields_by_spaces_and_tabs_only(tmp_path, blank, template, column):
    path = _write(tmp_path, "d.svm", "1 1:2\n" + template.format(b=blank))
    with pytest.raises(DataFormatError) as raised:
        load_dataset(path)
    error = raised.value
    assert error.line == 2
    assert error.reason.startswith(f"holds {FOREIGN_BLANKS[blank]} at column {column}:"), error.reason
    assert "spaces and tabs only" in error.reason


def test_the_ascii_fast_path_knows_every_ascii_blank_the_full_scan_refuses():
    from multilabel_core.datasets import _files

    refused = [chr(c) for c in range(128) if _files._FOREIGN_BLANK.match(chr(c))]
    assert refused == sorted(_files._ASCII_FOREIGN_BLANKS)
    assert [chr(c) for c in range(128) if chr(c).isspace() and chr(c) not in " \t\n"] == refused


def test_libsvm_spaces_and_tabs_trailing_blanks_and_comments_stay_accepted(tmp_path):
    text = "0,2\t1:0.5  3:1 \n \t2:1\t\n1 1:1 # a comment may hold \u00a0, \x0b and \x0c\n"
    ds = load_dataset(_write(tmp_path, "d.svm", text), sparse=True)
    np.testing.assert_array_equal(ds.Y, [[1, 0, 1], [0, 0, 0], [0, 1, 0]])
    np.testing.assert_array_equal(ds.X.toarray(), [[0.5, 0, 1], [0, 1, 0], [1, 0, 0]])


# ---------------------------------------------------------------- LibSVM: label lists


@pytest.mark.parametrize("labels", ["0,1,", ",0", "0,,1", ",", "0,1,,"])
def test_an_empty_label_is_refused(tmp_path, labels):
    path = _write(tmp_path, "d.svm", f"0 1:1\n{labels} 1:0.5\n")
    with pytest.raises(DataFormatError, match=rf"line 2: the label list '{labels}' has an empty label"):
        read_libsvm(path)


@pytest.mark.parametrize("labels, repeated", [("0,0,1", 0), ("2,0,2", 2), ("1,3,5,3,1", 3)])
def test_a_label_listed_twice_is_refused_naming_line_and_label(tmp_path, labels, repeated):
    path = _write(tmp_path, "d.svm", f"0 1:1\n# a comment\n{labels} 1:0.5\n")
    with pytest.raises(DataFormatError, match=rf"line 3: label {repeated} is listed twice"):
        read_libsvm(path)


@st.composite
def label_rows(draw):
    """Rows of distinct labels in any order, and maybe one row with a label repeated."""
    n = draw(st.integers(1, 8))
    rows = [draw(st.permutations(draw(st.lists(st.integers(0, 6), unique=True, max_size=5)))) for _ in range(n)]
    repeat = draw(st.one_of(st.none(), st.integers(0, n - 1)))
    if repeat is not None and rows[repeat]:
        label = draw(st.sampled_from(rows[repeat]))
        position = draw(st.integers(0, len(rows[repeat])))
        rows[repeat] = rows[repeat][:position] + [label] + rows[repeat][position:]
    else:
        repeat = None
    separators = draw(st.lists(st.sampled_from([" ", "\t", "  ", " \t"]), min_size=n, max_size=n))
    return rows, repeat, separators


@given(label_rows())
def test_label_lists_read_as_sets_or_refused_at_the_first_repeat(case):
    rows, repeat, separators = case
    text = "".join(f"{','.join(map(str, row))}{sep}1:1\n" for row, sep in zip(rows, separators))
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "d.svm")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        if repeat is not None:
            seen, twice = set(), None
            for label in rows[repeat]:
                if label in seen:
                    twice = label
                    break
                seen.add(label)
            with pytest.raises(DataFormatError, match=rf"line {repeat + 1}: label {twice} is listed twice"):
                read_libsvm(path, n_labels=7)
            return
        ds = read_libsvm(path, n_labels=7)
    expected = np.zeros((len(rows), 7), dtype=np.int8)
    for i, row in enumerate(rows):
        expected[i, row] = 1
    np.testing.assert_array_equal(ds.Y, expected)


# ---------------------------------------------------------------- ARFF: blanks and the MEKA header


@pytest.mark.parametrize("blank", FOREIGN_BLANKS, ids=[f"U+{ord(c):04X}" for c in FOREIGN_BLANKS])
@pytest.mark.parametrize(
    "text, line",
    [
        (MEKA_HEAD.replace("@attribute l2", "@attribute{b}l2"), 3),
        (MEKA_HEAD.replace("f1 numeric", "f1{b}numeric"), 4),
        (MEKA_HEAD + "0,1,2\n0,1,{b}3\n", 7),
        (MEKA_HEAD + "{0 1,2{b}1.5}\n", 6),
    ],
    ids=["header-keyword", "header-type", "dense-row", "sparse-row"],
)
def test_arff_blanks_are_spaces_and_tabs_outside_quotes_and_comments(tmp_path, blank, text, line):
    path = _write(tmp_path, "d.arff", text.replace("{b}", blank))
    with pytest.raises(DataFormatError) as raised:
        read_meka(path)
    assert raised.value.line == line
    assert raised.value.reason.startswith(f"holds {FOREIGN_BLANKS[blank]} at column"), raised.value.reason


def test_arff_other_whitespace_inside_quotes_and_comments_is_text(tmp_path):
    text = (
        "% a comment with \u00a0, \x0b and \x0c\n@relation 'r: -C 2'\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n"
        "@attribute 'f\u00a01' numeric % \u2003\n@attribute g {'a\x0bb', \"c\x0cd\"}\n@data\n"
        "0,1,2,'a\x0bb'\n1,0,\t3 ,\"c\x0cd\" % \u3000\n"
    )
    ds = read_meka(_write(tmp_path, "d.arff", text))
    assert ds.feature_names == ("f\u00a01", "g=a\x0bb", "g=c\x0cd")
    np.testing.assert_array_equal(ds.X, [[2, 1, 0], [3, 0, 1]])


def test_mulan_arff_is_held_to_the_same_blanks(tmp_path):
    arff = tmp_path / "m.arff"
    arff.write_text("@relation r\n@attribute f1 numeric\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n@data\n1.5,0,1\n2,\x0c1,1\n")
    (tmp_path / "m.xml").write_bytes(MULAN_XML)
    with pytest.raises(DataFormatError, match=r"line 7: holds a form feed \(U\+000C\) at column 3"):
        read_mulan(arff)


@pytest.mark.parametrize(
    "option, reason",
    [
        ("-C \u0662", "writes its count with ARABIC-INDIC DIGIT TWO (U+0662); the count is written in ASCII digits 0-9"),
        ("-C \uff12", "writes its count with FULLWIDTH DIGIT TWO (U+FF12)"),
        ("-C -\u0967", "writes its count with DEVANAGARI DIGIT ONE (U+0967)"),
        ("-C 2\u0662", "writes its count with ARABIC-INDIC DIGIT TWO (U+0662)"),
        ("-C\u00a02", "separates '-C' from its count by NO-BREAK SPACE (U+00A0); only a space or a tab may"),
        ("-C two", "must be followed by a whole number of label attributes in ASCII digits 0-9"),
        ("-C", "has no count"),
        ("-C 2 -C \u0662", "writes its count with ARABIC-INDIC DIGIT TWO"),
    ],
)
def test_the_meka_label_count_is_ascii_digits(tmp_path, option, reason):
    path = _write(tmp_path, "d.arff", MEKA_HEAD.replace("-C 2", option) + "0,1,2\n")
    with pytest.raises(DataFormatError) as raised:
        read_meka(path)
    assert raised.value.line == 1
    assert raised.value.reason.startswith("the MEKA option '-C") and reason in raised.value.reason, raised.value.reason
    with pytest.raises(ValueError, match="the MEKA option"):
        meka_label_count(f"r: {option}")


@pytest.mark.parametrize("option, count", [("-C 2", 2), ("-C\t2", 2), ("-C  -1", -1), ("-C \u0662 -C 2", 2)])
def test_ascii_counts_after_spaces_or_tabs_are_read(tmp_path, option, count):
    assert meka_label_count(f"r: {option} -x 5") == count
    ds = read_meka(_write(tmp_path, "d.arff", MEKA_HEAD.replace("-C 2", option) + "0,1,1\n"))
    assert ds.n_labels == abs(count)


# ---------------------------------------------------------------- the same cases as corpus entries

STRICT_CASES = [
    MalformedFile("libsvm-nbsp-separator", "libsvm", "0\u00a01:1\n".encode(), ERROR),
    MalformedFile("libsvm-vertical-tab-separator", "libsvm", b"0\x0b1:1\n", ERROR),
    MalformedFile("libsvm-form-feed-separator", "libsvm", b"0 1:1\x0c2:1\n", ERROR),
    MalformedFile("libsvm-trailing-comma", "libsvm", b"0,1, 1:0.5\n", ERROR),
    MalformedFile("libsvm-leading-comma", "libsvm", b",0 1:0.5\n", ERROR),
    MalformedFile("libsvm-doubled-comma", "libsvm", b"0,,1 1:0.5\n", ERROR),
    MalformedFile("libsvm-duplicate-label", "libsvm", b"0,0,1 1:1\n", ERROR),
    MalformedFile("libsvm-nbsp-in-comment", "libsvm", "0 1:1 #\u00a0x\n1 2:1\n".encode(), (2, 2, 2)),
    MalformedFile("meka-arabic-digit-C", "meka", MEKA_HEAD.replace("-C 2", "-C \u0662").encode() + b"0,1,2\n", ERROR),
    MalformedFile("meka-nbsp-C", "meka", MEKA_HEAD.replace("-C 2", "-C\u00a02").encode() + b"0,1,2\n", ERROR),
    MalformedFile("meka-vertical-tab-row", "meka", MEKA_HEAD.encode() + b"0,1,\x0b2\n", ERROR),
    MalformedFile("meka-form-feed-header", "meka", MEKA_HEAD.replace("f1 numeric", "f1\x0cnumeric").encode() + b"0,1,2\n", ERROR),
    MalformedFile("meka-gz-nbsp-row", "meka.gz", gzip.compress(MEKA_HEAD.encode() + "0,1,\u00a02\n".encode()), ERROR),
    MalformedFile("mulan-nbsp-row", "mulan", b"@relation r\n@attribute f1 numeric\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n@data\n1.5,0,1\n2,1,\xc2\xa01\n", ERROR),
]


@pytest.mark.parametrize("case", STRICT_CASES, ids=[case.name for case in STRICT_CASES])
def test_strict_cases_as_corpus_entries(tmp_path, case):
    path = write_case(case, tmp_path / case.name)
    if case.expectation == ERROR:
        with pytest.raises(DataFormatError) as raised:
            load_dataset(path)
        assert str(raised.value).startswith(str(path))
    else:
        ds = load_dataset(path)
        assert (ds.n_samples, ds.n_features, ds.n_labels) == case.expectation


# ---------------------------------------------------------------- paths that are not regular files


def _fifo(folder):
    path = folder / "fifo.svm"
    os.mkfifo(path)
    return path


def _directory(folder):
    path = folder / "folder.svm"
    path.mkdir()
    return path


def _to_dev_zero(folder):
    path = folder / "zero.svm"
    path.symlink_to("/dev/zero")
    return path


def _loop(folder):
    path = folder / "loop.svm"
    path.symlink_to(path)
    return path


def _dangling(folder):
    path = folder / "dangling.svm"
    path.symlink_to(folder / "nowhere.svm")
    return path


NOT_FILES = {
    "directory": (_directory, "is a directory, not a data file"),
    "fifo": (_fifo, "is a FIFO (named pipe), not a regular file"),
    "symlink-to-dev-zero": (_to_dev_zero, "is a character device (through a symbolic link to '/dev/zero'), not a regular file"),
    "symlink-loop": (_loop, "is a symbolic link loop"),
    "dangling-symlink": (_dangling, "is a symbolic link to"),
}

_CHILD = r"""
import sys
from multilabel_core import datasets
try:
    getattr(datasets, sys.argv[1])(sys.argv[2])
except Exception as exc:
    print(type(exc).__name__, exc)
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and /dev/zero are POSIX")
@pytest.mark.parametrize("kind", NOT_FILES)
@pytest.mark.parametrize("reader", ["load_dataset", "read_libsvm"])
def test_a_path_that_is_not_a_regular_file_is_named_for_what_it_is(tmp_path, kind, reader):
    make, reason = NOT_FILES[kind]
    path = make(tmp_path)
    # In a child with a timeout: a reader that opened the FIFO would wait for a writer forever.
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, reader, str(path)], capture_output=True, text=True, timeout=60,
            cwd=tempfile.gettempdir(),
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{reader}({kind}) was still reading after 60 s")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"DataFormatError {path}: {reason}"), done.stdout
    assert "no such data file" not in done.stdout


@contextlib.contextmanager
def _rescued(fifos, after: float = 20.0):
    """A reader blocked on one of ``fifos`` gets end-of-file after ``after`` seconds: it fails, never hangs."""
    done = threading.Event()

    def rescue():
        while not done.wait(after):
            for fifo in fifos:
                with contextlib.suppress(OSError):  # ENXIO: nobody is reading it
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    thread = threading.Thread(target=rescue, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_is_refused_by_every_reader_and_by_the_cli(tmp_path, capsys):
    fifos = [tmp_path / name for name in ("f.arff", "f.svm.gz", "f.xml")]
    for fifo in fifos:
        os.mkfifo(fifo)
    (tmp_path / "m.arff").write_text("@relation r\n@attribute f1 numeric\n@attribute l1 {0,1}\n@data\n1,0\n")
    with _rescued(fifos):
        with pytest.raises(DataFormatError, match=r"f\.arff: is a FIFO"):
            read_meka(tmp_path / "f.arff")
        with pytest.raises(DataFormatError, match=r"f\.svm\.gz: is a FIFO"):
            read_libsvm(tmp_path / "f.svm.gz")
        with pytest.raises(DataFormatError, match=r"f\.xml: is a FIFO"):
            read_mulan(tmp_path / "m.arff", tmp_path / "f.xml")
        assert main(["describe", str(tmp_path / "f.arff")]) != 0
    err = capsys.readouterr().err
    assert "is a FIFO (named pipe), not a regular file" in err and len(err.strip().splitlines()) == 1, err


def test_a_missing_file_is_still_no_such_data_file(tmp_path):
    with pytest.raises(ValueError, match="no such data file"):
        load_dataset(tmp_path / "absent.svm")
    with pytest.raises(FileNotFoundError):
        read_libsvm(tmp_path / "absent.svm")


# -- a LibSVM Y held dense must not be mostly declared width ----------------------------------


def _wide_rows(n_rows: int, width: int, per_row: int) -> bytes:
    """``n_rows`` lines of ``per_row`` labels each, the last row naming label ``width - 1``."""
    lines = []
    for i in range(n_rows):
        labels = [(i * per_row + k) % (width - 1) for k in range(per_row)]
        labels = sorted(set(labels))
        if i == n_rows - 1:
            labels = sorted(set(labels[:-1]) | {width - 1})
        lines.append(",".join(map(str, labels)) + " 1:1")
    return ("\n".join(lines) + "\n").encode()


def test_ten_lines_of_the_widest_label_are_refused_by_the_rule_not_by_the_cap(tmp_path, monkeypatch):
    from multilabel_core.datasets import MAX_BYTES_ENV
    from multilabel_core.datasets.libsvm import DENSE_Y_FLOOR, DENSE_Y_PER_STORED

    monkeypatch.delenv(MAX_BYTES_ENV, raising=False)
    path = tmp_path / "f10.svm"
    path.write_bytes(b"16777215 1:1\n" * 10)
    cells, stored = 10 * 2**24, 10 + 10
    assert cells > DENSE_Y_FLOOR and cells > DENSE_Y_PER_STORED * stored and cells < 256 * 2**20  # under the cap
    with pytest.raises(DataFormatError, match=r"line 1: label 16777215 sets the width: .*160 MiB .* 10 relevant label"
                                              r".*cells per stored value; pass max_bytes="):  # fmt: skip
        read_libsvm(path)
    # A cap of the caller's own replaces the rule: the dense Y is what was asked for.
    assert read_libsvm(path, max_bytes=256 * 2**20).Y.shape == (10, 2**24)
    monkeypatch.setenv(MAX_BYTES_ENV, str(256 * 2**20))
    assert load_dataset(path).Y.shape == (10, 2**24)


@pytest.mark.parametrize(
    "n_rows, width, per_row, loads",
    [
        (2, 2**24, 1, True),  # exactly the floor (32 MiB): a width case of the corpus, loads
        (3, 2**24, 1, False),  # over the floor with 3 relevant labels for 50M cells
        (40, 2**20, 300, True),  # 42M cells over the floor, 12,040 stored values: 3,483 cells per stored value
        (40, 2**20, 200, False),  # the same cells for 8,040 stored values: 5,216 per stored value
    ],
)
def test_the_dense_label_rule_is_the_floor_and_the_ratio(tmp_path, monkeypatch, n_rows, width, per_row, loads):
    from multilabel_core.datasets import MAX_BYTES_ENV
    from multilabel_core.datasets.libsvm import DENSE_Y_FLOOR, DENSE_Y_PER_STORED

    monkeypatch.delenv(MAX_BYTES_ENV, raising=False)
    path = tmp_path / "wide.svm"
    path.write_bytes(_wide_rows(n_rows, width, per_row))
    cells, stored = n_rows * width, n_rows * per_row + n_rows
    assert loads == (cells <= DENSE_Y_FLOOR or cells <= DENSE_Y_PER_STORED * stored)
    if loads:
        ds = read_libsvm(path, sparse=True)
        assert ds.Y.shape == (n_rows, width) and int(ds.Y.sum()) == n_rows * per_row
    else:
        with pytest.raises(DataFormatError, match="cells per stored value"):
            read_libsvm(path, sparse=True)
