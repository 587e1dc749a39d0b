"""Experiments: the papers' protocols, hyper-parameter search, a resumable results store,
the runner behind ``mlcore compare``, and the statistics, reports and plots of its results.

- :mod:`.protocols`: k-fold, repeated fixed-size training sets, fixed-ratio,
  semi-supervised and given (the data's own train/test) splits (:data:`~.protocols.PROTOCOLS`);
- :mod:`.preprocessing`: feature scalers fitted on each training part only;
- :mod:`.search`: inner cross-validation over a method's grid;
- :mod:`.store`: ``config.json`` + ``results.jsonl``, resume and configuration checks;
- :mod:`.config`: :class:`~.config.Experiment` and the experiment file;
- :mod:`.runner`: :func:`~.runner.run_experiment`;
- :mod:`.stats`, :mod:`.report`, :mod:`.plots`: means, t-tests, the report and figures.

docs/experiments.md and docs/reports.md describe them.  Names are imported lazily, so
importing the package (the CLI does) costs nothing until one is used.
"""

from __future__ import annotations

import importlib

_LAZY = {
    "PROTOCOLS": "protocols",
    "Protocol": "protocols",
    "get_protocol": "protocols",
    "kfold": "protocols",
    "PREPROCESSORS": "preprocessing",
    "repeated_fixed_train": "protocols",
    "fixed_ratio": "protocols",
    "semi_supervised": "protocols",
    "given": "protocols",
    "SearchError": "search",
    "expand_grid": "search",
    "search_params": "search",
    "ConfigMismatchError": "store",
    "ResultStore": "store",
    "read_records": "store",
    "Experiment": "config",
    "load_experiment": "config",
    "read_experiment_file": "config",
    "ExperimentResult": "runner",
    "run_experiment": "runner",
    "summarize": "stats",
    "paired_ttest": "stats",
    "compare_to_reference": "stats",
    "compare_to_best_baseline": "stats",
    "ecosystem_baselines": "stats",
    "read_reference": "stats",
    "write_report": "report",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
