"""Data files on disk: transparent gzip, a cap on their text, dataset names from file names, located errors.

Every reader holds a file's whole text in memory and builds arrays from it, so the text is
capped: :data:`MAX_BYTES` (256 MiB) unless the reader's ``max_bytes`` argument or the
environment variable :data:`MAX_BYTES_ENV` says otherwise.  A plain file is measured by its
size on disk; a gzipped one is decompressed once without keeping anything, counting, and
refused as soon as it passes the cap, so that a small file expanding to gigabytes (a gzip
bomb) costs a few megabytes to refuse.  The same cap bounds each dense array a reader builds
from the text (the label matrix, a densified X), whose size need not follow the text's.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

from ..validation import check_byte_cap

GZIP_SUFFIX = ".gz"
MAX_BYTES = 256 * 2**20
MAX_BYTES_ENV = "MULTILABEL_CORE_MAX_BYTES"
_CHUNK = 2**20
_BOM = "\ufeff"


class DataFormatError(ValueError):
    """A malformed data file; the message reads ``PATH, line N: REASON``.

    ``path``, ``line`` (1-based, or None when the problem is the file as a whole) and
    ``reason`` are kept as attributes for programs that want them separately.
    """

    def __init__(self, path, line: int | None, reason: str):
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = self.path if line is None else f"{self.path}, line {line}"
        super().__init__(f"{where}: {reason}")


def byte_cap(max_bytes=None) -> int:
    """The cap on a data file's text: ``max_bytes``, else ``$MULTILABEL_CORE_MAX_BYTES``, else :data:`MAX_BYTES`."""
    return check_byte_cap(max_bytes, MAX_BYTES_ENV, MAX_BYTES)


def size_text(n_bytes: int) -> str:
    """``268435456`` -> ``"256 MiB (268435456 bytes)"``: readable, and exact for the user who sets the cap."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= size:
            return f"{n_bytes / size:.4g} {unit} ({n_bytes} bytes)"
    return f"{n_bytes} bytes"


_CAP_ADVICE = f"pass max_bytes= or set ${MAX_BYTES_ENV} to allow more"


def over_cap(cap: int) -> str:
    return f"over the cap of {size_text(cap)}; {_CAP_ADVICE}"


def check_dense_size(path, shape: tuple[int, int], itemsize: int, what: str, max_bytes=None) -> None:
    """DataFormatError (for the file as a whole) when a dense ``shape`` array would pass the cap."""
    cap = byte_cap(max_bytes)
    needed = int(shape[0]) * int(shape[1]) * itemsize
    if needed > cap:
        raise DataFormatError(
            path, None, f"{what} would take {shape[0]} x {shape[1]} = {size_text(needed)} dense, {over_cap(cap)}"
        )


def read_text(path, max_bytes=None) -> str:
    """The whole file as text (UTF-8, a leading byte-order mark dropped, CRLF and CR read as LF),
    gunzipped when the name ends in ``.gz``; at most :func:`byte_cap` bytes of it (module docstring).
    """
    path = os.fspath(path)
    cap = byte_cap(max_bytes)
    gzipped = path.endswith(GZIP_SUFFIX)
    try:
        if gzipped:
            # The first pass keeps nothing: a bomb is refused before any of it is held.
            with gzip.open(path, "rb") as handle:
                size = 0
                while chunk := handle.read(_CHUNK):
                    size += len(chunk)
                    if size > cap:
                        reason = f"decompresses to more than the cap of {size_text(cap)}; {_CAP_ADVICE}"
                        raise DataFormatError(path, None, reason)
            with gzip.open(path, "rb") as handle:
                data = handle.read()
        else:
            size = os.path.getsize(path)
            if size > cap:
                raise DataFormatError(path, None, f"is {size_text(size)}, {over_cap(cap)}")
            with open(path, "rb") as handle:
                data = handle.read(cap + 1)
            if len(data) > cap:  # grown since measured, or not a regular file
                raise DataFormatError(path, None, f"holds more than {size_text(cap)}, {over_cap(cap)}")
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise DataFormatError(path, None, f"is not a readable gzip file: {exc or type(exc).__name__}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataFormatError(path, line, f"is not UTF-8 text: byte {data[exc.start]:#04x} ({exc.reason})") from None
    del data
    if text.startswith(_BOM):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def write_lines(path, lines) -> None:
    """Write an iterable of lines (no newlines inside), gzipped when the name ends in ``.gz``."""
    path = os.fspath(path)
    opener = gzip.open if path.endswith(GZIP_SUFFIX) else open
    with opener(path, "wt", encoding="utf-8", newline="\n") as handle:
        for line in lines:
            handle.write(line)
            handle.write("\n")


def strip_suffix(path, suffixes: tuple[str, ...]) -> str | None:
    """``emotions.arff.gz`` with suffixes (".arff",) -> ``.../emotions``; None when no suffix matches."""
    text = os.fspath(path)
    if text.endswith(GZIP_SUFFIX):
        text = text[: -len(GZIP_SUFFIX)]
    for suffix in suffixes:
        if text.lower().endswith(suffix):
            return text[: -len(suffix)]
    return None


def dataset_name(path) -> str:
    """A file's name without its folder and its format (and gzip) suffixes."""
    name = Path(os.fspath(path)).name
    if name.endswith(GZIP_SUFFIX):
        name = name[: -len(GZIP_SUFFIX)]
    return name.rsplit(".", 1)[0] if "." in name else name


def format_number(value: float) -> str:
    """The shortest text that reads back as exactly ``value`` (``repr``), without a trailing ``.0``."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text
