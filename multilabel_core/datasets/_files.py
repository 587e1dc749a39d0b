"""Data files on disk: transparent gzip, dataset names from file names, located errors."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

GZIP_SUFFIX = ".gz"


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


def read_text(path) -> str:
    """The whole file as text (UTF-8), gunzipped when the name ends in ``.gz``."""
    path = os.fspath(path)
    opener = gzip.open if path.endswith(GZIP_SUFFIX) else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            return handle.read()
    except (UnicodeDecodeError, gzip.BadGzipFile, EOFError) as exc:
        raise DataFormatError(path, None, f"cannot be read as UTF-8 text: {exc}") from exc


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
