"""What datasets are known by name, and which of them are at hand: :func:`known_datasets`.

"Known" means registered by a plugin (:func:`multilabel_core.list_datasets`; the core registers
the standard Mulan benchmarks, docs/datasets.md).  "At hand" follows the two ways a dataset is
reached by name: :func:`~.loading.load_dataset` reads ``NAME.arff`` (or a LibSVM file) from the
first folder of :func:`~.loading.search_path` that holds one, and :func:`~.fetch.fetch_dataset`
downloads nothing when every file is in its cache with the registered checksum.
"""

from __future__ import annotations

from pathlib import Path

from ..plugins import list_datasets
from ..registry import DatasetSpec
from .fetch import sha256_of, cache_dir
from .loading import named_file, search_path

__all__ = ["NOT_DOWNLOADED", "known_datasets"]

#: The ``location`` of a registered dataset found in none of the searched folders.
NOT_DOWNLOADED = "not downloaded"


def known_datasets(data_home=None, *, verify: bool = True) -> list[dict]:
    """List one record per registered dataset: what it is, and where it is available now.

    Parameters
    ----------
    data_home : str or path-like, optional
        The folder given to :func:`~.loading.load_dataset` and :func:`~.fetch.fetch_dataset`:
        searched first for the data files, and the download cache when given (otherwise the cache
        is ``$MULTILABEL_CORE_CACHE`` or ``~/.cache/multilabel_core``).
    verify : bool, default True
        Whether ``cached`` compares each cached file's SHA-256 with the registered one (as
        ``fetch_dataset`` does before using it), which reads every cached file; with False a file
        that is present counts.

    Returns
    -------
    list of dict
        Sorted by name; plain JSON values only.  Keys:

        - ``name``, ``format``, ``citation``, ``plugin``: as registered
          (:class:`~multilabel_core.registry.DatasetSpec`);
        - ``n_samples``, ``n_features``, ``n_labels``, ``label_cardinality``, ``sparse``: the
          registered description (None where the plugin gave none);
        - ``splits``: role -> name of the registered datasets holding its standard split
          (``{"train": "emotions-train", "test": "emotions-test"}``), empty when there is none;
          ``split_of``: for such a part, the whole dataset's name, else None;
        - ``files``: the file names ``fetch_dataset`` downloads;
        - ``location``: where ``load_dataset(name, data_home)`` would read it from, the first
          folder of :func:`~.loading.search_path` holding its data file: ``"data_home"``,
          ``"$MULTILABEL_CORE_DATA"`` or ``"download cache"``, else ``"not downloaded"``
          (:data:`NOT_DOWNLOADED`);
        - ``path``: that data file (str), or None;
        - ``cached``: True when every file is in the download cache with the registered checksum,
          so that ``fetch_dataset(name, data_home)`` needs no network.

    Raises
    ------
    ValueError
        ``verify`` is not a bool.

    Examples
    --------
    >>> from multilabel_core.datasets import fetch_dataset, known_datasets
    >>> ds = fetch_dataset("emotions")  # doctest: +SKIP
    >>> [(d["name"], d["location"], d["cached"]) for d in known_datasets()][:3]  # doctest: +SKIP
    [('bibtex', 'not downloaded', False), ('cal500', 'not downloaded', False), ('corel5k', 'not downloaded', False)]
    """
    if not isinstance(verify, bool):
        raise ValueError(f"verify must be True or False, got {verify!r}")
    folders = [(where, folder) for where, folder in search_path(data_home) if folder is not None]
    cache = cache_dir(data_home)
    return [_record(spec, folders, cache, verify) for spec in list_datasets()]


def _record(spec: DatasetSpec, folders: list[tuple[str, Path]], cache: Path, verify: bool) -> dict:
    location, path = NOT_DOWNLOADED, None
    for where, folder in folders:
        found = named_file(folder, spec.name)
        if found is not None:
            location, path = where, str(found)
            break
    return {
        "name": spec.name,
        "format": spec.format,
        "n_samples": spec.n_samples,
        "n_features": spec.n_features,
        "n_labels": spec.n_labels,
        "label_cardinality": spec.label_cardinality,
        "sparse": spec.sparse,
        "splits": dict(spec.splits),
        "split_of": spec.split_of,
        "citation": spec.citation,
        "plugin": spec.plugin,
        "files": list(spec.files),
        "location": location,
        "path": path,
        "cached": _cached(spec, cache, verify),
    }


def _cached(spec: DatasetSpec, cache: Path, verify: bool) -> bool:
    for filename, (_, digest) in spec.files.items():
        target = cache / filename
        if Path(filename).name != filename or not target.is_file() or (verify and sha256_of(target) != digest):
            return False
    return True
