"""Statistics over experiment records: means over splits, paired t-tests, win/tie/loss.

A *record* is the result of one method on one split of one dataset, a plain dict as
written to ``results.jsonl`` by the runner (docs/experiments.md).  The keys read here
are ``method``, ``dataset``, ``split``, ``status`` ("ok" or "failed"), ``error``,
``metrics`` (name -> value, ``None`` for a NaN written to JSON), ``fit_time``,
``predict_time``, ``converged`` and ``certificates``.

The papers' protocol (MLRL section 5.3): the mean and standard deviation over the
splits per method and dataset, and a paired t-test at the 5 % level between the
proposed method -- the *reference* -- and every other one.  When the reference is
significantly better the compared cell carries a bullet and a *win* is counted; when
it is significantly worse a circle and a *loss*; otherwise a *tie*, no marker.  MLRL
Table VII counts the wins, ties and losses of each compared method over the datasets
and measures.

The papers' baselines were weak; what a user would otherwise run is the ecosystem's
(the ``baselines`` plugin family: scikit-learn's one-vs-rest SVMs, classifier chains,
ML-kNN).  :func:`compare_to_best_baseline` runs the same tests with, on each dataset, the
best of those as the reference: the ecosystem baseline with the best mean of the
selection metric there.

Conventions (docs/reports.md):

* ``std`` is the sample standard deviation over the splits, ``ddof = 1`` (the unbiased
  estimate, MATLAB's ``std``); NaN with fewer than two values.
* A metric value that is missing, ``None`` or NaN is left out of its mean and of the
  pairs of a test; ``n`` counts the values used.
* The t-test is two-sided; the sign of the mean difference and the metric's direction
  (:data:`multilabel_core.metrics.METRICS`) say who is better.
"""

from __future__ import annotations

import csv
import json
import math
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

import attrs
import numpy as np
from scipy.stats import ttest_rel

from ..validation import check_scalar
from ..metrics import METRICS, check_metric_names

__all__ = [
    "BASELINES_PLUGIN",
    "MARKER_LOSS",
    "MARKER_WIN",
    "BaselineComparison",
    "Comparison",
    "PairedTTest",
    "ReferenceValue",
    "Verdict",
    "WinTieLoss",
    "check_records",
    "compare_to_best_baseline",
    "compare_to_reference",
    "ecosystem_baselines",
    "group_records",
    "in_order",
    "paired_ttest",
    "read_reference",
    "reference_deltas",
    "run_summary",
    "summarize",
]

MARKER_WIN = "•"  # the reference is significantly better than the marked method (MLRL's \bullet)
MARKER_LOSS = "◦"  # the reference is significantly worse (MLRL's \circ)

#: The plugin that registers the ecosystem baselines (plugins/baselines).
BASELINES_PLUGIN = "baselines"
_MARKERS = {"win": MARKER_WIN, "loss": MARKER_LOSS, "tie": "", "untested": ""}

# Differences whose spread is within this many units of rounding of the data are constant:
# a t-statistic computed from them would divide rounding noise by rounding noise.
_ROUNDING_ULPS = 8


# ------------------------------------------------------------------------ records
def check_records(records) -> list[dict]:
    """Check the records for the keys every statistic needs.

    Parameters
    ----------
    records : iterable of mapping
        The run's records.

    Returns
    -------
    list of mapping
        The records as a list.

    Raises
    ------
    ValueError
        For a record that is not a mapping, lacks ``method``, ``dataset``, ``split`` or
        ``status``, has a status other than "ok"/"failed", or repeats the (method, dataset,
        split) of an earlier record.
    """
    records = list(records)
    seen = set()
    for index, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise ValueError(f"record {index} is a {type(record).__name__}, not a mapping")
        missing = [key for key in ("method", "dataset", "split", "status") if key not in record]
        if missing:
            raise ValueError(f"record {index} lacks {missing}")
        if record["status"] not in ("ok", "failed"):
            raise ValueError(f"record {index} has status {record['status']!r}; expected 'ok' or 'failed'")
        key = (record["method"], record["dataset"], record["split"])
        if key in seen:
            raise ValueError(f"two records for method {key[0]!r} on dataset {key[1]!r}, split {key[2]!r}")
        seen.add(key)
    return records


def in_order(records, key: str) -> list:
    """List the distinct values of ``record[key]`` in order of first appearance (the run's order).

    Parameters
    ----------
    records : iterable of mapping
        The records.
    key : str
        The field, e.g. ``"method"`` or ``"dataset"``.

    Returns
    -------
    list
        The distinct values.
    """
    return list(dict.fromkeys(record[key] for record in records))


def group_records(records) -> dict[tuple, list[dict]]:
    """Group the records by (dataset, method), datasets then methods in order of first appearance.

    Parameters
    ----------
    records : sequence of mapping
        Checked records (:func:`check_records`).

    Returns
    -------
    dict of (str, str) to list of mapping
        (dataset, method) -> its records, only pairs that have some.
    """
    datasets, methods = in_order(records, "dataset"), in_order(records, "method")
    groups = {(d, m): [] for d in datasets for m in methods}
    for record in records:
        groups[record["dataset"], record["method"]].append(record)
    return {key: group for key, group in groups.items() if group}


def _float(value) -> float:
    """A JSON number, or NaN for ``None`` (how a NaN is written to JSON)."""
    return math.nan if value is None else float(value)


def _value(record: Mapping, metric: str) -> float:
    """The record's value of ``metric``; NaN when it failed or the value is missing."""
    if record["status"] != "ok":
        return math.nan
    return _float((record.get("metrics") or {}).get(metric))


def _mean_times(ok_records) -> dict[str, float]:
    """Mean fit and predict seconds over successful records (NaN when there is none)."""
    times = {}
    for key in ("fit_time", "predict_time"):
        finite = [v for v in (_float(r.get(key)) for r in ok_records) if math.isfinite(v)]
        times[key] = float(np.mean(finite)) if finite else math.nan
    return times


def _metric_names(records, metrics) -> list[str]:
    """The given metric names (checked), or every name of METRICS that some record holds."""
    if metrics is not None:
        return check_metric_names(metrics)
    present = {name for record in records if record["status"] == "ok" for name in record.get("metrics") or {}}
    return [name for name in METRICS if name in present]


# ---------------------------------------------------------------------- summaries
def summarize(records, metrics=None) -> list[dict]:
    """Compute the mean and standard deviation over the splits, per (dataset, method, metric).

    Parameters
    ----------
    records : iterable of mapping
        The run's records (one per method, dataset and split), as the result store holds them.
    metrics : iterable of str, optional
        Metric names of :data:`~multilabel_core.metrics.METRICS`; None: every one some record holds.

    Returns
    -------
    list of dict
        One dict per row with keys ``dataset``, ``method``, ``metric``, ``greater_is_better``,
        ``mean``, ``std`` (``ddof = 1``), ``n`` (values used), ``n_failed`` (failed splits of this
        method on this dataset), ``fit_time`` and ``predict_time`` (mean seconds over the
        successful splits).  Rows come in the order datasets, then methods, first appear in
        ``records``; metrics in the order of :data:`~multilabel_core.metrics.METRICS`.
    """
    records = check_records(records)
    names = _metric_names(records, metrics)
    rows = []
    for (dataset, method), group in group_records(records).items():
        ok = [r for r in group if r["status"] == "ok"]
        times = _mean_times(ok)
        for metric in names:
            values = np.array([v for v in (_value(r, metric) for r in ok) if math.isfinite(v)])
            rows.append(
                {
                    "dataset": dataset,
                    "method": method,
                    "metric": metric,
                    "greater_is_better": METRICS[metric].greater_is_better,
                    "mean": float(values.mean()) if values.size else math.nan,
                    "std": float(values.std(ddof=1)) if values.size > 1 else math.nan,
                    "n": int(values.size),
                    "n_failed": len(group) - len(ok),
                    **times,
                }
            )
    return rows


def run_summary(records) -> list[dict]:
    """Summarise each (dataset, method): failures, times, warnings and the certificates' convergence.

    Parameters
    ----------
    records : iterable of mapping
        The run's records.

    Returns
    -------
    list of dict
        Each row: ``dataset``, ``method``, ``n_splits`` (successful splits), ``n_failed``,
        ``fit_time`` and ``predict_time`` (mean seconds over the successful splits),
        ``n_warnings``, ``n_checked`` (successful splits whose ``converged`` is known: they have
        certificates, or raised a ConvergenceWarning), ``n_converged`` (those whose ``converged``
        is true), ``n_solves`` (certificates in all), ``max_gap`` and ``max_relative_gap`` over
        every certificate (NaN when none has a finite gap, e.g. a solver without a dual).
    """
    rows = []
    for (dataset, method), group in group_records(check_records(records)).items():
        ok = [r for r in group if r["status"] == "ok"]
        certificates = [c for r in ok for c in r.get("certificates") or []]
        rows.append(
            {
                "dataset": dataset,
                "method": method,
                "n_splits": len(ok),
                "n_failed": len(group) - len(ok),
                **_mean_times(ok),
                "n_warnings": sum(len(r.get("warnings") or []) for r in group),
                "n_checked": sum(1 for r in ok if r.get("converged") is not None),
                "n_converged": sum(1 for r in ok if r.get("converged") is True),
                "n_solves": len(certificates),
                "max_gap": _finite_max(c.get("gap") for c in certificates),
                "max_relative_gap": _finite_max(c.get("relative_gap") for c in certificates),
            }
        )
    return rows


def _finite_max(values) -> float:
    finite = [v for v in map(_float, values) if math.isfinite(v)]
    return max(finite) if finite else math.nan


# ------------------------------------------------------------------- paired t-test
class PairedTTest(NamedTuple):
    """Hold the result of :func:`paired_ttest`.

    Parameters
    ----------
    statistic : float
        The t statistic (NaN untested, +-inf for a constant nonzero shift).
    pvalue : float
        The two-sided p-value (NaN untested).
    n : int
        The number of pairs.
    mean_difference : float
        The mean of ``a - b``.
    """

    statistic: float
    pvalue: float
    n: int
    mean_difference: float


def paired_ttest(a, b) -> PairedTTest:
    """Run the two-sided paired t-test of ``a`` against ``b`` (``scipy.stats.ttest_rel``).

    With differences ``d_k = a_k - b_k`` over n matched splits, the statistic is
    ``t = mean(d) / (std(d, ddof=1) / sqrt(n))`` with n - 1 degrees of freedom.

    Two cases scipy leaves undefined are decided here:

    * fewer than two pairs: nothing to test, ``statistic`` and ``pvalue`` are NaN
      ("untested" for :func:`compare_to_reference`);
    * differences constant up to rounding (zero variance): identical results give
      ``statistic = 0, pvalue = 1`` (a tie); a constant nonzero shift gives
      ``statistic = +-inf, pvalue = 0``, the limit of the test as the variance
      vanishes.

    Parameters
    ----------
    a : array-like of shape (n,)
        Finite values, one per matched split.
    b : array-like of shape (n,)
        The other side's finite values, on the same splits.

    Returns
    -------
    PairedTTest
        The statistic, the p-value, n and the mean of ``a - b``.

    Raises
    ------
    ValueError
        For samples that are not 1-D of equal length, or not finite.
    """
    a, b = (np.asarray(v, dtype=np.float64) for v in (a, b))
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"paired samples must be 1-D of equal length, got shapes {a.shape} and {b.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("paired samples must be finite")
    d = a - b
    n = int(d.size)
    if n < 2:
        return PairedTTest(math.nan, math.nan, n, float(d.mean()) if n else math.nan)
    mean = float(d.mean())
    rounding = _ROUNDING_ULPS * np.finfo(np.float64).eps * max(np.abs(a).max(), np.abs(b).max(), 1e-300)
    if np.ptp(d) <= rounding:
        if abs(mean) <= rounding:
            return PairedTTest(0.0, 1.0, n, mean)
        return PairedTTest(math.copysign(math.inf, mean), 0.0, n, mean)
    result = ttest_rel(a, b)
    return PairedTTest(float(result.statistic), float(result.pvalue), n, mean)


# ------------------------------------------------------------ reference comparison
class WinTieLoss(NamedTuple):
    """Count one cell of the win/tie/loss table, written ``win/tie/loss``.

    Parameters
    ----------
    win : int
        Datasets where the reference is significantly better.
    tie : int
        Datasets with no significant difference.
    loss : int
        Datasets where the reference is significantly worse.
    """

    win: int
    tie: int
    loss: int

    def __str__(self) -> str:
        return f"{self.win}/{self.tie}/{self.loss}"


@attrs.frozen
class Verdict:
    """Compare the reference method against one other method on one dataset and metric.

    Parameters
    ----------
    dataset : str
        The dataset.
    method : str
        The compared method.
    metric : str
        The metric.
    test : PairedTTest
        Reference minus method over the matched splits.
    outcome : {"win", "tie", "loss", "untested"}
        From the reference's point of view; "untested" when fewer than two splits could be
        matched (no t-test exists).
    left_out : tuple of (object, str)
        The splits removed from the pairs as ``(split, reason)``, the reason naming the side whose
        record is missing, failed or lacks the value.
    """

    dataset: str
    method: str
    metric: str
    test: PairedTTest
    outcome: str
    left_out: tuple

    @property
    def marker(self) -> str:
        """:data:`MARKER_WIN`, :data:`MARKER_LOSS`, or "" for a tie or an untested pair."""
        return _MARKERS[self.outcome]

    def as_dict(self) -> dict:
        """Return the verdict as a JSON-ready mapping: its fields with the t-test's fields inlined.

        Returns
        -------
        dict
            ``dataset``, ``method``, ``metric``, ``statistic``, ``pvalue``, ``n``,
            ``mean_difference``, ``outcome``, ``marker`` and ``left_out`` (a list of lists).
        """
        return {
            "dataset": self.dataset,
            "method": self.method,
            "metric": self.metric,
            **self.test._asdict(),
            "outcome": self.outcome,
            "marker": self.marker,
            "left_out": [list(item) for item in self.left_out],
        }


@attrs.frozen
class Comparison:
    """Hold every verdict of :func:`compare_to_reference`, and the win/tie/loss counts of Zhang & Yeung, "Multi-Label Relationship Learning", Table VII.

    Parameters
    ----------
    reference : str
        The reference method.
    alpha : float
        The level of the tests.
    metrics : tuple of str
        The metrics compared.
    verdicts : tuple of Verdict
        One per (dataset, method, metric) compared.
    """

    reference: str
    alpha: float
    metrics: tuple
    verdicts: tuple

    def verdict(self, dataset: str, method: str, metric: str) -> Verdict | None:
        """Return the verdict of one cell.

        Parameters
        ----------
        dataset : str
            The dataset.
        method : str
            The compared method.
        metric : str
            The metric.

        Returns
        -------
        Verdict or None
            The verdict, or None when that method was not compared there.
        """
        return next(
            (v for v in self.verdicts if (v.dataset, v.method, v.metric) == (dataset, method, metric)),
            None,
        )

    @property
    def methods(self) -> list[str]:
        """The compared methods, in the order of the records."""
        return list(dict.fromkeys(v.method for v in self.verdicts))

    def win_tie_loss(self) -> dict[str, dict[str, WinTieLoss]]:
        """Count the outcomes over the datasets, metric -> method -> counts, plus the row ``"Total"`` over all metrics.

        This is Zhang & Yeung, "Multi-Label Relationship Learning", Table VII: a row per performance measure, a column per compared method,
        each cell the wins/ties/losses of the reference against that method.  Untested comparisons
        (fewer than two matched splits) are not counted.

        Returns
        -------
        dict of str to dict of str to WinTieLoss
            Metric (and ``"Total"``) -> compared method -> counts.
        """
        table = {}
        for row in [*self.metrics, "Total"]:
            table[row] = {}
            for method in self.methods:
                outcomes = [v.outcome for v in self.verdicts if v.method == method and row in ("Total", v.metric)]
                table[row][method] = WinTieLoss(*(outcomes.count(o) for o in ("win", "tie", "loss")))
        return table


def _unusable(record: Mapping | None, metric: str) -> str | None:
    """Why a split of one side cannot enter the pairs, or None when it can."""
    if record is None:
        return "missing"
    if record["status"] != "ok":
        return "failed"
    return None if math.isfinite(_value(record, metric)) else "no value"


def _matched_pairs(reference_splits: dict, other_splits: dict, names: tuple[str, str], metric: str):
    """Values of both sides on the splits where both are usable, and the others with reasons."""
    a, b, left_out = [], [], []
    for split in sorted(reference_splits.keys() | other_splits.keys()):
        sides = (reference_splits.get(split), other_splits.get(split))
        reasons = [f"{why}: {name}" for name, record in zip(names, sides) if (why := _unusable(record, metric))]
        if reasons:
            left_out.append((split, "; ".join(reasons)))
        else:
            a.append(_value(sides[0], metric))
            b.append(_value(sides[1], metric))
    return a, b, tuple(left_out)


def _outcome(test: PairedTTest, greater_is_better: bool, alpha: float) -> str:
    """win/tie/loss of the reference (the ``a`` of the test) at level ``alpha``; untested below two pairs."""
    if test.n < 2:
        return "untested"
    if not test.pvalue < alpha:
        return "tie"
    reference_higher = test.mean_difference > 0
    return "win" if reference_higher == greater_is_better else "loss"


def compare_to_reference(records, reference_method: str, *, metrics=None, alpha: float = 0.05) -> Comparison:
    """Run paired t-tests of ``reference_method`` against every other method, per dataset and metric.

    For each dataset, each other method with records on it and each metric, the splits are
    matched by index; a split missing, failed, or without the metric's value on either side is
    left out of the pairs (and listed in the verdict).  The two-sided :func:`paired_ttest` of
    reference minus method at level ``alpha`` then decides: a significant difference in the
    better direction of the metric (``METRICS[metric].greater_is_better``) is a win for the
    reference, in the other direction a loss, anything else a tie.  With fewer than two matched
    splits there is no test and the outcome is "untested", counted neither as a tie nor otherwise.

    Parameters
    ----------
    records : iterable of mapping
        The run's records (one per method, dataset and split), as the result store holds them.
    reference_method : str
        The method every other one is compared with.
    metrics : iterable of str, optional
        Metric names of :data:`~multilabel_core.metrics.METRICS`; None: every one some record holds.
    alpha : float, default=0.05
        The level of the two-sided tests, in (0, 1).

    Returns
    -------
    Comparison
        Every verdict, with the win/tie/loss counts.

    Raises
    ------
    ValueError
        For invalid records, a reference method without records, an ``alpha`` out of range or an
        unknown metric.
    """
    records = check_records(records)
    check_scalar(alpha, "alpha", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    methods = in_order(records, "method")
    if reference_method not in methods:
        raise ValueError(f"reference method {reference_method!r} has no records; methods: {methods}")
    names = _metric_names(records, metrics)
    references = dict.fromkeys(in_order(records, "dataset"), reference_method)
    verdicts = _verdicts(records, references, [m for m in methods if m != reference_method], names, alpha)
    return Comparison(reference_method, float(alpha), tuple(names), verdicts)


def _verdicts(records, references: dict, compared, names, alpha) -> tuple:
    """The verdicts of ``references[dataset]`` against each method of ``compared`` on that dataset."""
    splits = {key: {r["split"]: r for r in group} for key, group in group_records(records).items()}
    verdicts = []
    for (dataset, method), method_splits in splits.items():
        reference = references.get(dataset)
        if reference is None or method not in compared:
            continue
        reference_splits = splits.get((dataset, reference), {})
        for metric in names:
            a, b, left_out = _matched_pairs(reference_splits, method_splits, (reference, method), metric)
            test = paired_ttest(a, b)
            outcome = _outcome(test, METRICS[metric].greater_is_better, alpha)
            verdicts.append(Verdict(dataset, method, metric, test, outcome, left_out))
    return tuple(verdicts)


# -------------------------------------------------------- the best ecosystem baseline
@attrs.frozen
class BaselineComparison(Comparison):
    """Hold a :class:`Comparison` whose reference is, on each dataset, the best ecosystem baseline there.

    The result of :func:`compare_to_best_baseline`.  Every verdict (and its marker, and the win/tie/loss counts) is from the point of view of
    that dataset's best baseline, as with a reference method: a win means the best baseline is
    significantly better than the compared method.

    Parameters
    ----------
    reference : str
        The phrase "the best ecosystem baseline".
    alpha : float
        The level of the tests.
    metrics : tuple of str
        The metrics compared.
    verdicts : tuple of Verdict
        One per (dataset, method, metric) compared.
    selection_metric : str
        The metric that picked the best baseline on each dataset.
    baselines : tuple of str
        The ecosystem baselines in the records.
    best : dict of str to (str, float)
        Dataset -> ``(method, mean)``: the baseline with the best mean of ``selection_metric`` on it.
    """

    selection_metric: str
    baselines: tuple
    best: dict

    def reference_of(self, dataset: str) -> str | None:
        """Return the best ecosystem baseline on ``dataset``.

        Parameters
        ----------
        dataset : str
            A dataset name.

        Returns
        -------
        str or None
            The baseline's name; None when no baseline has a value there.
        """
        return self.best[dataset][0] if dataset in self.best else None


def ecosystem_baselines(methods) -> list[str]:
    """Select the names among ``methods`` registered by the :data:`BASELINES_PLUGIN` family.

    A name that is not a registered method (an estimator given under a name) is not one.

    Parameters
    ----------
    methods : iterable of str
        Method names.

    Returns
    -------
    list of str
        The ecosystem baselines among them, in their order.
    """
    from ..plugins import list_methods

    registered = {spec.name for spec in list_methods() if spec.plugin == BASELINES_PLUGIN}
    return [method for method in methods if method in registered]


def _selection_metric(records) -> str:
    """The metric the runs selected their hyper-parameters by (``average_precision`` when unrecorded)."""
    chosen = in_order([r for r in records if r.get("selection_metric")], "selection_metric")
    return chosen[0] if chosen else "average_precision"


def compare_to_best_baseline(
    records, baselines=None, *, selection_metric=None, metrics=None, alpha: float = 0.05
) -> BaselineComparison | None:
    """Run paired t-tests of the best ecosystem baseline against every other method, per dataset.

    On each dataset the *best* baseline is the one with the best mean of ``selection_metric``
    in the metric's direction, ties going to the first in the records' order; it is then the
    reference of :func:`compare_to_reference`'s tests against every method that is not an
    ecosystem baseline, metric by metric.

    Parameters
    ----------
    records : iterable of mapping
        The run's records (one per method, dataset and split), as the result store holds them.
    baselines : iterable of str, optional
        The ecosystem-baseline methods; None: those of the records registered by the
        ``baselines`` plugin (:func:`ecosystem_baselines`).
    selection_metric : str, optional
        The metric that picks the best baseline; None: the records' ``selection_metric``.
    metrics : iterable of str, optional
        Metric names of :data:`~multilabel_core.metrics.METRICS`; None: every one some record holds.
    alpha : float, default=0.05
        The level of the two-sided tests, in (0, 1).

    Returns
    -------
    BaselineComparison or None
        The verdicts; None when the records hold no baseline or nothing else to compare with it.

    Raises
    ------
    ValueError
        For invalid records, an ``alpha`` out of range or an unknown metric.
    """
    records = check_records(records)
    check_scalar(alpha, "alpha", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    methods = in_order(records, "method")
    baselines = ecosystem_baselines(methods) if baselines is None else [m for m in baselines if m in methods]
    compared = [m for m in methods if m not in baselines]
    selection_metric = selection_metric or _selection_metric(records)
    check_metric_names([selection_metric])
    if not baselines or not compared:
        return None
    best = _best_baselines(summarize(records, [selection_metric]), baselines)
    names = _metric_names(records, metrics)
    verdicts = _verdicts(records, {d: method for d, (method, _) in best.items()}, compared, names, alpha)
    return BaselineComparison(
        "the best ecosystem baseline", float(alpha), tuple(names), verdicts,
        selection_metric=selection_metric, baselines=tuple(baselines), best=best,
    )  # fmt: skip


def _best_baselines(summary, baselines) -> dict[str, tuple[str, float]]:
    """dataset -> (baseline, mean) with the best mean of the (single) summarised metric."""
    best = {}
    for row in summary:
        if row["method"] not in baselines or not math.isfinite(row["mean"]):
            continue
        incumbent = best.get(row["dataset"])
        sign = 1.0 if row["greater_is_better"] else -1.0
        if incumbent is None or sign * row["mean"] > sign * incumbent[1]:
            best[row["dataset"]] = (row["method"], row["mean"])
    return best


# --------------------------------------------------------------- reference values
class ReferenceValue(NamedTuple):
    """Hold a number from a paper: its mean, standard deviation, and source.

    Parameters
    ----------
    mean : float
        The paper's mean, on the metric's scale (fractions, not percent).
    std : float
        The paper's standard deviation; NaN if not given.
    source : str
        Where it is printed (e.g. a table of the paper); may be empty.
    """

    mean: float
    std: float
    source: str


_REFERENCE_REQUIRED = ("method", "dataset", "metric", "mean")
_REFERENCE_COLUMNS = (*_REFERENCE_REQUIRED, "std", "source")


def _reference_rows_csv(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [row for row in csv.DictReader(handle) if any((value or "").strip() for value in row.values())]


def _reference_rows_json(path: Path) -> list:
    rows = json.loads(path.read_text(encoding="utf-8"))
    return rows["reference"] if isinstance(rows, dict) and "reference" in rows else rows


def _reference_rows_toml(path: Path) -> list:
    return tomllib.loads(path.read_text(encoding="utf-8")).get("reference", [])


_REFERENCE_READERS = {".csv": _reference_rows_csv, ".json": _reference_rows_json, ".toml": _reference_rows_toml}


def _reference_number(row: Mapping, key: str, where: str) -> float:
    """A mean or std cell as a float; an empty or absent std is NaN (the paper gives none)."""
    value = row.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if key == "mean":
            raise ValueError(f"{where}: no mean")
        return math.nan
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {key} {value!r} is not a number") from None
    if not math.isfinite(number) or (key == "std" and number < 0):
        raise ValueError(f"{where}: {key} must be finite{' and >= 0' if key == 'std' else ''}, got {value!r}")
    return number


def read_reference(path) -> dict[tuple[str, str, str], ReferenceValue]:
    """Read the papers' numbers from a CSV, JSON or TOML file (chosen by its suffix).

    Each row has ``method``, ``dataset``, ``metric`` (a name of METRICS, on its scale:
    fractions, not percent), ``mean`` and optionally ``std`` and ``source`` (e.g.
    "MLRL Table VI").  CSV: a header line and a row per value.  JSON: a list of
    objects, or an object whose ``reference`` key holds that list.  TOML: an array of
    tables ``[[reference]]``.  docs/reports.md shows an example of each.

    Parameters
    ----------
    path : str or path-like
        A ``.csv``, ``.json`` or ``.toml`` file.

    Returns
    -------
    dict of (str, str, str) to ReferenceValue
        (method, dataset, metric) -> the paper's value.

    Raises
    ------
    ValueError
        For an unknown suffix or column, a missing field, a non-numeric or negative value, an
        unknown metric, or a repeated (method, dataset, metric).
    """
    path = Path(path)
    reader = _REFERENCE_READERS.get(path.suffix.lower())
    if reader is None:
        raise ValueError(f"{path}: reference values must be a .csv, .json or .toml file")
    try:
        rows = reader(path)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError, csv.Error) as exc:
        raise ValueError(f"{path}: cannot parse: {exc}") from None
    if not isinstance(rows, list):
        raise ValueError(f"{path}: expected a list of rows, got {type(rows).__name__}")
    table = {}
    for index, row in enumerate(rows, start=1):
        where = f"{path} row {index}"
        if not isinstance(row, Mapping):
            raise ValueError(f"{where}: expected a table of fields, got {row!r}")
        unknown = sorted(set(row) - set(_REFERENCE_COLUMNS), key=str)
        missing = [key for key in _REFERENCE_REQUIRED if row.get(key) in (None, "")]
        if unknown or missing:
            raise ValueError(
                f"{where}: unknown fields {unknown}, missing fields {missing}; fields: {_REFERENCE_COLUMNS}"
            )
        key = tuple(str(row[k]).strip() for k in ("method", "dataset", "metric"))
        check_metric_names([key[2]])
        if key in table:
            raise ValueError(f"{where}: repeats method {key[0]!r}, dataset {key[1]!r}, metric {key[2]!r}")
        mean, std = (_reference_number(row, k, where) for k in ("mean", "std"))
        table[key] = ReferenceValue(mean, std, str(row.get("source") or ""))
    return table


def reference_deltas(summary, reference: Mapping) -> list[dict]:
    """Put our means beside the papers': the difference and that difference in the paper's std.

    Parameters
    ----------
    summary : list of dict
        The output of :func:`summarize`.
    reference : mapping
        The output of :func:`read_reference`.

    Returns
    -------
    list of dict
        One row per summary row that has a reference value, with ``dataset``, ``method``,
        ``metric``, ``mean`` and ``std`` (ours), ``paper_mean``, ``paper_std``, ``source``,
        ``delta = mean - paper_mean`` and ``delta_in_std = delta / paper_std`` (NaN when the paper
        gives no std or a zero one).
    """
    rows = []
    for row in summary:
        paper = reference.get((row["method"], row["dataset"], row["metric"]))
        if paper is None:
            continue
        delta = row["mean"] - paper.mean
        in_std = delta / paper.std if math.isfinite(paper.std) and paper.std > 0 else math.nan
        rows.append(
            {
                **{key: row[key] for key in ("dataset", "method", "metric", "mean", "std")},
                "paper_mean": paper.mean,
                "paper_std": paper.std,
                "source": paper.source,
                "delta": delta,
                "delta_in_std": in_std,
            }
        )
    return rows
