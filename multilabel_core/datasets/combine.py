"""Joining datasets row-wise: a Mulan train file and its test file as one dataset.

Papers evaluate on the standard Mulan train/test files (``emotions-train.arff`` and
``emotions-test.arff``, ...).  :func:`concatenate` stacks such parts into one
:class:`~._dataset.Dataset` that remembers their sizes (``Dataset.parts``), so the
experiments' ``given`` protocol can split it back at the boundary, and the other
protocols can redraw splits of the same sizes from the same rows.
:func:`~.loading.load_dataset` reads a name ``A+B`` this way.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._dataset import Dataset, IndexNames

__all__ = ["concatenate"]


def concatenate(datasets, name: str | None = None) -> Dataset:
    """Stack the rows of ``datasets`` in order, as one :class:`~._dataset.Dataset`.

    The parts must have the same number of features, the same label names in the same
    order, the same nominal-feature encoding and, when both parts' files name their
    features (ARFF does; LibSVM and unnamed arrays do not), the same feature names.

    Parameters
    ----------
    datasets : iterable of Dataset
        At least two datasets.
    name : str or None, default=None
        The result's name; None: the parts' names joined by ``+``.

    Returns
    -------
    Dataset
        The joined rows.  X stays as the parts hold it: dense when every part is dense, else CSR
        (a dense part is converted; a sparse one is never densified).  Its ``parts`` are the parts'
        row counts (a part that is itself a join contributes its own ``parts``).

    Raises
    ------
    ValueError
        For fewer than two datasets, or naming the two parts and what differs.
    """
    datasets = list(datasets)
    if len(datasets) < 2:
        raise ValueError(f"concatenate needs at least two datasets, got {len(datasets)}")
    first = datasets[0]
    for other in datasets[1:]:
        _check_compatible(first, other)
    if any(dataset.is_sparse for dataset in datasets):
        X = sp.vstack([sp.csr_matrix(dataset.X) for dataset in datasets], format="csr")
    else:
        X = np.vstack([dataset.X for dataset in datasets])
    named = next((d.feature_names for d in datasets if not isinstance(d.feature_names, IndexNames)), None)
    return Dataset(
        X,
        np.vstack([dataset.Y for dataset in datasets]),
        feature_names=first.feature_names if named is None else named,
        label_names=first.label_names,
        name="+".join(dataset.name for dataset in datasets) if name is None else name,
        nominal_features=first.nominal_features,
        parts=[size for dataset in datasets for size in (dataset.parts or (dataset.n_samples,))],
    )


def _check_compatible(first: Dataset, other: Dataset) -> None:
    """ValueError naming both datasets and every way their columns differ."""
    differences = []
    if first.n_features != other.n_features:
        differences.append(f"{first.n_features} vs {other.n_features} features")
    elif not _generated(first.feature_names, other.feature_names) and first.feature_names != other.feature_names:
        differences.append(_first_difference("feature", first.feature_names, other.feature_names))
    if first.label_names != other.label_names:
        if first.n_labels != other.n_labels:
            differences.append(f"{first.n_labels} vs {other.n_labels} labels")
        elif set(first.label_names) == set(other.label_names):
            differences.append("the same labels in another order")
        else:
            differences.append(_first_difference("label", first.label_names, other.label_names))
    if first.nominal_features != other.nominal_features and first.n_features == other.n_features:
        differences.append("different nominal-feature encodings")
    if differences:
        raise ValueError(
            f"cannot join datasets {first.name!r} and {other.name!r}: {'; '.join(differences)}"
        )


def _generated(a, b) -> bool:
    """Whether either name list was made up by the reader (the format gives no names)."""
    return isinstance(a, IndexNames) or isinstance(b, IndexNames)


def _first_difference(kind: str, a, b) -> str:
    j = next(j for j, (x, y) in enumerate(zip(a, b)) if x != y)
    return f"{kind} {j} is named {a[j]!r} vs {b[j]!r}"
