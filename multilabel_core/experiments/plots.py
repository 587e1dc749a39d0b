"""PNG figures of an experiment: learned label correlations, convergence, hyper-parameter curves.

matplotlib is the optional ``plot`` extra; every function here raises ImportError
naming it when matplotlib is missing.  Figures are drawn on a
:class:`matplotlib.figure.Figure` with the Agg canvas directly, never through pyplot,
so writing a report neither opens windows nor changes the backend of a session that
also plots interactively.

The figures (docs/reports.md shows them):

* :func:`plot_label_correlation` -- a heatmap of a label correlation matrix, as MLRL
  Tables VIII-X print it, with a diverging colormap centred at 0.
* :func:`plot_convergence` -- the duality gap (log scale) and the primal objective at
  each certificate of a fit: per outer step of an alternating method (MLRL Figure 1
  plots the objective per outer step) or per solve.
* :func:`plot_metric_vs_param` -- the inner cross-validation score against one
  hyper-parameter, from the records' ``search`` entries; values where a grid point
  failed are marked on the axis (red x), not left out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ..metrics import METRICS, check_metric_names
from .diagnostics import is_number
from .stats import check_records, group_records, in_order

__all__ = [
    "PLOT_EXTRA",
    "matplotlib_available",
    "plot_convergence",
    "plot_label_correlation",
    "plot_metric_vs_param",
    "plots_from_records",
]

PLOT_EXTRA = "pip install 'multilabel-core[plot]'"

# Beyond this many labels the cell values of a heatmap no longer fit in their cells.
_MAX_ANNOTATED_LABELS = 20
# A hyper-parameter axis is logarithmic when its positive values span this ratio (two decades).
_LOG_AXIS_RATIO = 100.0


# ------------------------------------------------------------------ matplotlib
def _figure(**kwargs):
    """A new Figure on an Agg canvas; ImportError naming the ``plot`` extra without matplotlib."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(f"plots need matplotlib, the `plot` extra: {PLOT_EXTRA}") from exc
    figure = Figure(layout="constrained", **kwargs)
    FigureCanvasAgg(figure)
    return figure


def matplotlib_available() -> bool:
    """Whether the ``plot`` extra (matplotlib) can be imported."""
    try:
        _figure()
    except ImportError:
        return False
    return True


def _save(figure, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png", dpi=100)
    return path


# ------------------------------------------------------------ label correlation
def plot_label_correlation(matrix, label_names, path, title=None) -> Path:
    """Heatmap of an L x L label correlation matrix, written as PNG to ``path``.

    The colormap is diverging (blue negative, red positive) and symmetric about 0,
    its limits +-max|matrix|.  Each cell shows its value when L <= 20.
    ``label_names`` names the rows and columns (None: L1..LL as in MLRL Table VIII).
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] == 0:
        raise ValueError(f"a label correlation matrix must be square and non-empty, got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError("the label correlation matrix has NaN or infinite entries")
    L = matrix.shape[0]
    names = [f"L{j + 1}" for j in range(L)] if label_names is None else [str(n) for n in label_names]
    if len(names) != L:
        raise ValueError(f"{len(names)} label names for a {L} x {L} matrix")
    limit = float(np.abs(matrix).max()) or 1.0
    side = max(4.0, 0.55 * L + 2.0)
    figure = _figure(figsize=(side + 1.0, side))
    ax = figure.add_subplot()
    image = ax.imshow(matrix, cmap="RdBu_r", vmin=-limit, vmax=limit)
    figure.colorbar(image, ax=ax, shrink=0.8)
    ax.set_xticks(range(L), names, rotation=45, ha="right", fontsize="small")
    ax.set_yticks(range(L), names, fontsize="small")
    if L <= _MAX_ANNOTATED_LABELS:
        for (i, j), value in np.ndenumerate(matrix):
            colour = "white" if abs(value) > 0.6 * limit else "black"
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize="x-small", color=colour)
    ax.set_title(title or "label correlation")
    return _save(figure, path)


# ------------------------------------------------------------------ convergence
def _certificate_series(certificates, key: str) -> np.ndarray:
    """One field of a fit's certificates (dicts or Certificate objects), NaN where absent."""
    values = []
    for certificate in certificates:
        fields = certificate if isinstance(certificate, Mapping) else certificate.as_dict()
        value = fields.get(key)
        values.append(math.nan if value is None else float(value))
    return np.array(values)


def plot_convergence(certificates, path, title=None) -> Path:
    """Duality gap and primal objective per certificate, written as PNG to ``path``.

    ``certificates`` is one fit's certificates in order -- a sequence of
    ``Certificate.as_dict()`` dicts or Certificate objects, one per outer step or per
    solve -- or a mapping from a curve's label (e.g. "split 3") to such a sequence.
    The gap panel is logarithmic; gaps that are NaN (no dual) or not positive cannot
    be drawn there and are left out.
    """
    curves = dict(certificates) if isinstance(certificates, Mapping) else {"": certificates}
    if not curves or not all(len(c) for c in curves.values()):
        raise ValueError("plot_convergence needs at least one certificate per curve")
    figure = _figure(figsize=(10.0, 4.0))
    gap_ax, primal_ax = figure.subplots(1, 2)
    for label, sequence in curves.items():
        steps = np.arange(1, len(sequence) + 1)
        gap = _certificate_series(sequence, "gap")
        drawable = np.isfinite(gap) & (gap > 0)
        gap_ax.plot(steps[drawable], gap[drawable], marker="o", label=label or None)
        primal_ax.plot(steps, _certificate_series(sequence, "primal"), marker="o", label=label or None)
    if gap_ax.has_data():
        gap_ax.set_yscale("log")
    else:
        gap_ax.text(0.5, 0.5, "no positive finite gap", ha="center", va="center", transform=gap_ax.transAxes)
    for ax, name in ((gap_ax, "duality gap"), (primal_ax, "primal objective")):
        ax.set_xlabel("outer step / solve")
        ax.set_ylabel(name)
        ax.xaxis.get_major_locator().set_params(integer=True)
    if len(curves) > 1:
        primal_ax.legend(fontsize="x-small")
    figure.suptitle(title or "convergence")
    return _save(figure, path)


# -------------------------------------------------------- metric against a parameter
def _search_curve(group, param: str, metric: str) -> tuple[dict, dict]:
    """``(curve, failed)``: value -> the per-split best inner-CV scores at that value of
    ``param``; value -> the number of splits where a grid point at that value failed.

    With several searched hyper-parameters, the score at a value of ``param`` is the
    best over the others (the profile of the grid along ``param``), one per split.
    """
    best = max if METRICS[metric].greater_is_better else min
    curve: dict = {}
    failed: dict = {}
    for record in group:
        if record.get("selection_metric") != metric:
            continue
        per_value: dict = {}
        failed_values = set()
        for entry in record.get("search") or []:
            value, score = (entry.get("params") or {}).get(param), entry.get("score")
            if value is None:
                continue
            if not is_number(value):
                raise ValueError(f"hyper-parameter {param!r} has the non-numeric value {value!r}")
            if entry.get("status", "ok") != "ok":
                failed_values.add(float(value))
                continue
            if score is None or not math.isfinite(score):
                continue
            per_value[float(value)] = best(per_value.get(float(value), score), score)
        for value, score in per_value.items():
            curve.setdefault(value, []).append(score)
        for value in failed_values:
            failed[value] = failed.get(value, 0) + 1
    return dict(sorted(curve.items())), dict(sorted(failed.items()))


def plot_metric_vs_param(records, param: str, metric: str, path, title=None) -> Path:
    """Mean inner-CV ``metric`` (+- std over splits) against the hyper-parameter ``param``.

    Reads the ``search`` entries of the records whose ``selection_metric`` is
    ``metric``; one curve per method (and dataset, when there are several).  A value
    where a grid point failed (in any split) is marked by a red x on the x axis,
    annotated with the number of splits where it failed, so a gap in a curve is never
    mistaken for a value that was not searched.  The x axis is logarithmic when the
    values are positive and span two decades or more.  Raises ValueError when no
    search entry has a numeric value of ``param``.
    """
    check_metric_names([metric])
    records = check_records(records)
    several_datasets = len(in_order(records, "dataset")) > 1
    curves, failures = {}, {}
    for (dataset, method), group in group_records(records).items():
        curve, failed = _search_curve(group, param, metric)
        label = f"{method} on {dataset}" if several_datasets else method
        if curve:
            curves[label] = curve
        if failed:
            failures[label] = failed
    if not curves and not failures:
        raise ValueError(f"no search entry scored by {metric!r} has a value of {param!r}")
    figure = _figure(figsize=(6.0, 4.0))
    ax = figure.add_subplot()
    colours = {}
    for label, curve in curves.items():
        x = np.array(list(curve))
        mean = np.array([np.mean(s) for s in curve.values()])
        std = np.array([np.std(s, ddof=1) if len(s) > 1 else 0.0 for s in curve.values()])
        (line,) = ax.plot(x, mean, marker="o", label=label)
        colours[label] = line.get_color()
        ax.fill_between(x, mean - std, mean + std, alpha=0.2)
    _mark_failures(ax, failures, colours)
    values = np.concatenate([list(points) for points in (*curves.values(), *failures.values())])
    if values.min() > 0 and values.max() / values.min() >= _LOG_AXIS_RATIO:
        ax.set_xscale("log")
    ax.set_xlabel(param)
    ax.set_ylabel(f"inner-CV {metric} ({'higher' if METRICS[metric].greater_is_better else 'lower'} is better)")
    ax.legend(fontsize="small")
    ax.set_title(title or f"{metric} against {param}")
    return _save(figure, path)


def _mark_failures(ax, failures: dict, colours: dict) -> None:
    """A red x on the x axis at each value where a grid point failed, one row per curve.

    The marks sit in axes coordinates along y (just above the axis), so they show
    whatever the scores' range; the number beside a mark counts the splits where a
    point at that value failed, and the row's label names its curve.
    """
    for row, (label, failed) in enumerate(failures.items()):
        height = 0.03 + 0.06 * row
        x = np.array(list(failed))
        ax.plot(x, np.full(len(x), height), transform=ax.get_xaxis_transform(), linestyle="none", marker="x",
                markersize=9, markeredgewidth=2, color="red", clip_on=False,
                label=f"failed grid point ({label})")  # fmt: skip
        for value, count in failed.items():
            ax.annotate(str(count), (value, height), xycoords=ax.get_xaxis_transform(), xytext=(5, 2),
                        textcoords="offset points", fontsize="x-small", color=colours.get(label, "red"))  # fmt: skip


# ------------------------------------------------------------ all of a run's plots
def _slug(name) -> str:
    """A file-name-safe form of a method, dataset or parameter name (a dataset may be a path)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(name)).strip("_.") or "unnamed"


def _searched(records) -> list[tuple[str, str]]:
    """(parameter, selection metric) pairs searched over two or more values, all numeric."""
    values: dict = {}
    for record in records:
        if record.get("selection_metric") not in METRICS:
            continue
        for entry in record.get("search") or []:
            for name, value in (entry.get("params") or {}).items():
                values.setdefault((name, record["selection_metric"]), []).append(value)
    return [key for key, seen in values.items() if all(map(is_number, seen)) and len(set(seen)) > 1]


def plots_from_records(records, out_dir) -> list[Path]:
    """Every figure the records support, as PNG files in ``out_dir``; returns their paths.

    * ``correlation_DATASET_METHOD.png`` -- the mean over the successful splits of the
      learned ``label_correlation``, for each method that learns one;
    * ``convergence_DATASET_METHOD.png`` -- a curve per split, for each method whose
      fits produce two or more certificates (one certificate is not a curve; the
      report's convergence table covers those);
    * ``search_DATASET_PARAM_METRIC.png`` -- the inner-CV score against each numeric
      hyper-parameter searched over two or more values.
    """
    records = check_records(records)
    out_dir = Path(out_dir)
    written = []
    for (dataset, method), group in group_records(records).items():
        ok = [r for r in group if r["status"] == "ok"]
        name = f"{_slug(dataset)}_{_slug(method)}"
        learned = [r for r in ok if r.get("label_correlation") is not None]
        if learned:
            mean = np.mean([np.asarray(r["label_correlation"], dtype=np.float64) for r in learned], axis=0)
            title = f"{method} on {dataset}: label correlation, mean of {len(learned)} splits"
            written.append(
                plot_label_correlation(mean, learned[0].get("label_names"), out_dir / f"correlation_{name}.png", title)
            )
        if any(len(r.get("certificates") or []) > 1 for r in ok):
            curves = {f"split {r['split']}": r["certificates"] for r in ok if r.get("certificates")}
            title = f"{method} on {dataset}: convergence"
            written.append(plot_convergence(curves, out_dir / f"convergence_{name}.png", title))
    for dataset in in_order(records, "dataset"):
        subset = [r for r in records if r["dataset"] == dataset]
        for param, metric in _searched(subset):
            path = out_dir / f"search_{_slug(dataset)}_{_slug(param)}_{metric}.png"
            written.append(
                plot_metric_vs_param(subset, param, metric, path, title=f"{dataset}: {metric} against {param}")
            )
    return written
