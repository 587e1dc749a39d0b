"""Loading a dataset by file path or by name.

A path's format follows from its name (a trailing ``.gz`` is gunzipped):

- ``NAME.arff`` with a sibling ``NAME.xml`` (or ``NAME.xml.gz``): Mulan;
- ``NAME.arff`` without one: MEKA (its relation name must carry ``-C L``);
- ``NAME.svm``, ``NAME.libsvm``, ``NAME.txt``: LibSVM multi-label;
- ``NAME.csv``: CSV with a header line, label columns chosen by ``labels`` / ``label_prefix``
  (:func:`~.csv.read_csv`);
- ``NAME.npz``: arrays X and Y, dense or sparse (:func:`~.npz.read_npz`; never gzipped).

A bare name (no folder, no known suffix) is looked up as ``NAME.arff`` (+ ``NAME.xml``),
then ``NAME.svm`` / ``NAME.libsvm`` / ``NAME.txt``, ``NAME.csv`` (each also ``.gz``), then
``NAME.npz`` in these folders,
in order: ``data_home``, the folder in the environment variable ``MULTILABEL_CORE_DATA``,
then the download cache of :func:`~.fetch.fetch_dataset`.

A name (or path) that is not a file and holds ``+`` joins datasets: ``emotions-train+emotions-test``
loads each part as above and stacks their rows (:func:`~.combine.concatenate`: the parts must
have the same features and labels), remembering where each part ends (``Dataset.parts``).
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from ._dataset import Dataset
from .combine import concatenate
from ._files import DataFormatError, not_a_data_file, strip_suffix
from .storage import check_sparse
from .arff import mulan_xml_path, read_meka, read_mulan
from .fetch import cache_dir
from .csv import read_csv, write_csv
from .libsvm import read_libsvm, write_libsvm
from .npz import read_npz, write_npz

__all__ = ["DATA_ENV", "load_dataset", "load_file", "search_path", "write_file"]

DATA_ENV = "MULTILABEL_CORE_DATA"
ARFF_SUFFIXES = (".arff",)
LIBSVM_SUFFIXES = (".svm", ".libsvm", ".txt")
CSV_SUFFIXES = (".csv",)
NPZ_SUFFIXES = (".npz",)


def load_dataset(
    name_or_path, data_home=None, *, nominal: str = "onehot", sparse="auto", max_bytes=None, labels=None,
    label_prefix=None,
) -> Dataset:
    """Load a dataset from a file path, or from a name looked up in the data folders (module docstring).

    ``A+B`` (not itself a file) is the rows of A then those of B, each loaded with these arguments
    (module docstring); ValueError when they do not fit together.

    Parameters
    ----------
    name_or_path : str or path-like
        A data file, a dataset name (looked up in :func:`search_path`), or names joined by ``+``.
    data_home : str or path-like, optional
        A folder searched first for a name.
    nominal : {"onehot", "ordinal"}, default="onehot"
        How ARFF nominal features are encoded.
    sparse : {"auto", True, False}, default="auto"
        Whether X comes back CSR or dense (auto: CSR for a sparse file unless more than
        :data:`~.storage.DENSE_ABOVE` of its entries are stored).
    max_bytes : int or None, default=None
        Caps a file's (decompressed) text and each dense array built from it, default
        ``$MULTILABEL_CORE_MAX_BYTES`` or 256 MiB (:func:`~._files.byte_cap`).
    labels : str or sequence of int and str, optional
        A CSV file's label columns: positions, ranges ``A-B`` and names (:func:`~.csv.read_csv`); ValueError for a file of another
        format, whose labels its format already marks.
    label_prefix : str, optional
        The prefix of a CSV file's label column names (:func:`~.csv.read_csv`); likewise only for
        CSV files.

    Returns
    -------
    Dataset
        The dataset (the rows of every part, in order, for ``A+B``).

    Raises
    ------
    ValueError
        For an unknown name, listing the folders searched, parts that do not fit together, or a
        CSV-only option given for another format.
    DataFormatError
        A ValueError, for a malformed file and for a path that is not a regular file (saying what
        it is: a directory, a FIFO, a device, a symbolic link loop).
    """
    sparse = check_sparse(sparse)
    options = {"nominal": nominal, "sparse": sparse, "max_bytes": max_bytes, "labels": labels,
               "label_prefix": label_prefix}
    text = os.fspath(name_or_path)
    path = Path(text)
    if path.is_file():
        return load_file(path, **options)
    if "+" in text:
        names = text.split("+")
        if not all(names):
            raise ValueError(f"{text!r}: an empty dataset name beside '+'; join datasets as NAME1+NAME2")
        return concatenate([load_dataset(n, data_home, **options) for n in names])
    if os.sep in text or "/" in text or format_of(path) is not None:
        reason = not_a_data_file(path)  # from the path's status: a FIFO or a device is never opened
        if reason is not None:
            raise DataFormatError(path, None, reason)
        raise ValueError(f"no such data file: {path}")
    folders = search_path(data_home)
    for _, folder in folders:
        found = named_file(folder, text) if folder is not None else None
        if found is not None:
            return load_file(found, **options)
    looked = "; ".join(f"{where}: {folder if folder is not None else '(not set)'}" for where, folder in folders)
    raise ValueError(
        f"unknown dataset {text!r}: no {text}.arff (+ {text}.xml), {text}.svm, {text}.libsvm, {text}.txt, {text}.csv or "
        f"{text}.npz in "
        f"{looked}. {_suggestion(text, folders)}"
    )


def _suggestion(name: str, folders) -> str:
    """Close names among the datasets in the searched folders and the registered ones, and what to do."""
    from ..plugins import list_datasets

    local = {}
    for where, folder in folders:
        if folder is None or not folder.is_dir():
            continue
        for path in folder.iterdir():
            if path.suffix.lower() in ARFF_SUFFIXES + LIBSVM_SUFFIXES + CSV_SUFFIXES + NPZ_SUFFIXES:
                local.setdefault(path.stem, where)
    registered = {spec.name for spec in list_datasets()}
    local.setdefault("synthetic", "the embedded dataset of mlcore and experiment files; in Python, make_correlated_multilabel()")
    # Case ignored: 'Emotions' and 'SYNTHETIC' are typed as often as the names themselves.
    by_lower = {}
    for candidate in sorted(set(local) | registered):
        by_lower.setdefault(candidate.lower(), candidate)
    close = [by_lower[c] for c in difflib.get_close_matches(name.lower(), sorted(by_lower), n=5, cutoff=0.6)]
    hints = [f"{c!r} ({local[c]})" if c in local else f"{c!r} (fetch_dataset({c!r}) downloads it)" for c in close]
    if name in registered:
        return f"Download it with fetch_dataset({name!r}), or pass a file path."
    advice = f"Pass a file path, or set {DATA_ENV} to the folder that holds it."
    return (f"Did you mean {', '.join(hints)}? " if hints else "") + advice


def search_path(data_home=None) -> list[tuple[str, Path | None]]:
    """List the folders a bare dataset name is looked up in, in order, each with where it comes from.

    Parameters
    ----------
    data_home : str or path-like, optional
        A folder searched first.

    Returns
    -------
    list of (str, pathlib.Path or None)
        ``("data_home", folder)`` when given, then ``("$MULTILABEL_CORE_DATA", folder or None
        when unset)``, then ``("download cache", cache folder)``.
    """
    folders = [("data_home", Path(data_home))] if data_home is not None else []
    env = os.environ.get(DATA_ENV)
    folders.append((f"${DATA_ENV}", Path(env) if env else None))
    folders.append(("download cache", cache_dir()))
    return folders


def load_file(path, *, nominal: str = "onehot", sparse="auto", max_bytes=None, labels=None, label_prefix=None) -> Dataset:
    """Read one data file, its format chosen by its name (module docstring).

    Parameters
    ----------
    path : str or path-like
        The file: ``.arff`` (Mulan with ``NAME.xml`` beside it, or MEKA), ``.svm``, ``.libsvm``
        or ``.txt`` (LibSVM), ``.csv`` (each optionally ``.gz``) or ``.npz``.
    nominal : {"onehot", "ordinal"}, default="onehot"
        How ARFF nominal features are encoded.
    sparse : {"auto", True, False}, default="auto"
        Whether X comes back CSR or dense.
    max_bytes : int or None, default=None
        Caps the file's text and each dense array built from it (:func:`~._files.byte_cap`).
    labels : str or sequence of int and str, optional
        A CSV file's label columns (:func:`~.csv.read_csv`); refused for other formats.
    label_prefix : str, optional
        The prefix of a CSV file's label column names; refused for other formats.

    Returns
    -------
    Dataset
        The file's data.

    Raises
    ------
    ValueError
        For a name of no known format, or a CSV-only option given for another format.
    DataFormatError
        For a malformed file or a gzipped ``.npz``.
    """
    kind = format_of(Path(path))
    if kind == "csv":
        return read_csv(path, labels, label_prefix=label_prefix, sparse=sparse, max_bytes=max_bytes)
    if labels is not None or label_prefix is not None:
        option = "labels" if labels is not None else "label_prefix"
        raise ValueError(
            f"{path}: {option}= (mlcore: --{option.replace('_', '-')}) chooses the label columns of a CSV file; this "
            f"file's format ({kind or 'unknown'}) marks its labels itself"
        )
    if kind == "npz":
        if os.fspath(path).endswith(".gz"):
            raise DataFormatError(path, None, "an .npz file is a zip archive already; gunzip it (NAME.npz)")
        return read_npz(path, sparse=sparse, max_bytes=max_bytes)
    if kind == "arff":
        xml_path = mulan_xml_path(path)
        if xml_path is not None:
            return read_mulan(path, xml_path, nominal=nominal, sparse=sparse, max_bytes=max_bytes)
        return read_meka(path, nominal=nominal, sparse=sparse, max_bytes=max_bytes)
    if kind == "libsvm":
        return read_libsvm(path, sparse=sparse, max_bytes=max_bytes)
    raise ValueError(
        f"{path}: unknown data format; expected .arff (Mulan with NAME.xml beside it, or MEKA), "
        ".svm, .libsvm or .txt (LibSVM), .csv (each optionally .gz) or .npz"
    )


def format_of(path: Path) -> str | None:
    """Return the data format a file name says (``"arff"``, ``"libsvm"``, ``"csv"``, ``"npz"``), or None."""
    if strip_suffix(path, ARFF_SUFFIXES) is not None:
        return "arff"
    if strip_suffix(path, LIBSVM_SUFFIXES) is not None:
        return "libsvm"
    if strip_suffix(path, CSV_SUFFIXES) is not None:
        return "csv"
    if strip_suffix(path, NPZ_SUFFIXES) is not None:
        return "npz"
    return None


def named_file(folder: Path, name: str) -> Path | None:
    """Return the file of dataset ``name`` in ``folder`` in any known format (gzipped or not), or None."""
    for suffix in ARFF_SUFFIXES + LIBSVM_SUFFIXES + CSV_SUFFIXES:
        for candidate in (folder / f"{name}{suffix}", folder / f"{name}{suffix}.gz"):
            if candidate.is_file():
                return candidate
    candidate = folder / f"{name}{NPZ_SUFFIXES[0]}"
    return candidate if candidate.is_file() else None


#: What :func:`write_file` writes for each format it knows, by the path's suffix.
WRITTEN_FORMATS = ("arff", "libsvm", "csv", "npz")


def write_file(dataset: Dataset, path, *, arff: str = "mulan") -> str:
    """Write ``dataset`` in the format its path names (the suffixes :func:`load_file` reads).

    Parameters
    ----------
    dataset : Dataset
        The data to write.
    path : str or path-like
        The file; its suffix chooses the format.
    arff : {"mulan", "meka"}, default="mulan"
        The ARFF flavour: "mulan" (the ARFF file and ``NAME.xml`` beside it) or "meka" (one file,
        labels first).

    Returns
    -------
    str
        The format written: "mulan", "meka", "libsvm", "csv" or "npz".

    Raises
    ------
    ValueError
        For an unknown ``arff``, a suffix of no format, or an ``.npz.gz``.
    """
    from .arff import write_meka, write_mulan

    if arff not in ("mulan", "meka"):
        raise ValueError(f"arff must be 'mulan' or 'meka', got {arff!r}")
    kind = format_of(Path(path))
    if kind == "npz" and os.fspath(path).endswith(".gz"):
        raise ValueError(f"{path}: an .npz file is a zip archive already; write NAME.npz")
    if kind == "arff":
        (write_mulan if arff == "mulan" else write_meka)(dataset, path)
        return arff
    writers = {"libsvm": write_libsvm, "csv": write_csv, "npz": write_npz}
    if kind not in writers:
        raise ValueError(
            f"{path}: unknown data format; write .arff (Mulan, or MEKA), .svm, .libsvm or .txt (LibSVM), .csv (each "
            "optionally .gz) or .npz"
        )
    writers[kind](dataset, path)
    return kind
