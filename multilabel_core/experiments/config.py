"""What an experiment is: methods, datasets, protocol, grids, selection; and the experiment file.

:class:`Experiment` is the configuration of one comparison.  Its :meth:`~Experiment.canonical`
form (with the datasets' content fingerprints and the package version) is what the
results store hashes, so a run is resumed only under exactly the same configuration.
The report settings (``reference``, ``reference_method``, ``alpha``) are not part of it:
they change how results are shown, not the results; nor is a method's ``n_jobs``: its label
threads give the same model bitwise for every thread count (tests/test_parallel.py).

An experiment file is TOML (read with :mod:`tomllib`), or YAML when PyYAML is installed
(``.yaml``/``.yml``), with the keys of :data:`FILE_KEYS`::

    methods = ["br"]
    datasets = ["emotions", "yeast"]   # "emotions-train+emotions-test": two files' rows joined
    protocol = "kfold"
    preprocess = "standardize"
    seed = 0
    select = "average_precision"   # the metric the inner search chooses by (alias: selection_metric)
    inner_cv = 3
    grid_extensions = 3   # steps a grid may take beyond an edge its choice lies at, per parameter (0: none)
    sparse = "auto"   # or true / false: how file datasets hold their features
    constant_labels = "refuse"   # or "predict_constant": labels of one value in a training part

    [protocol_params]
    n_splits = 10

    [grid]            # for every method
    tol = [1e-6]

    [grids.br]        # for one method
    C = [0.01, 0.1, 1, 10]

    [report]
    reference = "mlrl_tables.csv"
    reference_method = "br"
    alpha = 0.05
"""

from __future__ import annotations

import ast
import hashlib
import numbers
import tomllib
from collections.abc import Mapping
from pathlib import Path

import attrs
import numpy as np
import scipy.sparse as sp

from .. import __version__
from ..validation import check_scalar
from ..datasets.storage import check_sparse, to_storage
from ..metrics import METRICS
from .constant_labels import DEFAULT_CONSTANT_LABELS, check_constant_labels
from .preprocessing import check_preprocess
from .protocols import get_protocol

__all__ = [
    "FILE_KEYS",
    "Experiment",
    "load_data",
    "load_experiment",
    "parse_grid_option",
    "parse_value",
    "read_experiment_file",
]

SYNTHETIC = "synthetic"

#: The top-level keys of an experiment file (``report`` is a table of the report settings).
FILE_KEYS = (
    "methods",
    "datasets",
    "protocol",
    "protocol_params",
    "preprocess",
    "grid",
    "grids",
    "select",
    "selection_metric",
    "inner_cv",
    "grid_extensions",
    "seed",
    "data_home",
    "sparse",
    "constant_labels",
    "report",
)
REPORT_KEYS = ("reference", "reference_method", "alpha")
ESTIMATOR_METHODS = ("get_params", "fit", "decision_function", "predict")


# ------------------------------------------------------------ command-line values
def parse_value(text: str):
    """Parse a command-line value: a Python/JSON literal, ``true``/``false``/``none``/``null``, else the string.

    Parameters
    ----------
    text : str
        The value as typed.

    Returns
    -------
    object
        The literal's value, True, False or None for those words (case ignored), else ``text``.
    """
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return {"true": True, "false": False, "none": None, "null": None}.get(text.lower(), text)


def parse_grid_option(text: str) -> tuple[str | None, str, list]:
    """Parse ``[METHOD.]NAME=v1,v2,...`` (the CLI's ``--grid``).

    The values are literals separated by commas (``C=0.1,1,10``, ``kernel=linear,rbf``);
    a value that itself holds a comma (a list) needs the experiment file.

    Parameters
    ----------
    text : str
        The option's value.

    Returns
    -------
    tuple of (str or None, str, list)
        The method (None for every method), the parameter name and the values
        (:func:`parse_value` of each).

    Raises
    ------
    ValueError
        For text not of that form.
    """
    target, sep, raw = text.partition("=")
    method, _, name = target.rpartition(".")
    if not sep or not name.isidentifier() or (method and not method.replace("-", "_").isidentifier()) or not raw:
        raise ValueError(f"--grid expects [METHOD.]NAME=v1,v2,..., got {text!r}")
    return method or None, name, [parse_value(value.strip()) for value in raw.split(",")]


# ------------------------------------------------------------------- validation
def _as_methods(value) -> dict:
    """Method names -> ``{name: None}``; a mapping ``name -> estimator`` is kept as it is."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, Mapping):
        return dict(value)
    names = list(value)
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"method(s) {repeated} given twice")
    return {name: None for name in names}


def _check_methods(instance, attribute, methods) -> None:
    from ..plugins import get_method

    if not methods:
        raise ValueError("an experiment needs at least one method")
    for name, estimator in methods.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"method names must be non-empty strings, got {name!r}")
        if estimator is None:
            get_method(name)
        elif not all(hasattr(estimator, a) for a in ESTIMATOR_METHODS):
            raise ValueError(f"method {name!r}: {estimator!r} is not an estimator ({', '.join(ESTIMATOR_METHODS)})")


def _as_datasets(value) -> tuple:
    return (value,) if isinstance(value, str) or hasattr(value, "X") else tuple(value)


def _dataset_name(dataset) -> str:
    return dataset if isinstance(dataset, str) else dataset.name


def _check_datasets(instance, attribute, datasets) -> None:
    if not datasets:
        raise ValueError("an experiment needs at least one dataset")
    for dataset in datasets:
        if not isinstance(dataset, str) and not (hasattr(dataset, "X") and hasattr(dataset, "Y")):
            raise ValueError(f"a dataset is a name, a file path or a Dataset, got {dataset!r}")
    names = [_dataset_name(d) for d in datasets]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"dataset name(s) {repeated} given twice")


def _as_grids(value) -> dict:
    grids = {}
    for method, grid in dict(value or {}).items():
        for name, values in dict(grid).items():
            if not isinstance(values, (list, tuple)):
                raise ValueError(f"the grid of method {method!r} gives {name}={values!r}; a grid needs a list")
        grids[str(method)] = {str(name): list(values) for name, values in dict(grid).items()}
    return grids


def _check_selection_metric(instance, attribute, value) -> None:
    if not isinstance(value, str) or value not in METRICS:
        raise ValueError(
            f"select (the selection metric): unknown metric {value!r}; choose from {', '.join(METRICS)}"
        )


def _check_grid_extensions(instance, attribute, value) -> None:
    if value is not None:
        check_scalar(value, "grid_extensions", kind=numbers.Integral, low=0)


def _check_scalar_field(kind, **bounds):
    return lambda instance, attribute, value: check_scalar(value, attribute.name, kind=kind, **bounds)


# ------------------------------------------------------------------ experiment
@attrs.frozen
class Experiment:
    """Describe one comparison: every method on every dataset under one protocol.

    Parameters
    ----------
    methods : iterable of str, or mapping of str to estimator
        Names are registered methods (:func:`multilabel_core.list_methods`); an estimator given
        under a name is used as it is (its parameters are the starting point of the grid).
    datasets : iterable of str or Dataset
        Names, file paths or :class:`~multilabel_core.datasets.Dataset` objects.  A string is
        loaded by :func:`~multilabel_core.datasets.load_dataset` (with ``data_home``); ``"A+B"``
        joins two files' rows and remembers where A ends (``Dataset.parts``, which the ``given``
        protocol splits at); ``"synthetic"`` is the embedded correlated dataset drawn with
        ``seed``.  Records name a dataset as given (a Dataset by its ``name``).
    protocol : str, default="kfold"
        A name in :data:`~multilabel_core.experiments.protocols.PROTOCOLS`.
    protocol_params : mapping, optional
        The protocol's parameters; missing ones take its defaults.
    preprocess : str or None, default=None
        A name of :data:`~.preprocessing.PREPROCESSORS`: feature scaling for every method, fitted
        on the training part of each split (and on the inner training part of each inner fold)
        only.
    grids : mapping of str to dict, optional
        Method -> {parameter: [values]}, replacing that method's registered ``param_grid``.  A
        method given by name without a grid here searches its registered grid; an estimator
        object without one is used as it is.
    selection_metric : str, default="average_precision"
        A name of :data:`multilabel_core.metrics.METRICS`: what the inner search optimises (its
        direction from the table); ``select`` in the experiment file and ``--select`` on the
        command line.  Average precision judges the scores only; a measure of the predicted
        labels (``micro_f1``, ``macro_f1``) also judges the sign of the scores, so it never
        prefers a model that predicts no label.
    inner_cv : int, default=3
        Folds (>= 2) of the inner, iterative-stratified cross-validation on each training part.
    seed : int, default=0
        Seed (>= 0) of the splits, the inner folds and the estimators' ``random_state``.
    grid_extensions : int or None, default=None
        How many times (>= 0) the search may extend one parameter's grid beyond the edge its
        chosen value lies at (:mod:`.search`; 0: never).  None is
        :data:`~.search.DEFAULT_GRID_EXTENSIONS` (3) for a new store and the stored run's own
        value when a store is resumed (0 for a store written before grid extension existed), so
        a resumed run keeps the search it was started with.
    data_home : str or None, default=None
        A folder searched first for dataset names.
    sparse : {"auto", True, False}, default="auto"
        Whether datasets loaded by name or path hold their features CSR or dense
        (:func:`~multilabel_core.datasets.load_dataset`'s ``sparse``).  Not hashed as such: the
        datasets' fingerprints already differ between a CSR and a dense X.
    constant_labels : {"refuse", "predict_constant"}, default="refuse"
        What a label that takes one value in a training part (outer, or inner fold of the
        search) does (:mod:`.constant_labels`): fail that fit (the estimators accept such labels;
        the run refuses them unless asked), or be predicted at that value while the method is
        fitted on the other labels.
    reference : str or None, default=None
        Report setting (not hashed): a file of the papers' values, passed to
        :func:`multilabel_core.experiments.report.write_report`.
    reference_method : str or None, default=None
        Report setting (not hashed): the method the report's t-tests compare every other one with.
    alpha : float, default=0.05
        Report setting (not hashed): the level of the report's paired t-tests, in (0, 1).
    """

    methods: dict = attrs.field(converter=_as_methods, validator=_check_methods)
    datasets: tuple = attrs.field(converter=_as_datasets, validator=_check_datasets)
    protocol: str = "kfold"
    protocol_params: dict = attrs.field(factory=dict, converter=lambda value: dict(value or {}))
    preprocess: str | None = attrs.field(default=None, validator=lambda _, __, value: check_preprocess(value))
    grids: dict = attrs.field(factory=dict, converter=_as_grids)
    selection_metric: str = attrs.field(default="average_precision", validator=_check_selection_metric)
    inner_cv: int = attrs.field(default=3, validator=_check_scalar_field(numbers.Integral, low=2))
    seed: int = attrs.field(default=0, validator=_check_scalar_field(numbers.Integral, low=0))
    grid_extensions: int | None = attrs.field(default=None, validator=_check_grid_extensions)
    data_home: str | None = None
    sparse: object = attrs.field(default="auto", converter=check_sparse)
    constant_labels: str = attrs.field(
        default=DEFAULT_CONSTANT_LABELS, validator=lambda _, __, value: check_constant_labels(value)
    )
    reference: str | None = None
    reference_method: str | None = None
    alpha: float = attrs.field(
        default=0.05,
        validator=_check_scalar_field(numbers.Real, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False),
    )

    def __attrs_post_init__(self):
        object.__setattr__(self, "protocol_params", get_protocol(self.protocol).params(self.protocol_params))
        if self.reference_method is not None and self.reference_method not in self.methods:
            raise ValueError(
                f"reference_method {self.reference_method!r} is not one of the methods {list(self.methods)}"
            )
        for method, grid in self.grids.items():
            self._check_grid(method, grid)

    def _check_grid(self, method: str, grid: dict) -> None:
        if method not in self.methods:
            raise ValueError(f"a grid is given for {method!r}, which is not one of the methods {list(self.methods)}")
        valid = self.estimator(method).get_params(deep=False)
        unknown = sorted(set(grid) - set(valid))
        if unknown:
            raise ValueError(
                f"the grid of method {method!r} names unknown parameter(s) {', '.join(map(repr, unknown))}; "
                f"valid: {', '.join(sorted(valid))}"
            )
        empty = [name for name, values in grid.items() if not values]
        if empty:
            raise ValueError(f"the grid of method {method!r} has no values for {', '.join(empty)}")

    @property
    def greater_is_better(self) -> bool:
        """Whether a larger value of the selection metric is better."""
        return METRICS[self.selection_metric].greater_is_better

    def estimator(self, method: str):
        """Build a new, unfitted estimator of ``method`` (the given object's class and parameters).

        Parameters
        ----------
        method : str
            One of the experiment's methods.

        Returns
        -------
        MultiLabelEstimator
            A fresh estimator: the registered method's defaults when only its name was given, else a
            copy of the given estimator's class and parameters.
        """
        from ..plugins import make_method

        given = self.methods[method]
        if given is None:
            return make_method(method)
        return type(given)(**given.get_params(deep=False))

    def grid(self, method: str) -> dict:
        """Return the grid searched for ``method`` (given, else registered, else empty).

        Parameters
        ----------
        method : str
            One of the experiment's methods.

        Returns
        -------
        dict
            Parameter name -> list of values: the experiment's grid for the method, else the
            registered ``param_grid`` when the method was given by name, else empty (an estimator
            object given without a grid).
        """
        from ..plugins import get_method

        if method in self.grids:
            return self.grids[method]
        return dict(get_method(method).param_grid) if self.methods[method] is None else {}

    def load_datasets(self) -> dict:
        """Load every dataset of the experiment.

        Returns
        -------
        dict of str to Dataset
            Dataset name -> :class:`~multilabel_core.datasets.Dataset`, in the experiment's order.
        """
        return {
            _dataset_name(dataset): load_data(dataset, self.data_home, self.seed, self.sparse)
            for dataset in self.datasets
        }

    def canonical(self, loaded: dict) -> dict:
        """Return the hashed configuration: everything that decides the results (module docstring).

        Parameters
        ----------
        loaded : dict of str to Dataset
            The loaded datasets (:meth:`load_datasets`); each enters by its fingerprint.

        Returns
        -------
        dict
            The library version, each method's class and parameters, the datasets' fingerprints, the
            protocol and its parameters, the preprocessing, the grids, the selection metric, the inner
            folds, the seed and the metrics (plus the constant-label policy and grid extensions when
            they differ from their defaults, so older stores still resume).
        """
        return {
            "multilabel_core": __version__,
            "methods": {name: _describe_estimator(self.estimator(name)) for name in self.methods},
            "datasets": {name: fingerprint(dataset) for name, dataset in loaded.items()},
            "protocol": self.protocol,
            "protocol_params": self.protocol_params,
            "preprocess": self.preprocess,
            "grids": {name: self.grid(name) for name in self.methods},
            "selection_metric": self.selection_metric,
            "inner_cv": self.inner_cv,
            "seed": self.seed,
            "metrics": list(METRICS),
            # Left out at its default, so the stores written before the option existed still resume.
            **({} if self.constant_labels == DEFAULT_CONSTANT_LABELS else {"constant_labels": self.constant_labels}),
            # Left out at 0, the search of the stores written before grid extension existed, so they still resume.
            **({"grid_extensions": extensions} if (extensions := self.resolved_grid_extensions) else {}),
        }

    @property
    def resolved_grid_extensions(self) -> int:
        """``grid_extensions``, None read as :data:`~.search.DEFAULT_GRID_EXTENSIONS` (a new store's)."""
        from .search import DEFAULT_GRID_EXTENSIONS

        return DEFAULT_GRID_EXTENSIONS if self.grid_extensions is None else int(self.grid_extensions)


def load_data(dataset, data_home=None, seed: int = 0, sparse="auto"):
    """Load a :class:`~multilabel_core.datasets.Dataset` from a name or a file path.

    Parameters
    ----------
    dataset : str or Dataset
        A dataset name or file (:func:`~multilabel_core.datasets.load_dataset`), or
        ``"synthetic"``: the embedded correlated data drawn with ``seed``.  A Dataset is returned
        as it is.
    data_home : str or path-like, optional
        A folder searched first for a name.
    seed : int, default=0
        The seed of the synthetic data.
    sparse : {"auto", True, False}, default="auto"
        :func:`~multilabel_core.datasets.load_dataset`'s (the synthetic data are dense, so
        "auto" keeps them dense).

    Returns
    -------
    Dataset
        The data.
    """
    from ..datasets import load_dataset, make_correlated_multilabel

    if not isinstance(dataset, str):
        return dataset
    if dataset == SYNTHETIC:
        synthetic = make_correlated_multilabel(random_state=seed)
        return attrs.evolve(synthetic, X=to_storage(synthetic.X, check_sparse(sparse)))
    return load_dataset(dataset, data_home=data_home, sparse=sparse)


#: Estimator parameters that never change a result, left out of the hashed configuration.
RESULT_NEUTRAL_PARAMS = frozenset({"n_jobs"})


def _describe_estimator(estimator) -> dict:
    cls = type(estimator)
    params = {name: value for name, value in estimator.get_params(deep=False).items() if name not in RESULT_NEUTRAL_PARAMS}
    params = {name: value if _is_plain(value) else repr(value) for name, value in params.items()}
    return {"class": f"{cls.__module__}.{cls.__qualname__}", "params": params}


def _is_plain(value) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_is_plain(v) for v in value)
    return value is None or isinstance(value, (str, bool, numbers.Number))


def fingerprint(dataset) -> dict:
    """Shape and SHA-256 of a dataset's X and Y: a changed data file is a changed configuration.

    A joined dataset (``A+B``) also gives its part sizes, which decide the ``given``
    protocol's split; a dataset of one file has none, so its fingerprint is unchanged.
    """
    digest = hashlib.sha256()
    X = dataset.X
    arrays = (X.data, X.indices, X.indptr) if sp.issparse(X) else (X,)
    for array in (*arrays, dataset.Y):
        digest.update(np.ascontiguousarray(array).tobytes())
    described = {"shape": [int(X.shape[0]), int(X.shape[1]), int(dataset.Y.shape[1])], "sha256": digest.hexdigest()}
    parts = getattr(dataset, "parts", ())
    if parts:
        described["parts"] = [int(size) for size in parts]
    return described


# -------------------------------------------------------------- experiment file
def read_experiment_file(path) -> dict:
    """Read the settings of an experiment file (TOML, or YAML with PyYAML), keys checked.

    Parameters
    ----------
    path : str or path-like
        The file; ``.yaml`` / ``.yml`` is read as YAML, anything else as TOML.

    Returns
    -------
    dict
        The settings table, its keys among :data:`FILE_KEYS` (and ``report.`` keys among the
        report settings).

    Raises
    ------
    ValueError
        For a missing file, invalid TOML or YAML, YAML without PyYAML installed, a file that is
        not a table, or an unknown key.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such experiment file")
    if path.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise ValueError(f"{path}: reading YAML needs PyYAML (pip install pyyaml); TOML needs nothing") from None
        try:
            settings = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ValueError(f"{path}: invalid YAML: {exc}") from None
    else:
        try:
            settings = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: invalid TOML: {exc}") from None
    if not isinstance(settings, dict):
        raise ValueError(f"{path}: expected a table of settings, got {type(settings).__name__}")
    _check_keys(path, settings, FILE_KEYS, "")
    _check_keys(path, settings.get("report", {}), REPORT_KEYS, "report.")
    return settings


def _check_keys(path, table, allowed, prefix) -> None:
    if not isinstance(table, dict):
        raise ValueError(f"{path}: {prefix.rstrip('.')} must be a table")
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        listed = ", ".join(prefix + key for key in unknown)
        raise ValueError(f"{path}: unknown key(s) {listed}; allowed: {', '.join(allowed)}")


def _merge_select(merged: dict, settings: dict, given: dict) -> None:
    """``select`` and its older name ``selection_metric`` as the one field ``selection_metric``.

    Within one source (the file, or the overrides) both may be given only with the same value;
    an override of either name wins over the file's.
    """
    for source in (settings, given):
        names = {source[key] for key in ("select", "selection_metric") if key in source}
        if len(names) > 1:
            raise ValueError(
                f"select and selection_metric name the same setting; got {source['select']!r} and "
                f"{source['selection_metric']!r}"
            )
    chosen = next(
        (source[key] for source in (given, settings) for key in ("select", "selection_metric") if key in source),
        None,
    )
    merged.pop("select", None)
    merged.pop("selection_metric", None)
    if chosen is not None:
        merged["selection_metric"] = chosen


def load_experiment(path=None, **overrides) -> Experiment:
    """Build an :class:`Experiment` from an experiment file (optional), with overrides on top.

    ``protocol_params`` are merged name by name; grids too, parameter by parameter, in this
    order: the file's ``grid`` (every method), the file's ``grids.METHOD``, the overriding
    ``grid``, the overriding ``grids.METHOD``; later ones win.

    Parameters
    ----------
    path : str or path-like, optional
        A TOML (or YAML) experiment file (:func:`read_experiment_file`).
    **overrides
        Settings by the :data:`FILE_KEYS` (the report settings by their own names); a value of
        None means "not given".

    Returns
    -------
    Experiment
        The experiment.

    Raises
    ------
    ValueError
        For an unknown setting, grids for methods that are not run, or no methods or datasets.
    """
    settings = read_experiment_file(path) if path is not None else {}
    report = settings.pop("report", {})
    given = {key: value for key, value in overrides.items() if value is not None}
    unknown = sorted(set(given) - set(FILE_KEYS) - set(REPORT_KEYS))
    if unknown:
        raise ValueError(f"unknown experiment setting(s) {unknown}")
    merged = {**settings, **report, **given}
    _merge_select(merged, settings, given)
    merged["protocol_params"] = {**settings.get("protocol_params", {}), **given.get("protocol_params", {})}
    methods = _as_methods(merged.get("methods", ()))
    grids = {}
    for source in (settings, given):
        for method in methods:
            extra = {**source.get("grid", {}), **source.get("grids", {}).get(method, {})}
            if extra:
                grids[method] = {**grids.get(method, {}), **extra}
    unknown_grids = sorted(set().union(settings.get("grids", {}), given.get("grids", {})) - set(methods))
    if unknown_grids:
        raise ValueError(f"grids are given for {unknown_grids}, which are not among the methods {list(methods)}")
    merged.pop("grid", None)
    merged["grids"] = grids
    for required in ("methods", "datasets"):
        if not merged.get(required):
            raise ValueError(f"no {required} given (on the command line or in the experiment file)")
    return Experiment(**merged)
