"""NumPy ``.npz`` archives: X and Y as arrays, dense or sparse, and optionally their names.

The archive's members (each a ``.npy`` array; :func:`numpy.savez` writes ``KEY.npy`` for ``KEY=``):

========================================  ==========================================================
``X``                                     a dense (n, d) numeric array (bool, integer or float)
``X_format``, ``X_shape``, ``X_data``,    or a sparse X as :func:`scipy.sparse.save_npz` stores a
``X_indices``, ``X_indptr``               matrix, each key prefixed by ``X_``: ``X_format`` is
                                          ``"csr"`` or ``"csc"`` (or ``"coo"``, with ``X_row`` and
                                          ``X_col`` instead of indices and indptr)
``Y``, or ``Y_format``, ... the same      the labels, (n, L), every value 0 or 1
``feature_names``, ``label_names``        optional 1-D string arrays; else the names are
                                          ``x0..`` and ``y0..``
``feature_prefix`` + ``feature_start``    optional, in place of ``feature_names``: the names
(``label_prefix`` + ``label_start``)      ``PREFIX{start}``, ``PREFIX{start + 1}``, ... (what
                                          :func:`write_npz` stores for generated names)
========================================  ==========================================================

so ``np.savez("mine.npz", X=X, Y=Y)`` is a dataset file.  Any other member is refused (a file
meant for another program), as are object arrays: :func:`numpy.savez` of a scipy matrix
pickles it, and a pickle runs code when it is read.  Duplicate entries of a sparse matrix are
summed, as scipy does.

Reading is bounded before anything is allocated: the archive's directory is read first (at
most :data:`MAX_MEMBERS` members in 64 KiB of directory); each member must be stored or
deflated, may inflate to at most ``max_bytes`` (the readers' cap, :func:`~._files.byte_cap`)
and to at most ``max_ratio`` times its compressed size (default
:data:`~multilabel_core.persistence.MAX_INFLATION_RATIO`, the model files' zip-bomb bound;
any ratio up to 1 MiB); the shape an array's header declares must account for exactly the
bytes the member holds; and the arrays are read with ``allow_pickle=False``.
"""

from __future__ import annotations

import io
import numbers
import os
import zipfile
import zlib

import numpy as np
import scipy.sparse as sp

from ..validation import check_scalar
from ._dataset import Dataset, IndexNames
from ._files import DataFormatError, open_regular, byte_cap, check_dense_size, dataset_name, over_cap, size_text
from .storage import check_sparse, to_storage
from .libsvm import MAX_COLUMNS

__all__ = ["MAX_MEMBERS", "read_npz", "write_npz"]

#: The most members an archive may list: the largest layout has 16 (sparse X and Y, two names each).
MAX_MEMBERS = 32
_DIRECTORY_MAX_BYTES = 1 << 16
_HEADER_MAX_BYTES = 10_000
_CHUNK = 1 << 20  # numpy's own bound on an .npy header it parses without allow_pickle
_SPARSE_FORMATS = {"csr": ("data", "indices", "indptr"), "csc": ("data", "indices", "indptr"), "coo": ("data", "row", "col")}
_PARTS = {"format", "shape", "data", "indices", "indptr", "row", "col"}
_NAMES_KEYS = {f"{kind}_{what}" for kind in ("feature", "label") for what in ("names", "prefix", "start")}
KEYS = {"X", "Y"} | {f"{m}_{part}" for m in "XY" for part in _PARTS} | _NAMES_KEYS
_NAME_BYTES = 64  # a name held as a Python string, beside its characters (as for CSV headers)


def read_npz(
    path, *, sparse="auto", max_columns: int = MAX_COLUMNS, max_bytes: int | None = None,
    max_ratio: float | None = None,
) -> Dataset:
    """Read a dataset from an ``.npz`` archive (see the module docstring for the layout).

    Parameters
    ----------
    path : str or path-like
        The ``.npz`` archive (not gzipped: it is a zip archive already).
    sparse : "auto", True or False
        "auto" keeps a dense X dense and a sparse one CSR unless more than
        :data:`~.storage.DENSE_ABOVE` of its entries are stored; True: CSR; False: dense.
    max_columns : int
        The widest sparse X or Y read (default :data:`~multilabel_core.datasets.MAX_COLUMNS`).
    max_bytes : int, optional
        The cap on each member's inflated size and each dense array built (:func:`~._files.byte_cap`).
    max_ratio : float, optional
        How many times its compressed size a member may inflate to (module docstring).

    Returns
    -------
    Dataset
        Named after the file.

    Raises
    ------
    DataFormatError
        Naming the file and the member: not a zip archive, a member over a bound, an object
        array, an unknown member, a shape or value that is not a dataset's.
    """
    from ..persistence import ratio_cap

    check_scalar(max_columns, "max_columns", kind=numbers.Integral, low=1)
    sparse = check_sparse(sparse)
    ratio = ratio_cap(max_ratio)
    cap = byte_cap(max_bytes)
    arrays = _read_members(path, cap, ratio)
    X = _matrix(path, arrays, "X", max_columns, cap)
    Y = _matrix(path, arrays, "Y", max_columns, cap)
    if X.shape[0] != Y.shape[0]:
        raise DataFormatError(path, None, f"X has {X.shape[0]} rows but Y has {Y.shape[0]}")
    Y = _labels(path, Y, max_bytes)
    X = _features(path, X)
    feature_names = _names(path, arrays, "feature", X.shape[1], cap)
    label_names = _names(path, arrays, "label", Y.shape[1], cap)
    names = {"feature_names": feature_names, "label_names": label_names}
    return Dataset(
        to_storage(X, sparse, path=path, max_bytes=max_bytes), Y, name=dataset_name(path),
        **{key: value for key, value in names.items() if value is not None},
    )


def _check_keys(path, keys: list[str]) -> None:
    """DataFormatError for a member a dataset file does not hold (checked before any member is read)."""
    extra = sorted(set(keys) - KEYS)
    if {"format", "shape", "data"} <= set(extra):
        raise DataFormatError(
            path, None, "holds one matrix as scipy.sparse.save_npz writes it, not a dataset: write X and Y with "
            "write_npz, or np.savez(X=..., Y=...)"
        )
    if extra:
        raise DataFormatError(
            path, None, f"holds member(s) {', '.join(map(repr, extra[:5]))} that a dataset file does not; the members "
            f"are X, Y (or their sparse parts X_format, X_shape, X_data, ...) and the optional feature_names, "
            f"label_names"
        )


def _read_members(path, cap: int, ratio: float) -> dict[str, np.ndarray]:
    """Every member of the archive as an array, each checked against the bounds before it is read."""
    from ..persistence import zip_directory, ratio_allows

    handle, size = open_regular(path)
    with handle:

        def read_at(offset, length):
            handle.seek(offset)
            return handle.read(length)

        directory = zip_directory(read_at, size)
        if directory is None:
            raise DataFormatError(path, None, "is not an .npz file (not a zip archive: no end of central directory record)")
        entries, _, directory_size, _, _ = directory
        if entries > MAX_MEMBERS or directory_size > _DIRECTORY_MAX_BYTES:
            raise DataFormatError(
                path, None, f"lists {entries} member(s) in {directory_size} bytes of directory; a dataset file holds at "
                f"most {MAX_MEMBERS} members"
            )
        handle.seek(0)
        try:
            archive = zipfile.ZipFile(handle)
            infos = archive.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
            raise DataFormatError(path, None, f"is not a readable .npz file (corrupt zip archive: {exc})") from None
        keys = []
        for info in infos:
            key = info.filename.removesuffix(".npy")
            if key == info.filename:
                raise DataFormatError(path, None, f"member {info.filename[:60]!r} is not an .npy array")
            if key in keys:
                raise DataFormatError(path, None, f"member {info.filename[:60]!r} is listed twice")
            keys.append(key)
        _check_keys(path, keys)
        arrays = {}
        with archive:
            for key, info in zip(keys, infos):
                where = f"member {info.filename[:60]!r}"
                if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                    raise DataFormatError(path, None, f"{where} is compressed with method {info.compress_type}; "
                                          ".npz members are stored or deflated")
                if info.file_size > cap + _HEADER_MAX_BYTES:
                    raise DataFormatError(path, None, f"{where} inflates to {size_text(info.file_size)}, {over_cap(cap)}")
                if not ratio_allows(info.file_size, info.compress_size, ratio):
                    raise DataFormatError(
                        path, None, f"{where} declares {info.file_size} bytes inflated from {info.compress_size}, "
                        f"{info.file_size / max(info.compress_size, 1):.0f} times; a member may inflate to at most "
                        f"{ratio:g} times its compressed size (over 1 MiB): a zip bomb, or a file to read with "
                        "max_ratio= or $MULTILABEL_CORE_MODEL_MAX_RATIO if you trust it"
                    )
                arrays[key] = _read_array(path, archive, info, where)
    return arrays


def _read_array(path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, where: str) -> np.ndarray:
    try:
        with archive.open(info) as member:
            version = np.lib.format.read_magic(member)
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f"an .npy format version {version} (1.0 and 2.0 are read)")
            read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran_order, dtype = read_header(member, max_header_size=_HEADER_MAX_BYTES)
            if dtype.hasobject:
                raise DataFormatError(
                    path, None, f"{where} is an object array, which only a pickle can hold (np.savez of a scipy sparse "
                    "matrix makes one); pickles are never read: store a sparse X as X_format, X_shape, X_data, "
                    "X_indices, X_indptr (write_npz does)"
                )
            count = int(np.prod(shape, dtype=object))
            header_size = member.tell()
            if count * dtype.itemsize != info.file_size - header_size:
                raise DataFormatError(
                    path, None, f"{where} declares a {dtype} array of shape {shape} ({count * dtype.itemsize} bytes) but "
                    f"holds {info.file_size - header_size} bytes of data"
                )
            nbytes = count * dtype.itemsize
            buffer = bytearray(nbytes)
            view, filled = memoryview(buffer), 0
            while filled < nbytes:
                got = member.readinto(view[filled:filled + _CHUNK])
                if not got:
                    break
                filled += got
            if filled != nbytes or member.read(1):  # the read at the end checks the CRC
                raise DataFormatError(path, None, f"{where} holds {filled} bytes of data, not the {nbytes} it declares")
            return np.frombuffer(buffer, dtype=dtype).reshape(shape, order="F" if fortran_order else "C")
    except DataFormatError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error, SyntaxError, TypeError) as exc:
        reason = " ".join(str(exc).split())[:200]  # one line: numpy's messages may hold line breaks
        raise DataFormatError(path, None, f"{where} cannot be read: {type(exc).__name__}: {reason}") from None


def _text(value: np.ndarray) -> str | None:
    if value.ndim != 0 or value.dtype.kind not in "SU":
        return None
    item = value.item()
    return item.decode("ascii", "replace") if isinstance(item, bytes) else item


def _matrix(path, arrays: dict, key: str, max_columns: int, cap: int):
    dense = arrays.get(key)
    parts = {name[len(key) + 1:]: value for name, value in arrays.items() if name.startswith(f"{key}_")}
    if dense is not None and parts:
        raise DataFormatError(path, None, f"holds both a dense {key} and the sparse parts {', '.join(sorted(parts))}")
    if dense is not None:
        if dense.ndim != 2:
            raise DataFormatError(path, None, f"{key} has shape {dense.shape}; it must be 2-D (rows, columns)")
        return dense
    if not parts:
        raise DataFormatError(path, None, f"holds no {key} (a dense array {key}, or the sparse parts {key}_format, ...)")
    fmt = _text(parts.get("format", np.array(None, dtype=object)))
    if fmt not in _SPARSE_FORMATS:
        raise DataFormatError(path, None, f"{key}_format is {fmt!r}; sparse matrices are 'csr', 'csc' or 'coo'")
    needed = ("shape",) + _SPARSE_FORMATS[fmt]
    missing = [f"{key}_{part}" for part in needed if part not in parts]
    unused = sorted(f"{key}_{part}" for part in set(parts) - set(needed) - {"format"})
    if missing or unused:
        raise DataFormatError(
            path, None, f"a {fmt} {key} needs {', '.join(f'{key}_{p}' for p in needed)}"
            + (f"; missing {', '.join(missing)}" if missing else "") + (f"; {', '.join(unused)} unused" if unused else "")
        )
    shape = parts["shape"]
    if shape.shape != (2,) or shape.dtype.kind not in "iu" or (shape < 0).any():
        raise DataFormatError(path, None, f"{key}_shape must be two non-negative integers, got {shape.tolist()!r}")
    n, width = (int(v) for v in shape)
    if width > max_columns:
        raise DataFormatError(
            path, None, f"{key}_shape declares {width} columns, beyond the limit of {max_columns} (max_columns)"
        )
    for part in _SPARSE_FORMATS[fmt]:
        value = parts[part]
        kinds = "biuf" if part == "data" else "iu"
        if value.ndim != 1 or value.dtype.kind not in kinds:
            raise DataFormatError(path, None, f"{key}_{part} must be a 1-D {'numeric' if part == 'data' else 'integer'} "
                                  f"array, got {value.dtype} of shape {value.shape}")
    data = parts["data"]
    if fmt == "coo":
        row, col = parts["row"].astype(np.int64), parts["col"].astype(np.int64)
        _check_lengths(path, key, {"data": data.size, "row": row.size, "col": col.size})
        _check_range(path, key, "row", row, n)
        _check_range(path, key, "col", col, width)
        return sp.csr_matrix((data, (row, col)), shape=(n, width))
    outer, inner = (n, width) if fmt == "csr" else (width, n)
    indptr, indices = parts["indptr"].astype(np.int64), parts["indices"].astype(np.int64)
    if indptr.size != outer + 1:
        raise DataFormatError(path, None, f"{key}_indptr has {indptr.size} entries; a {fmt} matrix of shape {(n, width)} "
                              f"needs {outer + 1}")
    _check_lengths(path, key, {"data": data.size, "indices": indices.size})
    if indptr[0] != 0 or indptr[-1] != data.size or (np.diff(indptr) < 0).any():
        raise DataFormatError(path, None, f"{key}_indptr must rise from 0 to the {data.size} stored values without "
                              "decreasing")
    _check_range(path, key, "indices", indices, inner)
    build = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
    matrix = build((data, indices, indptr), shape=(n, width))
    return sp.csr_matrix(matrix)


def _check_lengths(path, key: str, lengths: dict) -> None:
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{key}_{part} {size}" for part, size in lengths.items())
        raise DataFormatError(path, None, f"the sparse parts of {key} differ in length ({listed})")


def _check_range(path, key: str, part: str, values: np.ndarray, limit: int) -> None:
    bad = (values < 0) | (values >= limit)
    if bad.any():
        k = int(np.argmax(bad))
        raise DataFormatError(path, None, f"{key}_{part}[{k}] is {int(values[k])}, outside 0..{limit - 1}")


def _values(X):
    return X.data if sp.issparse(X) else X


def _features(path, X):
    values = _values(X)
    if values.dtype.kind not in "biuf":
        raise DataFormatError(path, None, f"X has dtype {values.dtype}; features are numbers (bool, integer or float)")
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values)
        if bad.any():
            k = int(np.argmax(bad))
            if sp.issparse(X):
                row, column = int(np.searchsorted(X.indptr, k, side="right")) - 1, int(X.indices[k])
            else:
                row, column = np.unravel_index(k, X.shape)
            raise DataFormatError(path, None, f"X holds {int(bad.sum())} value(s) that are not finite (the first, "
                                  f"{values.flat[k].item()!r}, at row {row}, column {column})")
    return X


def _labels(path, Y, max_bytes) -> np.ndarray:
    values = _values(Y)
    if values.dtype.kind not in "biuf":
        raise DataFormatError(path, None, f"Y has dtype {values.dtype}; labels are 0 or 1 (bool, integer or float)")
    bad = (values != 0) & (values != 1)
    if bad.any():
        first = values.flat[int(np.argmax(bad))].item()
        raise DataFormatError(path, None, f"Y holds {int(bad.sum())} value(s) other than 0 and 1 (the first "
                              f"{first!r}); labels must be 0 or 1")
    if sp.issparse(Y):
        check_dense_size(path, Y.shape, 1, "the label matrix Y (int8)", max_bytes)
        Y = Y.toarray()
    return Y.astype(np.int8)


def _names(path, arrays: dict, kind: str, count: int, cap: int):
    names, prefix, start = (arrays.get(f"{kind}_{what}") for what in ("names", "prefix", "start"))
    if names is not None and (prefix is not None or start is not None):
        raise DataFormatError(path, None, f"holds both {kind}_names and {kind}_prefix/{kind}_start; give one")
    if (prefix is None) != (start is None):
        raise DataFormatError(path, None, f"{kind}_prefix and {kind}_start go together")
    if prefix is not None:
        text = _text(prefix)
        if text is None or start.ndim != 0 or start.dtype.kind not in "iu" or int(start) < 0:
            raise DataFormatError(path, None, f"{kind}_prefix must be a string and {kind}_start a non-negative integer")
        return IndexNames(text, int(start), count)
    if names is None:
        return None
    if names.ndim != 1 or names.dtype.kind != "U":
        raise DataFormatError(path, None, f"{kind}_names must be a 1-D array of strings, got {names.dtype} of shape "
                              f"{names.shape}")
    if names.size != count:
        raise DataFormatError(path, None, f"{kind}_names holds {names.size} names for {count} {kind} columns")
    if count * _NAME_BYTES > cap:
        raise DataFormatError(path, None, f"the {count} {kind} names would take about "
                              f"{size_text(count * _NAME_BYTES)} in memory, {over_cap(cap)}")
    listed = tuple(names.tolist())
    if len(set(listed)) != len(listed):
        repeated = next(name for k, name in enumerate(listed) if name in listed[:k])
        raise DataFormatError(path, None, f"{kind} name {repeated[:40]!r} is used twice; names must be distinct")
    return listed


def write_npz(dataset: Dataset, path, *, compress: bool = True) -> None:
    """Write ``dataset`` as an ``.npz`` archive that :func:`read_npz` reads back exactly.

    Parameters
    ----------
    dataset : Dataset
        A dense X is stored as ``X``, a sparse one as its CSR parts (``X_format``, ``X_shape``,
        ``X_data``, ``X_indices``, ``X_indptr``); Y as an int8 ``Y``; the names as string arrays
        (generated names as ``*_prefix`` and ``*_start``).
    path : str or path-like
        The ``.npz`` file to write.
    compress : bool
        Deflate the members (:func:`numpy.savez_compressed`'s choice), except a member that
        would inflate more than :data:`~multilabel_core.persistence.MAX_INFLATION_RATIO` times:
        it is stored, so that the file always passes the reader's zip-bomb bound.
    """
    from ..persistence import MAX_INFLATION_RATIO, ratio_allows

    X = dataset.X
    members = {}
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        members.update(X_format=np.array("csr"), X_shape=np.array(X.shape, dtype=np.int64), X_data=X.data,
                       X_indices=X.indices, X_indptr=X.indptr)
    else:
        members["X"] = np.asarray(X)
    members["Y"] = np.asarray(dataset.Y, dtype=np.int8)
    for kind, names in (("feature", dataset.feature_names), ("label", dataset.label_names)):
        if isinstance(names, IndexNames):
            members[f"{kind}_prefix"] = np.array(names.prefix)
            members[f"{kind}_start"] = np.array(names.start, dtype=np.int64)
        else:
            members[f"{kind}_names"] = np.array(list(names), dtype=str) if len(names) else np.zeros(0, dtype="U1")
    with zipfile.ZipFile(os.fspath(path), "w", allowZip64=True) as archive:
        for key, value in members.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.asarray(value, order="C"), allow_pickle=False)  # 0-d stays 0-d
            raw = buffer.getvalue()
            method = zipfile.ZIP_STORED
            if compress:
                packer = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15)
                packed = len(packer.compress(raw)) + len(packer.flush())
                if ratio_allows(len(raw), packed, MAX_INFLATION_RATIO):
                    method = zipfile.ZIP_DEFLATED
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            archive.writestr(info, raw)
