"""A fixed corpus of hostile and malformed data files, for the loaders' tests and fuzz suites.

Every case is a :class:`MalformedFile` ``(name, format, data, expectation)``:

- ``format``: ``"libsvm"``, ``"meka"`` (ARFF whose relation carries ``-C L``), ``"mulan"``
  (``data`` is the ARFF file, :data:`MULAN_XML` its label file), ``"mulan-xml"`` (``data``
  is the XML label file, :data:`MULAN_ARFF` the ARFF file), ``"csv"`` (label columns named
  ``label:NAME``, the reader's default rule) or ``"npz"`` (a zip of ``.npy`` members, built
  here byte by byte so that sizes, methods and headers can lie); a ``".gz"`` suffix means
  ``data`` is gzipped and written to a ``.gz`` file;
- ``expectation``: :data:`ERROR` when the loader must raise
  :class:`~multilabel_core.datasets.DataFormatError`, else the ``(n_samples, n_features,
  n_labels)`` of the dataset it must return (default arguments of ``load_dataset``).

No other outcome is acceptable: no other exception type, no memory blow-up.  :data:`WIDTH_CASES`
names the cases that load with a declared width (a million columns or more from a few bytes):
the commands that use the data (``mlcore describe``, ``fit``, ``evaluate``, ``compare``,
``predict``) must not pay for that width either.  The gzip bombs
are a few hundred kilobytes that decompress to :data:`BOMB_BYTES` (more than the loaders'
default cap on decompressed text), the ``.npz`` one a member that inflates as much; they are
built here in a few milliseconds, never stored.

    from multilabel_core.testing.malformed_files import CASES, write_case
    for case in CASES:
        path = write_case(case, tmp_path / case.name)
        ...  # load_dataset(path) raises DataFormatError or has the expected shape
"""

from __future__ import annotations

import gzip
import struct
import zlib
from pathlib import Path
from typing import NamedTuple

__all__ = [
    "BOMB_BYTES", "CASES", "ERROR", "MULAN_ARFF", "MULAN_XML", "WIDE", "WIDTH_CASES", "MalformedFile", "gzip_bomb",
    "write_case",
]

ERROR = "error"
BOM = b"\xef\xbb\xbf"
# Above the loaders' default cap on decompressed text (256 MiB), as the red-team bomb was.
BOMB_BYTES = 320 * 2**20

MULAN_XML = (
    b'<?xml version="1.0" encoding="utf-8"?>\n'
    b'<labels xmlns="http://mulan.sourceforge.net/labels">\n'
    b'<label name="l1"></label>\n<label name="l2"></label>\n</labels>\n'
)
MULAN_ARFF = b"@relation r\n@attribute f1 numeric\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n@data\n1.5,0,1\n2,1,1\n"


class MalformedFile(NamedTuple):
    """One malformed or hostile data file and what a loader must do with it.

    Parameters
    ----------
    name : str
        The case's name (a folder name for :func:`write_case`).
    format : str
        ``"libsvm"``, ``"meka"``, ``"mulan"``, ``"mulan-xml"``, ``"csv"`` or ``"npz"``, with a
        ``".gz"`` suffix when ``data`` is gzipped (see the module docstring).
    data : bytes
        The file's bytes.
    expectation : str or tuple of int
        :data:`ERROR` when the loader must raise
        :class:`~multilabel_core.datasets.DataFormatError`, else the ``(n_samples,
        n_features, n_labels)`` of the dataset it must return.
    """

    name: str
    format: str
    data: bytes
    expectation: str | tuple[int, int, int]


def gzip_bomb(total: int, unit: bytes, head: bytes = b"") -> bytes:
    """Build a gzip file of ``head`` then ``unit`` repeated up to ``total`` bytes.

    Every MiB is deflated after a full flush, which resets the compressor's window, so the
    compressed block of one MiB is the same each time and is simply repeated: a few hundred
    kilobytes hold hundreds of megabytes without ever building them.

    Parameters
    ----------
    total : int
        The decompressed size in bytes, a multiple of 1 MiB.
    unit : bytes
        The repeated content.
    head : bytes, default=b""
        What the decompressed text starts with (e.g. a header line).

    Returns
    -------
    bytes
        The gzip file.
    """
    chunk = (unit * (2**20 // len(unit) + 1))[: 2**20]
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = compressor.compress(head) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    count = total // len(chunk)
    crc = zlib.crc32(head)
    for _ in range(count):
        crc = zlib.crc32(chunk, crc)
    size = (len(head) + count * len(chunk)) & 0xFFFFFFFF
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    return header + first + block * count + compressor.flush() + struct.pack("<II", crc, size)


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def _corrupt_gz(data: bytes) -> bytes:
    packed = bytearray(_gz(data))
    middle = len(packed) // 2
    packed[middle:middle + 4] = b"\xff\xff\xff\xff"
    return bytes(packed)


_LIBSVM_OK = b"0,2 1:0.5 3:1\n1 2:1\n"
_MEKA_HEAD = (
    b"@relation 'r: -C 2'\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n"
    b"@attribute f1 numeric\n@attribute f2 numeric\n@data\n"
)
_MEKA_OK = _MEKA_HEAD + b"0,1,0.5,2\n1,1,-1,3\n"
_MEKA_SPARSE_OK = _MEKA_HEAD + b"{0 1,2 1.5}\n{1 1,3 2}\n"
_JUNK = bytes(range(256)) * 4
_DIGITS31 = b"1234567890123456789012345678901"


def _libsvm() -> list[MalformedFile]:
    cases = [
        ("empty", b"", ERROR),
        ("only-comments", b"# nothing\n\n   \n", ERROR),
        ("binary-junk", _JUNK, ERROR),
        ("nul-byte", b"0 1:1\x00\n", ERROR),
        ("utf16", "0 1:1\n".encode("utf-16"), ERROR),
        ("valid", _LIBSVM_OK, (2, 3, 3)),
        ("crlf", b"0 1:1\r\n1 2:2\r\n", (2, 2, 2)),
        ("lone-cr", b"0 1:1\r1 2:2\r", (2, 2, 2)),
        ("bom", BOM + b"0 1:1\n1 2:1\n", (2, 2, 2)),
        ("bom-only", BOM, ERROR),
        ("tabs", b"0\t1:1\t2:1\n1\t2:1\n", (2, 2, 2)),
        ("trailing-comment", b"0 1:1 # x:y\n1 2:1#z\n", (2, 2, 2)),
        ("huge-feature-index", b"0 100000000:1\n", ERROR),
        ("feature-index-at-limit", b"0 16777216:1\n", (1, 2**24, 1)),
        # Declared widths that load (the commands that use the data must not pay for them): the label
        # matrix, the features, both, and enough rows and labels of both classes for a fit to start.
        ("label-width", b"16777215 1:1\n", (1, 1, 2**24)),
        ("label-width-two-rows", b"0 1:1\n16777215 2:1\n", (2, 2, 2**24)),
        ("label-and-feature-width", b"16777215 16777216:1\n", (1, 2**24, 2**24)),
        ("feature-width-rows", b"0 1:1\n1 16777216:1\n" * 10, (20, 2**24, 2)),
        ("feature-index-above-limit", b"0 16777217:1\n", ERROR),
        ("huge-label", b"1000000000 1:1\n", ERROR),
        ("label-above-limit", b"16777216 1:1\n", ERROR),
        ("many-rows-of-widest-label", b"16777215 1:1\n" * 200, ERROR),
        ("31-digit-feature-index", b"0 " + _DIGITS31 + b":1\n", ERROR),
        ("31-digit-label", _DIGITS31 + b" 1:1\n", ERROR),
        ("5000-digit-label", b"9" * 5000 + b" 1:1\n", ERROR),
        ("superscript-feature-index", "0 ²:1\n".encode(), ERROR),
        ("superscript-label", "² 1:1\n".encode(), ERROR),
        ("arabic-digit-feature-index", "0 \u0661:1\n".encode(), ERROR),
        ("arabic-digit-label", "\u0661 1:1\n".encode(), ERROR),
        ("arabic-digit-value", "0 1:\u0661\n".encode(), ERROR),
        ("fullwidth-digit-value", "0 1:\uff11\n".encode(), ERROR),
        ("underscore-index", b"0 1_0:1\n", ERROR),
        ("underscore-value", b"0 1:1_0\n", ERROR),
        ("plus-index", b"0 +1:1\n", ERROR),
        ("hex-index", b"0 0x1:1\n", ERROR),
        ("float-index", b"0 1.5:1\n", ERROR),
        ("zero-index", b"0 0:1\n", ERROR),
        ("negative-index", b"0 -1:1\n", ERROR),
        ("negative-label", b"-1 1:1\n", ERROR),
        ("float-label", b"1.5 1:1\n", ERROR),
        ("unsorted-indices", b"0 3:1 2:1\n", ERROR),
        ("duplicate-indices", b"0 2:1 2:1\n", ERROR),
        ("nan-value", b"0 1:nan\n", ERROR),
        ("inf-value", b"0 1:inf\n", ERROR),
        ("overflowing-value", b"0 1:1e400\n", ERROR),
        ("missing-value", b"0 1:\n", ERROR),
        ("missing-colon", b"0 1 2\n", ERROR),
        ("double-colon", b"0 1::2\n", ERROR),
        ("three-part-entry", b"0 1:2:3\n", ERROR),
        ("label-comma-blank", b"0, 1 1:1\n", ERROR),
        ("no-label-anywhere", b" 1:1\n 2:1\n", ERROR),
        ("no-feature-anywhere", b"0\n1\n", ERROR),
        ("empty-label-rows", b"0 1:1\n 2:1\n", (2, 2, 1)),
    ]
    gz = [
        ("valid", _gz(_LIBSVM_OK), (2, 3, 3)),
        ("bom", _gz(BOM + _LIBSVM_OK), (2, 3, 3)),
        ("truncated", _gz(_LIBSVM_OK * 50)[:40], ERROR),
        ("corrupt-deflate", _corrupt_gz(_LIBSVM_OK * 50), ERROR),
        ("not-gzip", _LIBSVM_OK, ERROR),
        ("trailing-garbage", _gz(_LIBSVM_OK) + b"junk", ERROR),
        ("bomb", gzip_bomb(BOMB_BYTES, b"0 1:1\n"), ERROR),
    ]
    return [MalformedFile(f"libsvm-{name}", "libsvm", data, want) for name, data, want in cases] + [
        MalformedFile(f"libsvm-gz-{name}", "libsvm.gz", data, want) for name, data, want in gz
    ]


def _meka() -> list[MalformedFile]:
    head = _MEKA_HEAD
    cases = [
        ("empty", b"", ERROR),
        ("binary-junk", _JUNK, ERROR),
        ("utf16", _MEKA_OK.decode().encode("utf-16"), ERROR),
        ("nul-byte-in-header", _MEKA_OK.replace(b"f1", b"f\x001", 1).replace(b"@data", b"@da\x00ta"), ERROR),
        ("valid", _MEKA_OK, (2, 2, 2)),
        ("valid-sparse", _MEKA_SPARSE_OK, (2, 2, 2)),
        ("bom", BOM + _MEKA_OK, (2, 2, 2)),
        ("bom-only", BOM, ERROR),
        ("crlf", _MEKA_OK.replace(b"\n", b"\r\n"), (2, 2, 2)),
        ("truncated-header", head[:60], ERROR),
        ("missing-data", head.replace(b"@data\n", b""), ERROR),
        ("data-before-attributes", b"@relation 'r: -C 2'\n@data\n0,1\n", ERROR),
        ("no-rows", head, ERROR),
        ("string-attribute", head.replace(b"f2 numeric", b"f2 string"), ERROR),
        ("date-attribute", head.replace(b"f2 numeric", b"f2 date 'yyyy'"), ERROR),
        ("unknown-type", head.replace(b"f2 numeric", b"f2 blob") + b"0,1,1,2\n", ERROR),
        ("unclosed-nominal", head.replace(b"l2 {0,1}", b"l2 {0,1") + b"0,1,1,2\n", ERROR),
        ("duplicate-attribute", head.replace(b"f2 numeric", b"f1 numeric") + b"0,1,1,2\n", ERROR),
        ("unterminated-relation", head.replace(b"'r: -C 2'", b"'r: -C 2") + b"0,1,1,2\n", ERROR),
        ("no-C-option", head.replace(b"'r: -C 2'", b"r") + b"0,1,1,2\n", ERROR),
        ("C-zero", head.replace(b"-C 2", b"-C 0") + b"0,1,1,2\n", ERROR),
        ("C-too-large", head.replace(b"-C 2", b"-C 4") + b"0,1,1,2\n", ERROR),
        ("C-31-digits", head.replace(b"-C 2", b"-C " + _DIGITS31) + b"0,1,1,2\n", ERROR),
        ("C-5000-digits", head.replace(b"-C 2", b"-C -" + b"9" * 5000) + b"0,1,1,2\n", ERROR),
        ("too-few-values", head + b"0,1,1\n", ERROR),
        ("too-many-values", head + b"0,1,1,2,3\n", ERROR),
        ("sparse-too-many-entries", head + b"{0 1,1 1,2 1,3 1,4 1}\n", ERROR),
        ("label-value-2", head + b"0,2,1,2\n", ERROR),
        ("non-binary-label-type", head.replace(b"l1 {0,1}", b"l1 {a,b}") + b"a,1,1,2\n", ERROR),
        ("nan-value", head + b"0,1,nan,2\n", ERROR),
        ("inf-value", head + b"0,1,1,-inf\n", ERROR),
        ("overflowing-value", head + b"0,1,1e999,2\n", ERROR),
        ("missing-value", head + b"0,1,?,2\n", ERROR),
        ("text-value", head + b"0,1,abc,2\n", ERROR),
        ("superscript-value", head + "0,1,²,2\n".encode(), ERROR),
        ("arabic-digit-value", head + "0,1,\u0661,2\n".encode(), ERROR),
        ("underscore-value", head + b"0,1,1_0,2\n", ERROR),
        ("31-digit-value", head + b"0,1," + _DIGITS31 + b",2\n", (1, 2, 2)),
        ("unbalanced-quote", head + b"0,1,'1,2\n", ERROR),
        ("mixed-rows", head + b"0,1,1,2\n{0 1}\n", ERROR),
        ("sparse-unclosed", head + b"{0 1,2 1.5\n", ERROR),
        ("sparse-31-digit-index", head + b"{" + _DIGITS31 + b" 1}\n", ERROR),
        ("sparse-huge-index", head + b"{1000000000 1}\n", ERROR),
        ("sparse-5000-digit-index", head + b"{" + b"9" * 5000 + b" 1}\n", ERROR),
        ("sparse-index-out-of-range", head + b"{4 1}\n", ERROR),
        ("sparse-negative-index", head + b"{-1 1}\n", ERROR),
        ("sparse-superscript-index", head + "{² 1}\n".encode(), ERROR),
        ("sparse-arabic-digit-index", head + "{\u0661 1}\n".encode(), ERROR),
        ("sparse-float-index", head + b"{0.5 1}\n", ERROR),
        ("sparse-unsorted", head + b"{2 1,0 1}\n", ERROR),
        ("sparse-duplicate", head + b"{0 1,0 1}\n", ERROR),
        ("sparse-nan-value", head + b"{2 nan}\n", ERROR),
        ("sparse-missing-value", head + b"{2}\n", ERROR),
    ]
    gz = [
        ("valid", _gz(_MEKA_OK), (2, 2, 2)),
        ("truncated", _gz(_MEKA_OK * 20)[:60], ERROR),
        ("corrupt-deflate", _corrupt_gz(_MEKA_HEAD + b"0,1,0.5,2\n" * 500), ERROR),
        ("bomb-rows", gzip_bomb(BOMB_BYTES, b"0,1,0,0\n", head), ERROR),
        ("bomb-comment-lines", gzip_bomb(BOMB_BYTES, b"%\n"), ERROR),
    ]
    return [MalformedFile(f"meka-{name}", "meka", data, want) for name, data, want in cases] + [
        MalformedFile(f"meka-gz-{name}", "meka.gz", data, want) for name, data, want in gz
    ]


def _mulan() -> list[MalformedFile]:
    laughs = (
        b'<?xml version="1.0"?>\n<!DOCTYPE labels [\n<!ENTITY a "aaaaaaaaaa">\n'
        + b"".join(
            f'<!ENTITY {chr(98 + k)} "{("&" + chr(97 + k) + ";") * 10}">\n'.encode() for k in range(9)
        )
        + b']>\n<labels xmlns="http://mulan.sourceforge.net/labels"><label name="&j;"></label></labels>\n'
    )
    arff = [
        ("valid", MULAN_ARFF, (2, 1, 2)),
        ("bom", BOM + MULAN_ARFF, (2, 1, 2)),
        ("label-not-an-attribute", MULAN_ARFF.replace(b"l2 {0,1}", b"l3 {0,1}"), ERROR),
        ("label-value-text", MULAN_ARFF.replace(b"2,1,1", b"2,1,x"), ERROR),
    ]
    xml = [
        ("empty", b"", ERROR),
        ("binary-junk", _JUNK, ERROR),
        ("malformed", MULAN_XML.replace(b"</labels>", b"</label>"), ERROR),
        ("wrong-root", MULAN_XML.replace(b"<labels", b"<tags").replace(b"</labels>", b"</tags>"), ERROR),
        ("no-labels", MULAN_XML.split(b'\n<label name')[0] + b"\n</labels>\n", ERROR),
        ("nameless-label", MULAN_XML.replace(b' name="l2"', b""), ERROR),
        ("duplicate-label", MULAN_XML.replace(b'name="l2"', b'name="l1"'), ERROR),
        ("bom", BOM + MULAN_XML, (2, 1, 2)),
        ("billion-laughs", laughs, ERROR),
    ]
    return [MalformedFile(f"mulan-{name}", "mulan", data, want) for name, data, want in arff] + [
        MalformedFile(f"mulan-xml-{name}", "mulan-xml", data, want) for name, data, want in xml
    ]


_CSV_OK = b"f1,f2,label:a,label:b\n0.5,1,1,0\n-2,3e2,0,1\n"


def _csv() -> list[MalformedFile]:
    head = b"f1,f2,label:a,label:b\n"
    cases = [
        ("valid", _CSV_OK, (2, 2, 2)),
        ("crlf-bom-blanks", BOM + b"f1 , f2,label:a,\tlabel:b\r\n 0.5 ,1,1,0\r\n\r\n-2,3,0,1\r\n", (2, 2, 2)),
        ("quoted-header", b'"f,1","f""2",label:a\n1,2,1\n', (1, 2, 1)),
        ("empty", b"", ERROR),
        ("bom-only", BOM, ERROR),
        ("binary-junk", _JUNK, ERROR),
        ("utf16", _CSV_OK.decode().encode("utf-16"), ERROR),
        ("header-only", head, ERROR),
        ("no-label-column", b"f1,f2,y1\n1,2,0\n", ERROR),
        ("only-label-columns", b"label:a,label:b\n1,0\n", ERROR),
        ("prefix-alone", b"f1,label:\n1,0\n", ERROR),
        ("numeric-header", b"1,2,0\n3,4,1\n", ERROR),
        ("duplicate-name", b"f1,f1,label:a\n1,2,0\n", ERROR),
        ("empty-name", b"f1,,label:a\n1,2,0\n", ERROR),
        ("unclosed-quote-header", b'"f1,f2,label:a\n1,2,0\n', ERROR),
        ("too-few-values", head + b"1,2,0\n", ERROR),
        ("too-many-values", head + b"1,2,0,1,5\n", ERROR),
        ("trailing-comma", head + b"1,2,0,1,\n", ERROR),
        ("empty-value", head + b"1,,0,1\n", ERROR),
        ("quoted-value", head + b'"1",2,0,1\n', ERROR),
        ("nan-value", head + b"nan,2,0,1\n", ERROR),
        ("inf-value", head + b"1,-inf,0,1\n", ERROR),
        ("overflowing-value", head + b"1e400,2,0,1\n", ERROR),
        ("text-value", head + b"abc,2,0,1\n", ERROR),
        ("hex-value", head + b"0x1,2,0,1\n", ERROR),
        ("underscore-value", head + b"1_0,2,0,1\n", ERROR),
        ("superscript-value", head + "\u00b2,2,0,1\n".encode(), ERROR),
        ("arabic-digit-value", head + "\u0661,2,0,1\n".encode(), ERROR),
        ("fullwidth-digit-value", head + "\uff11,2,0,1\n".encode(), ERROR),
        ("nul-byte", head + b"1\x00,2,0,1\n", ERROR),
        ("no-break-space", head + "1,\u00a02,0,1\n".encode(), ERROR),
        ("vertical-tab", head + b"1,\x0b2,0,1\n", ERROR),
        ("label-value-2", head + b"1,2,2,1\n", ERROR),
        ("label-value-half", head + b"1,2,0.5,1\n", ERROR),
        ("semicolons", b"f1;f2;label:a\n1;2;0\n", ERROR),
    ]
    gz = [
        ("valid", _gz(_CSV_OK), (2, 2, 2)),
        ("corrupt-deflate", _corrupt_gz(head + b"0.5,1,1,0\n" * 500), ERROR),
        ("bomb", gzip_bomb(BOMB_BYTES, b"0,0,0,1\n", head), ERROR),
    ]
    return [MalformedFile(f"csv-{name}", "csv", data, want) for name, data, want in cases] + [
        MalformedFile(f"csv-gz-{name}", "csv.gz", data, want) for name, data, want in gz
    ]


def _npy(shape, dtype: str, body: bytes = b"", *, header: bytes | None = None) -> bytes:
    """An .npy file: magic, version 1.0, the header declaring ``shape`` and ``dtype``, then ``body``.

    Written by hand so that the header may declare more (or other) than the body holds.
    """
    text = header if header is not None else (
        "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (dtype, tuple(shape))
    ).encode("latin1")
    text += b" " * ((-(10 + len(text) + 1)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + body


def _array(values, dtype: str) -> bytes:
    import numpy as np

    array = np.asarray(values, dtype=dtype)
    return _npy(array.shape, array.dtype.str, array.tobytes())


def _member(name: str, data: bytes, method: int = 8) -> tuple[str, bytes, int, int, int]:
    """(name, stored bytes, CRC-32, inflated size, method): deflated (8) or stored (0)."""
    if method == 8:
        packer = zlib.compressobj(6, zlib.DEFLATED, -15)
        packed = packer.compress(data) + packer.flush()
    else:
        packed = data
    return name, packed, zlib.crc32(data), len(data), method


def _zip(members) -> bytes:
    """A zip archive of ``members`` (see :func:`_member`): local headers, central directory, end record."""
    local, central = b"", b""
    for name, packed, crc, size, method in members:
        encoded = name.encode()
        entry = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, method, 0, 0x21, crc, len(packed), size, len(encoded), 0)
        central += struct.pack(
            "<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, method, 0, 0x21, crc, len(packed), size, len(encoded), 0, 0, 0,
            0, 0, len(local),
        ) + encoded
        local += entry + encoded + packed
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), len(local), 0)
    return local + central + end


def _npz_bomb(total: int) -> tuple[str, bytes, int, int, int]:
    """A member ``X.npy`` of ``total`` zero bytes (a multiple of 1 MiB) deflated as :func:`gzip_bomb` does."""
    head = _npy((1, total // 8), "<f8")
    chunk = bytes(2**20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = compressor.compress(head) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    count = total // len(chunk)
    crc = zlib.crc32(head)
    for _ in range(count):
        crc = zlib.crc32(chunk, crc)
    return "X.npy", first + block * count + compressor.flush(), crc, len(head) + count * len(chunk), 8


def _npz() -> list[MalformedFile]:
    X = _member("X.npy", _array([[0.5, 1.0], [-2.0, 3.0]], "<f8"))
    Y = _member("Y.npy", _array([[1, 0], [0, 1]], "|i1"))

    def archive(*members):
        return _zip(list(members))

    def sparse_x(indptr=(0, 2, 3), indices=(0, 2, 1), shape=(2, 3), data=(1.0, 2.0, 3.0), fmt="csr"):
        return [
            _member("X_format.npy", _npy((), "<U3", fmt.encode("utf-32-le"))),
            _member("X_shape.npy", _array(shape, "<i8")),
            _member("X_data.npy", _array(data, "<f8")),
            _member("X_indices.npy", _array(indices, "<i4")),
            _member("X_indptr.npy", _array(indptr, "<i4")),
        ]

    valid = archive(X, Y)
    lying = _member("X.npy", _array([[0.5, 1.0], [-2.0, 3.0]], "<f8"))
    lying = (lying[0], lying[1], lying[2], 40, 8)  # declares 40 bytes, inflates to more
    pickled = _npy((1,), "|O", b"\x80\x04K\x01.", header=b"{'descr': '|O', 'fortran_order': False, 'shape': (1,), }")
    cases = [
        ("valid", valid, (2, 2, 2)),
        ("valid-sparse", archive(*sparse_x(), Y), (2, 3, 2)),
        ("empty", b"", ERROR),
        ("binary-junk", _JUNK, ERROR),
        ("truncated", valid[: len(valid) // 2], ERROR),
        ("gzipped", _gz(valid), ERROR),
        ("object-array", archive(_member("X.npy", pickled), Y), ERROR),
        ("unknown-member", archive(X, Y, _member("extra.npy", _array([1], "<i8"))), ERROR),
        ("not-npy-member", archive(X, Y, _member("notes.txt", b"hello")), ERROR),
        ("duplicate-member", archive(X, X, Y), ERROR),
        ("scipy-matrix-alone", archive(*[(m[0][2:],) + m[1:] for m in sparse_x()]), ERROR),
        ("no-Y", archive(X), ERROR),
        ("no-X", archive(Y), ERROR),
        ("X-and-sparse-parts", archive(X, *sparse_x(), Y), ERROR),
        ("X-1d", archive(_member("X.npy", _array([1.0, 2.0], "<f8")), Y), ERROR),
        ("X-complex", archive(_member("X.npy", _array([[1, 2], [3, 4]], "<c16")), Y), ERROR),
        ("X-strings", archive(_member("X.npy", _array([["a", "b"], ["c", "d"]], "<U1")), Y), ERROR),
        ("X-nan", archive(_member("X.npy", _array([[1, float("nan")], [3, 4]], "<f8")), Y), ERROR),
        ("Y-value-2", archive(X, _member("Y.npy", _array([[1, 2], [0, 1]], "|i1"))), ERROR),
        ("rows-differ", archive(X, _member("Y.npy", _array([[1, 0]], "|i1"))), ERROR),
        ("shape-lie", archive(_member("X.npy", _npy((100000, 100000), "<f8", bytes(32))), Y), ERROR),
        ("header-too-long", archive(_member("X.npy", _npy((2, 2), "<f8", bytes(32), header=b"{" + b" " * 20000 + b"}")), Y), ERROR),
        ("npy-version-9", archive(_member("X.npy", b"\x93NUMPY\x09\x00" + _array([[1.0]], "<f8")[8:]), Y), ERROR),
        ("sparse-index-out-of-range", archive(*sparse_x(indices=(0, 3, 1)), Y), ERROR),
        ("sparse-indptr-decreasing", archive(*sparse_x(indptr=(0, 3, 2), indices=(0, 1, 2)), Y), ERROR),
        ("sparse-indptr-short", archive(*sparse_x(indptr=(0, 3)), Y), ERROR),
        ("sparse-lengths-differ", archive(*sparse_x(data=(1.0, 2.0)), Y), ERROR),
        ("sparse-shape-3d", archive(*sparse_x(shape=(2, 3, 1)), Y), ERROR),
        ("sparse-format-bsr", archive(*sparse_x(fmt="bsr"), Y), ERROR),
        ("sparse-width-beyond-limit", archive(*sparse_x(shape=(2, 2**24 + 1)), Y), ERROR),
        ("names-count", archive(X, Y, _member("feature_names.npy", _array(["a"], "<U1"))), ERROR),
        ("names-duplicate", archive(X, Y, _member("label_names.npy", _array(["a", "a"], "<U1"))), ERROR),
        ("too-many-members", archive(*[_member(f"m{k}.npy", b"") for k in range(40)]), ERROR),
        ("bzip2-member", archive(X[:4] + (12,), Y), ERROR),
        ("inflates-past-declared", archive(lying, Y), ERROR),
        ("declared-size-lie", archive(("X.npy", X[1], X[2], 2**32 - 1, 8), Y), ERROR),
        ("bomb", archive(_npz_bomb(BOMB_BYTES), Y), ERROR),
        ("bomb-under-the-cap", archive(_npz_bomb(BOMB_BYTES // 4), Y), ERROR),  # refused by its ratio
    ]
    return [MalformedFile(f"npz-{name}", "npz", data, want) for name, data, want in cases]


CASES: list[MalformedFile] = _libsvm() + _meka() + _mulan() + _csv() + _npz()

#: A declared width: at least this many feature or label columns.
WIDE = 2**20
#: The names of the cases that load with a declared width of :data:`WIDE` columns or more.
WIDTH_CASES: list[str] = [
    case.name for case in CASES if case.expectation != ERROR and max(case.expectation[1:]) >= WIDE
]


def write_case(case: MalformedFile, folder) -> Path:
    """Write ``case`` into ``folder`` and return the path to load, e.g. with ``load_dataset``.

    Parameters
    ----------
    case : MalformedFile
        The case to write.
    folder : str or path-like
        The folder, created when missing (a Mulan case also gets its partner file there).

    Returns
    -------
    pathlib.Path
        The path of the data file.

    Raises
    ------
    ValueError
        If the case's format is unknown.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    kind, gz = case.format.removesuffix(".gz"), ".gz" if case.format.endswith(".gz") else ""
    if kind in ("libsvm", "csv", "npz"):
        path = folder / f"case.{'svm' if kind == 'libsvm' else kind}{gz}"
        path.write_bytes(case.data)
        return path
    path = folder / f"case.arff{gz}"
    if kind == "meka":
        path.write_bytes(case.data)
    elif kind == "mulan":
        path.write_bytes(case.data)
        (folder / "case.xml").write_bytes(MULAN_XML)
    elif kind == "mulan-xml":
        path.write_bytes(MULAN_ARFF)
        (folder / "case.xml").write_bytes(case.data)
    else:
        raise ValueError(f"unknown case format {case.format!r}")
    return path
