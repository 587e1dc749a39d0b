"""Multi-label data: the :class:`Dataset` record, file formats, lookup by name, downloads,
statistics and synthetic data.

- :mod:`.arff`: Mulan (ARFF + XML label file) and MEKA (``-C L`` relation) readers/writers;
- :mod:`.libsvm`: the LibSVM multi-label format;
- :mod:`.csv`: CSV with a header line, label columns chosen by position, name or prefix;
- :mod:`.npz`: NumPy ``.npz`` archives of X and Y, dense or sparse;
- :mod:`.loading`: :func:`load_dataset` by path or by name (data folders, then the cache);
  ``A+B`` joins two datasets' rows (:mod:`.combine`: :func:`concatenate`);
- :mod:`.fetch`: :func:`fetch_dataset` downloads registered datasets, checksums verified;
- :mod:`.catalog`: :func:`known_datasets` lists the registered datasets and where each is at hand;
- :mod:`.stats`: :func:`describe`, the statistics of MLRL Table I;
- :mod:`.synthetic`: :func:`make_correlated_multilabel`, data with a known label covariance.

docs/datasets.md lists the registered datasets; docs/data-formats.md describes every format, the
nominal encoding and the errors.
"""

from ._dataset import Dataset, IndexNames, NominalFeature
from ._files import MAX_BYTES, MAX_BYTES_ENV, DataFormatError
from .storage import DENSE_ABOVE
from .arff import read_meka, read_mulan, write_meka, write_mulan
from .catalog import known_datasets
from .combine import concatenate
from .csv import LABEL_PREFIX, read_csv, write_csv
from .fetch import cache_dir, fetch_dataset
from .libsvm import MAX_COLUMNS, read_libsvm, write_libsvm
from .loading import load_dataset
from .npz import read_npz, write_npz
from .stats import describe
from .synthetic import label_covariance, make_correlated_multilabel

__all__ = [
    "DENSE_ABOVE",
    "MAX_BYTES",
    "MAX_BYTES_ENV",
    "MAX_COLUMNS",
    "DataFormatError",
    "Dataset",
    "IndexNames",
    "LABEL_PREFIX",
    "NominalFeature",
    "cache_dir",
    "concatenate",
    "describe",
    "fetch_dataset",
    "known_datasets",
    "label_covariance",
    "load_dataset",
    "make_correlated_multilabel",
    "read_csv",
    "read_libsvm",
    "read_meka",
    "read_mulan",
    "read_npz",
    "write_csv",
    "write_libsvm",
    "write_meka",
    "write_mulan",
    "write_npz",
]
