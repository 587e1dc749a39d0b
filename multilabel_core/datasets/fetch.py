"""Downloading registered datasets into a cache folder, with SHA-256 verification.

A dataset is described by a :class:`~multilabel_core.registry.DatasetSpec`: its files,
each with a URL and the SHA-256 of its content, and its format.  Specs are registered
by plugins through the ``register_datasets`` hook (the core's own list is
:data:`.sources.SOURCES`); :func:`fetch_dataset` takes a registered name or a spec.

Cache: ``data_home`` if given, else ``$MULTILABEL_CORE_CACHE``, else
``~/.cache/multilabel_core``.  Files are stored flat under their spec file names, so
:func:`~.loading.load_dataset` finds a fetched dataset by its name.  A cached file
whose checksum matches is used as it is (no network); ``force=True`` downloads again.

Mirror: ``base_url`` (or ``$MULTILABEL_CORE_MIRROR``) replaces the scheme and host of
every URL and keeps its path, so ``https://host/a/b/x.arff`` is fetched from
``BASE_URL/a/b/x.arff``; ``file://`` URLs work too.

A download goes to ``NAME.part`` and is renamed only when its checksum matches; on a
mismatch the download is deleted and ValueError names the file, both digests and the
URL.  Network failures raise OSError naming the URL.
"""

from __future__ import annotations

import hashlib
import os
import re
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from ..plugins import list_datasets
from ..registry import DatasetSpec
from ._dataset import Dataset
from ._files import strip_suffix
from .arff import read_meka, read_mulan
from .libsvm import read_libsvm

__all__ = ["CACHE_ENV", "MIRROR_ENV", "cache_dir", "fetch_dataset", "registered_dataset"]

CACHE_ENV = "MULTILABEL_CORE_CACHE"
MIRROR_ENV = "MULTILABEL_CORE_MIRROR"
TIMEOUT_S = 60
_CHUNK = 1 << 20
_SHA256 = re.compile(r"[0-9a-f]{64}")


def cache_dir(data_home=None) -> Path:
    """Return the download cache folder (module docstring); not created here.

    Parameters
    ----------
    data_home : str or path-like, optional
        The folder to use; None: ``$MULTILABEL_CORE_CACHE``, else ``~/.cache/multilabel_core``.

    Returns
    -------
    pathlib.Path
        The cache folder.
    """
    if data_home is not None:
        return Path(data_home)
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "multilabel_core"


def fetch_dataset(spec_or_name, data_home=None, *, base_url: str | None = None, force: bool = False) -> Dataset:
    """Download (or reuse from the cache) a dataset's files, verify them, and read the dataset.

    Parameters
    ----------
    spec_or_name : str or DatasetSpec
        A registered dataset name (see :func:`multilabel_core.list_datasets`) or a
        :class:`~multilabel_core.registry.DatasetSpec`.
    data_home : str or path-like, optional
        The cache folder (:func:`cache_dir`); created when missing.
    base_url : str, optional
        A mirror replacing the scheme and host of every URL (its path kept); None:
        ``$MULTILABEL_CORE_MIRROR``, else the URLs as registered.
    force : bool, default=False
        Download again even when a cached file's checksum matches.

    Returns
    -------
    Dataset
        The dataset read from the verified files.

    Raises
    ------
    ValueError
        For an unknown name, a malformed spec, or a download whose SHA-256 does not match (the
        download is deleted).
    OSError
        When a download fails, naming the URL.
    """
    spec = spec_or_name if isinstance(spec_or_name, DatasetSpec) else registered_dataset(spec_or_name)
    folder = cache_dir(data_home)
    folder.mkdir(parents=True, exist_ok=True)
    base_url = base_url or os.environ.get(MIRROR_ENV) or None
    paths = [
        _fetch_file(folder, filename, url, digest, base_url, force) for filename, (url, digest) in spec.files.items()
    ]
    return _read(spec, paths)


def registered_dataset(name: str) -> DatasetSpec:
    """Return the spec registered as ``name`` by a plugin.

    Parameters
    ----------
    name : str
        A registered dataset name.

    Returns
    -------
    DatasetSpec
        Its registration.

    Raises
    ------
    ValueError
        Listing the registered names, when ``name`` is not one of them.
    """
    specs = {spec.name: spec for spec in list_datasets()}
    if name not in specs:
        raise ValueError(f"unknown dataset {name!r} to fetch. Registered: {', '.join(sorted(specs)) or 'none'}")
    return specs[name]


def _fetch_file(folder: Path, filename: str, url: str, digest: str, base_url: str | None, force: bool) -> Path:
    if Path(filename).name != filename or filename.startswith("."):
        raise ValueError(f"dataset file name {filename!r} must be a plain file name")
    if not _SHA256.fullmatch(digest):
        raise ValueError(f"{filename}: {digest!r} is not a SHA-256 digest (64 lower-case hex digits)")
    target = folder / filename
    if target.is_file() and not force:
        if sha256_of(target) == digest:
            return target
        target.unlink()  # a damaged or outdated cache entry is downloaded again
    source = url if base_url is None else _mirrored(url, base_url)
    partial = target.with_name(target.name + ".part")
    try:
        actual = _download(source, partial)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise OSError(f"could not download {filename} from {source}: {exc}") from exc
    if actual != digest:
        partial.unlink()
        raise ValueError(
            f"checksum mismatch for {filename} downloaded from {source}: expected SHA-256 {digest}, "
            f"got {actual}; the download was deleted"
        )
    os.replace(partial, target)
    return target


def _mirrored(url: str, base_url: str) -> str:
    return base_url.rstrip("/") + "/" + urlsplit(url).path.lstrip("/")


def _download(url: str, destination: Path) -> str:
    """Stream ``url`` into ``destination``; return the SHA-256 of what was written."""
    digest = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response, open(destination, "wb") as out:
        while chunk := response.read(_CHUNK):
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest()


def sha256_of(path: Path) -> str:
    """Return the SHA-256 hex digest of a file, read in chunks (the catalog verifies downloads with it)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _read(spec: DatasetSpec, paths: list[Path]) -> Dataset:
    if spec.format == "libsvm":
        path = _one(spec, paths, (".svm", ".libsvm", ".txt"))
        return read_libsvm(path, n_features=spec.n_features, n_labels=spec.n_labels)
    arff = _one(spec, paths, (".arff",))
    if spec.format == "meka":
        return read_meka(arff)
    return read_mulan(arff, _one(spec, paths, (".xml",)))


def _one(spec: DatasetSpec, paths: list[Path], suffixes: tuple[str, ...]) -> Path:
    matching = [path for path in paths if strip_suffix(path, suffixes) is not None]
    if len(matching) != 1:
        raise ValueError(
            f"dataset {spec.name!r} ({spec.format}) needs exactly one file ending in {' or '.join(suffixes)}, "
            f"got {[path.name for path in paths]}"
        )
    return matching[0]
