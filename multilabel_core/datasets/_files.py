"""Data files on disk: transparent gzip, a cap on their text, dataset names from file names, located errors.

Every reader holds a file's whole text in memory and builds arrays from it, so the text is
capped: :data:`MAX_BYTES` (256 MiB) unless the reader's ``max_bytes`` argument or the
environment variable :data:`MAX_BYTES_ENV` says otherwise.  A plain file is measured by its
size on disk; a gzipped one is decompressed once without keeping anything, counting, and
refused as soon as it passes the cap, so that a small file expanding to gigabytes (a gzip
bomb) costs a few megabytes to refuse.  The same cap bounds each dense array a reader builds
from the text (the label matrix, a densified X), whose size need not follow the text's.

Only regular files are read: a directory, a FIFO, a device (``/dev/zero``, also behind a
symbolic link) and a symbolic link loop are each refused with what they are, from their
status, before anything is opened (a FIFO would block the reader until some writer came,
``/dev/zero`` never ends), and the status is checked again on the opened descriptor, which
is opened without blocking, so that a file swapped in between is refused too.

Blanks: the formats separate fields by spaces and tabs only (:func:`check_blanks`); any other
whitespace character outside a comment or a quoted ARFF string (a no-break space, a vertical
tab, a form feed, the Unicode spaces) is refused with its line and name, since Python's
``str.split`` would take it as a separator where other readers take it as part of a value.
"""

from __future__ import annotations

import bisect
import errno
import gzip
import os
import re
import stat
import unicodedata
import zlib
from pathlib import Path

from ..exceptions import DataFormatError
from ..validation import check_byte_cap

GZIP_SUFFIX = ".gz"
MAX_BYTES = 256 * 2**20
MAX_BYTES_ENV = "MULTILABEL_CORE_MAX_BYTES"
_CHUNK = 2**20
_BOM = "\ufeff"


def byte_cap(max_bytes=None) -> int:
    """The cap on a data file's text: ``max_bytes``, else ``$MULTILABEL_CORE_MAX_BYTES``, else :data:`MAX_BYTES`."""
    return check_byte_cap(max_bytes, MAX_BYTES_ENV, MAX_BYTES)


def size_text(n_bytes: int) -> str:
    """Write a size in bytes readably and exactly: ``268435456`` -> ``"256 MiB (268435456 bytes)"``.

    Parameters
    ----------
    n_bytes : int
        The size.

    Returns
    -------
    str
        The size in the largest binary unit it reaches, then the exact count (exact for the user
        who sets a cap).
    """
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


_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((kind for test, kind in _FILE_KINDS if test(mode)), "a special file")


def not_a_data_file(path) -> str | None:
    """Why ``path`` cannot be read as a data file, from its status alone (nothing is opened), or None.

    None also for a path that does not exist at all: the callers say so in their own words.
    """
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link loop (or a chain of more links than the system follows), not a data file"
        if exc.errno == errno.ENOENT and os.path.islink(path):
            return f"is a symbolic link to {os.readlink(path)!r}, which does not exist"
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory, not a data file"
    via = f" (through a symbolic link to {os.path.realpath(path)!r})" if os.path.islink(path) else ""
    return f"is {_kind(mode)}{via}, not a regular file; data files must be regular files"


def open_regular(path):
    """``path`` opened for binary reading, and its size; DataFormatError unless it is a regular file.

    The status is read before opening (so that a device is never opened) and again from the
    descriptor, opened without blocking (so that a FIFO put in the file's place cannot hang).
    """
    reason = not_a_data_file(path)
    if reason is not None:
        raise DataFormatError(path, None, reason)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DataFormatError(path, None, "is a symbolic link loop, not a data file") from None
        if exc.errno == errno.EISDIR:
            raise DataFormatError(path, None, "is a directory, not a data file") from None
        raise
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise DataFormatError(path, None, f"is {_kind(mode)}, not a regular file; data files must be regular files")
    handle = os.fdopen(descriptor, "rb")
    return handle, os.fstat(handle.fileno()).st_size


def read_text(path, max_bytes=None) -> str:
    """The whole file as text (UTF-8, a leading byte-order mark dropped, CRLF and CR read as LF),
    gunzipped when the name ends in ``.gz``; at most :func:`byte_cap` bytes of it (module docstring).

    A path that is not a regular file is a DataFormatError saying what it is (module docstring);
    a path that does not exist is Python's FileNotFoundError.
    """
    path = os.fspath(path)
    cap = byte_cap(max_bytes)
    gzipped = path.endswith(GZIP_SUFFIX)
    raw, size = open_regular(path)
    try:
        if gzipped:
            # The first pass keeps nothing: a bomb is refused before any of it is held.
            with gzip.GzipFile(fileobj=raw, mode="rb") as handle:
                size = 0
                while chunk := handle.read(_CHUNK):
                    size += len(chunk)
                    if size > cap:
                        reason = f"decompresses to more than the cap of {size_text(cap)}; {_CAP_ADVICE}"
                        raise DataFormatError(path, None, reason)
            raw.seek(0)
            with gzip.GzipFile(fileobj=raw, mode="rb") as handle:
                data = handle.read()
        else:
            if size > cap:
                raise DataFormatError(path, None, f"is {size_text(size)}, {over_cap(cap)}")
            data = raw.read(cap + 1)
            if len(data) > cap:  # grown since measured
                raise DataFormatError(path, None, f"holds more than {size_text(cap)}, {over_cap(cap)}")
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise DataFormatError(path, None, f"is not a readable gzip file: {exc or type(exc).__name__}") from None
    finally:
        raw.close()
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


# Whitespace other than the separators (space, tab) and the line end: what str.split() and
# float() take as blanks although no writer of these formats puts it between fields.
_FOREIGN_BLANK = re.compile(r"[^\S \t\n]")
_ASCII_FOREIGN_BLANKS = "\x0b\x0c\r\x1c\x1d\x1e\x1f"  # its ASCII members ("\r" only where read_text did not run)
_BLANK_NAMES = {
    "\x0b": "a vertical tab (U+000B)", "\x0c": "a form feed (U+000C)", "\x1c": "a file separator (U+001C)",
    "\x1d": "a group separator (U+001D)", "\x1e": "a record separator (U+001E)",
    "\x1f": "a unit separator (U+001F)", "\x85": "a next-line character (U+0085)",
}


def blank_name(character: str) -> str:
    """``"\\xa0"`` -> ``"NO-BREAK SPACE (U+00A0)"``: a whitespace character named for an error message."""
    known = _BLANK_NAMES.get(character)
    if known is not None:
        return known
    return f"{unicodedata.name(character, 'a control character')} (U+{ord(character):04X})"


def check_blanks(path, text: str, free_spans, format_name: str) -> None:
    """DataFormatError at the first whitespace character that is not a space, a tab or a line end.

    ``free_spans(line)`` gives the ``(start, end)`` column ranges of a line where any character
    is allowed (a comment, a quoted string), in order and disjoint.  One regular-expression scan of the text finds the
    candidates; only their lines are split up, and lines are counted from one candidate's line
    to the next, so the check is one pass over the text whatever the file holds.
    """
    if text.isascii() and not any(blank in text for blank in _ASCII_FOREIGN_BLANKS):
        return  # the usual file: a few substring searches instead of a regular expression's character class
    position, lineno, counted = 0, 1, 0
    while (found := _FOREIGN_BLANK.search(text, position)) is not None:
        start = text.rfind("\n", 0, found.start()) + 1
        end = text.find("\n", found.start())
        end = len(text) if end < 0 else end
        lineno += text.count("\n", counted, start)
        counted = start
        line = text[start:end]
        spans = free_spans(line)  # ordered and disjoint: a bisection finds the one a column may be in
        starts = [low for low, _ in spans]
        for blank in _FOREIGN_BLANK.finditer(line):
            column = blank.start()
            k = bisect.bisect_right(starts, column) - 1
            if k < 0 or column >= spans[k][1]:
                raise DataFormatError(
                    path, lineno, f"holds {blank_name(blank[0])} at column {column + 1}: {format_name} separates "
                    "fields by spaces and tabs only (replace it by a space; a file holding other whitespace was "
                    "usually damaged or converted)"
                )
        position = end


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
