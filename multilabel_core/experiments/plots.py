"""PNG figures of an experiment: learned label correlations and concept graphs, convergence, hyper-parameter curves.

matplotlib is the optional ``plot`` extra; every function here raises ImportError
naming it when matplotlib is missing.  Figures are drawn on a
:class:`matplotlib.figure.Figure` with the Agg canvas directly, never through pyplot,
so writing a report neither opens windows nor changes the backend of a session that
also plots interactively.

The figures (docs/reports.md shows them):

* :func:`plot_label_correlation` -- a heatmap of a label correlation matrix, as MLRL
  Tables VIII-X print it, with a diverging colormap centred at 0.
* :func:`plot_concept_graph` -- a learned concept network (Zhang et al., Multi-Kernel
  Multi-Label Learning with Max-Margin Concept Network, IJCAI 2011, section 2): the pair
  statistic ``p(t|l) p(l|t) / (p(t|l) + p(l|t))`` as a heatmap, the edges (statistic above
  the threshold P0) outlined.
* :func:`plot_convergence` -- the relative duality gap ``gap / max(1, |primal|)`` (one log
  scale for every split, the tolerance :data:`~multilabel_core.certificate.GAP_RTOL` drawn)
  and the primal objective relative to its last value, at each certificate of a fit: per
  outer step of an alternating method (MLRL Figure 1 plots the objective per outer step)
  or per solve.
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

from ..certificate import GAP_RTOL, relative_gap
from ..metrics import METRICS, check_metric_names
from ..validation import check_scalar
from .diagnostics import is_number
from .stats import check_records, group_records, in_order

__all__ = [
    "PLOT_EXTRA",
    "concept_graph_summary",
    "matplotlib_available",
    "plot_concept_graph",
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
# The largest value of the concept-network statistic: half the harmonic mean of two probabilities.
_MAX_CONCEPT_STATISTIC = 0.5
# An averaged graph keeps an edge present in at least this share of the splits that fitted both labels.
_EDGE_SHARE = 0.5


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
    """Tell whether the ``plot`` extra (matplotlib) can be imported.

    Returns
    -------
    bool
        True when a figure can be made.
    """
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
def _check_cells(matrix: np.ndarray, what: str, allow_missing: bool) -> None:
    """Finite entries; with ``allow_missing``, NaN too (a cell without a value), but not only NaN."""
    missing = np.isnan(matrix) if allow_missing else np.zeros(matrix.shape, dtype=bool)
    if (~np.isfinite(matrix) & ~missing).any() or missing.all():
        raise ValueError(f"the {what} has NaN or infinite entries")


def _annotate(ax, matrix: np.ndarray, white_above: float) -> None:
    for (i, j), value in np.ndenumerate(matrix):
        if np.isnan(value):
            ax.text(j, i, "—", ha="center", va="center", fontsize="x-small", color="grey")
            continue
        colour = "white" if abs(value) > white_above else "black"
        ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize="x-small", color=colour)


def plot_label_correlation(matrix, label_names, path, title=None, *, allow_missing=False) -> Path:
    """Draw a heatmap of an L x L label correlation matrix, written as PNG to ``path``.

    The colormap is diverging (blue negative, red positive) and symmetric about 0, its limits
    +-max|matrix|.  Each cell shows its value when L <= 20.

    Parameters
    ----------
    matrix : array-like of shape (L, L)
        The correlations.
    label_names : sequence of str or None
        Names of the rows and columns (None: L1..LL as in Zhang & Yeung, "Multi-Label Relationship Learning", Table VIII).
    path : str or path-like
        The PNG file to write (its folder is created if needed).
    title : str, optional
        The title (default "label correlation").
    allow_missing : bool, default=False
        NaN entries are refused unless this is set: then they are cells without a value (blank,
        "—"), as an average over splits leaves a pair of labels that no split fitted together
        (labels predicted constant, experiments.constant_labels).

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    ValueError
        For a matrix that is not square and non-empty, entries not finite (or all missing), or
        label names of the wrong number.
    ImportError
        Without matplotlib (the ``plot`` extra).
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] == 0:
        raise ValueError(f"a label correlation matrix must be square and non-empty, got shape {matrix.shape}")
    _check_cells(matrix, "label correlation matrix", allow_missing)
    L = matrix.shape[0]
    names = [f"L{j + 1}" for j in range(L)] if label_names is None else [str(n) for n in label_names]
    if len(names) != L:
        raise ValueError(f"{len(names)} label names for a {L} x {L} matrix")
    limit = float(np.nanmax(np.abs(matrix))) or 1.0
    side = max(4.0, 0.55 * L + 2.0)
    figure = _figure(figsize=(side + 1.0, side))
    ax = figure.add_subplot()
    image = ax.imshow(matrix, cmap="RdBu_r", vmin=-limit, vmax=limit)
    figure.colorbar(image, ax=ax, shrink=0.8)
    ax.set_xticks(range(L), names, rotation=45, ha="right", fontsize="small")
    ax.set_yticks(range(L), names, fontsize="small")
    if L <= _MAX_ANNOTATED_LABELS:
        _annotate(ax, matrix, 0.6 * limit)
    ax.set_title(title or "label correlation")
    return _save(figure, path)


# ---------------------------------------------------------------- concept graph
def _graph_fields(graph) -> tuple[np.ndarray, np.ndarray, object]:
    """``(statistic, adjacency, threshold)`` of a ``ConceptGraph``-like object or of its ``as_dict()``."""
    if isinstance(graph, Mapping):
        missing = [key for key in ("statistic", "adjacency") if key not in graph]
        if missing:
            raise ValueError(f"a concept graph needs {', '.join(missing)}")
        statistic, adjacency, threshold = graph["statistic"], graph["adjacency"], graph.get("threshold")
    else:
        statistic, adjacency, threshold = graph.statistic, graph.adjacency, getattr(graph, "threshold", None)
    return np.asarray(statistic, dtype=np.float64), np.asarray(adjacency), threshold


def plot_concept_graph(graph, label_names, path, title=None, *, allow_missing=False) -> Path:
    """Draw a concept network as a heatmap of its pair statistic, its edges outlined; PNG to ``path``.

    The colormap runs from 0 to 1/2 (the largest value of the statistic), the threshold P0 is a
    red line on the colour bar, and each edge l ~ t is a red outline around its cell.  Each cell
    shows its value when L <= 20.

    Parameters
    ----------
    graph : object or mapping
        A fitted model's ``concept_graph_`` (``statistic`` (L, L) in [0, 1/2], ``adjacency``
        (L, L) bool, ``threshold``) or its ``as_dict()``.
    label_names : sequence of str or None
        Names of the rows and columns (None: L1..LL).
    path : str or path-like
        The PNG file to write (its folder is created if needed).
    title : str, optional
        The title; by default the number of edges and the threshold.
    allow_missing : bool, default=False
        As for :func:`plot_label_correlation` (NaN statistic: no value).

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    ValueError
        For a statistic that is not square, non-empty and within [0, 1/2], an adjacency of
        another shape or not 0/1, or label names of the wrong number.
    ImportError
        Without matplotlib (the ``plot`` extra).
    """
    statistic, adjacency, threshold = _graph_fields(graph)
    if statistic.ndim != 2 or statistic.shape[0] != statistic.shape[1] or statistic.shape[0] == 0:
        raise ValueError(f"a concept graph's statistic must be square and non-empty, got shape {statistic.shape}")
    if adjacency.shape != statistic.shape:
        raise ValueError(f"a concept graph's adjacency has shape {adjacency.shape}, its statistic {statistic.shape}")
    _check_cells(statistic, "concept graph's statistic", allow_missing)
    low, high = float(np.nanmin(statistic)), float(np.nanmax(statistic))
    if low < 0.0 or high > _MAX_CONCEPT_STATISTIC:
        raise ValueError(f"the concept graph's statistic lies in [0, 1/2]; got values in [{low:g}, {high:g}]")
    if not np.all((adjacency == 0) | (adjacency == 1)):
        raise ValueError("the concept graph's adjacency must hold 0/1 (or bool) entries")
    adjacency = adjacency.astype(bool)
    L = statistic.shape[0]
    names = [f"L{j + 1}" for j in range(L)] if label_names is None else [str(n) for n in label_names]
    if len(names) != L:
        raise ValueError(f"{len(names)} label names for a {L} x {L} concept graph")
    from matplotlib.patches import Rectangle

    side = max(6.0, 0.55 * L + 2.0)  # wide enough for a two-line title over a few labels
    figure = _figure(figsize=(side + 1.0, side))
    ax = figure.add_subplot()
    image = ax.imshow(statistic, cmap="Blues", vmin=0.0, vmax=_MAX_CONCEPT_STATISTIC)
    colorbar = figure.colorbar(image, ax=ax, shrink=0.8)
    colorbar.set_label("p(t|l) p(l|t) / (p(t|l) + p(l|t))")
    if threshold is not None:
        colorbar.ax.axhline(float(threshold), color="red", linewidth=2)
    # Inset frames: two neighbouring edges keep their own outlines instead of sharing a border.
    for i, j in np.argwhere(adjacency):
        ax.add_patch(Rectangle((j - 0.42, i - 0.42), 0.84, 0.84, fill=False, edgecolor="red", linewidth=1.5))
    ax.set_xticks(range(L), names, rotation=45, ha="right", fontsize="small")
    ax.set_yticks(range(L), names, fontsize="small")
    if L <= _MAX_ANNOTATED_LABELS:
        _annotate(ax, statistic, 0.6 * _MAX_CONCEPT_STATISTIC)
    n_edges = int(np.count_nonzero(np.triu(adjacency, 1)))
    default = f"concept graph: {n_edges} edges (outlined)" + (
        "" if threshold is None else f", threshold P0 = {float(threshold):g}"
    )
    ax.set_title(title or default, fontsize="small")
    return _save(figure, path)


def _fitted_labels(matrices: np.ndarray) -> np.ndarray:
    """(splits, L) bool: the labels each split's model was fitted on.

    A label predicted constant (experiments.constant_labels) has a null row and column in
    its record, read here as NaN; the diagonal holds a number for every fitted label.
    """
    return np.isfinite(np.diagonal(matrices, axis1=1, axis2=2))


def _mean_over_fitted(matrices: np.ndarray, fitted: np.ndarray) -> np.ndarray:
    """The mean of each entry over the splits that fitted both of its labels (NaN where none did)."""
    both = fitted[:, :, None] & fitted[:, None, :]
    total = np.where(both, matrices, 0.0).sum(axis=0)
    count = both.sum(axis=0)
    return np.divide(total, count, out=np.full(total.shape, np.nan), where=count > 0)


def _kept_labels(names, kept: np.ndarray) -> tuple[list, str]:
    """The names of the labels shown, and a title note naming those left out (never fitted)."""
    names = list(names) if names is not None else [f"L{j + 1}" for j in range(len(kept))]
    left_out = [str(name) for name, keep in zip(names, kept) if not keep]
    note = f"; left out, predicted constant in every split: {', '.join(left_out)}" if left_out else ""
    return [name for name, keep in zip(names, kept) if keep], note


def concept_graph_summary(records) -> dict:
    """Summarise the concept graph learned by one method on one dataset, from its records' ``concept_graph``.

    When the splits differ, ``statistic`` is the mean over the splits that fitted both labels and
    ``adjacency`` marks the edges present in at least half of them.

    Parameters
    ----------
    records : sequence of mapping
        Records of one method on one dataset, each with a ``concept_graph`` (``statistic``,
        ``adjacency``, ``threshold``).

    Returns
    -------
    dict
        ``statistic`` and ``adjacency`` over the labels fitted in at least one split, ``labels``
        (their indices), ``thresholds`` (distinct, in order), ``n_splits``, ``identical`` (every
        split learned the same graph) and ``n_fitted`` (per entry, the splits that fitted both
        labels).
    """
    graphs = [record["concept_graph"] for record in records]
    statistic = np.array([np.asarray(g["statistic"], dtype=np.float64) for g in graphs])
    adjacency = np.array([np.asarray(g["adjacency"], dtype=np.float64) for g in graphs])
    fitted = _fitted_labels(statistic)
    both = fitted[:, :, None] & fitted[:, None, :]
    n_fitted = both.sum(axis=0)
    mean = _mean_over_fitted(statistic, fitted)
    share = np.divide(np.where(both, adjacency, 0.0).sum(axis=0), n_fitted, out=np.zeros(mean.shape),
                      where=n_fitted > 0)  # fmt: skip
    identical = all(
        np.array_equal(statistic[0], s, equal_nan=True) and np.array_equal(adjacency[0], a)
        for s, a in zip(statistic, adjacency)
    )
    kept = np.flatnonzero(fitted.any(axis=0))
    index = np.ix_(kept, kept)
    thresholds = list(dict.fromkeys(g.get("threshold") for g in graphs))
    return {
        "statistic": mean[index],
        "adjacency": share[index] >= _EDGE_SHARE,
        "labels": kept,
        "thresholds": thresholds,
        "n_splits": len(graphs),
        "identical": identical,
        "n_fitted": n_fitted[index],
    }


def _threshold_text(thresholds) -> str:
    known = sorted(float(t) for t in thresholds if t is not None)
    if not known:
        return "threshold unknown"
    if len(known) == 1:
        return f"threshold P0 = {known[0]:g}"
    return f"thresholds P0 = {', '.join(f'{t:g}' for t in known)} (chosen per split)"


# ------------------------------------------------------------------ convergence
def _certificate_series(certificates, key: str) -> np.ndarray:
    """One field of a fit's certificates (dicts or Certificate objects), NaN where absent."""
    values = []
    for certificate in certificates:
        fields = certificate if isinstance(certificate, Mapping) else certificate.as_dict()
        value = fields.get(key)
        values.append(math.nan if value is None else float(value))
    return np.array(values)


def _relative_gaps(certificates) -> np.ndarray:
    """Each certificate's relative gap (:func:`~multilabel_core.certificate.relative_gap`), NaN without a dual.

    Computed from ``gap`` and ``primal``, so that records written before ``relative_gap`` was
    stored beside them give the same curve.
    """
    gap, primal = _certificate_series(certificates, "gap"), _certificate_series(certificates, "primal")
    return np.array([relative_gap(g, p) for g, p in zip(gap, primal)])


def _relative_primal(primal: np.ndarray) -> np.ndarray:
    """``(P_k - P_last) / max(1, |P_last|)``, P_last the last finite primal: how far each step is above the end."""
    finite = primal[np.isfinite(primal)]
    if finite.size == 0:
        return primal
    last = finite[-1]
    return (primal - last) / max(1.0, abs(last))


def plot_convergence(certificates, path, title=None, *, tol: float = GAP_RTOL) -> Path:
    """Plot the relative duality gap and primal objective per certificate, written as PNG to ``path``.

    The left panel is the relative duality gap ``gap / max(1, |primal|)``
    (:attr:`Certificate.relative_gap <multilabel_core.certificate.Certificate.relative_gap>`,
    the measure the stopping rules use), every curve on one logarithmic scale with the tolerance
    ``tol`` drawn across it, so splits whose objectives differ by orders of magnitude compare
    directly; gaps that are NaN (no dual) or not positive cannot be drawn on it and are left out.
    The right panel is the primal objective relative to its last value,
    ``(P_k - P_last) / max(1, |P_last|)``, on one linear scale: each curve's shape (the
    objective per outer step of Zhang & Yeung, "Multi-Label Relationship Learning", Figure 1) ending at 0.

    Parameters
    ----------
    certificates : sequence or mapping
        One fit's certificates in order -- a sequence of ``Certificate.as_dict()`` dicts or
        Certificate objects, one per outer step or per solve -- or a mapping from a curve's label
        (e.g. "split 3") to such a sequence.
    path : str or path-like
        The PNG file to write (its folder is created if needed).
    title : str, optional
        The figure's title (default "convergence").
    tol : float, default=GAP_RTOL
        The tolerance line (> 0); by default :data:`~multilabel_core.certificate.GAP_RTOL`, the
        largest relative gap a solve may be called converged with.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    ValueError
        For a curve without certificates or a ``tol`` that is not positive.
    ImportError
        Without matplotlib (the ``plot`` extra).
    """
    curves = dict(certificates) if isinstance(certificates, Mapping) else {"": certificates}
    if not curves or not all(len(c) for c in curves.values()):
        raise ValueError("plot_convergence needs at least one certificate per curve")
    check_scalar(tol, "tol", low=0.0, low_inclusive=False)
    figure = _figure(figsize=(10.0, 4.0))
    gap_ax, primal_ax = figure.subplots(1, 2)
    drawn = []
    for label, sequence in curves.items():
        steps = np.arange(1, len(sequence) + 1)
        gap = _relative_gaps(sequence)
        drawable = np.isfinite(gap) & (gap > 0)
        drawn.append(gap[drawable])
        gap_ax.plot(steps[drawable], gap[drawable], marker="o", label=label or None)
        primal = _relative_primal(_certificate_series(sequence, "primal"))
        primal_ax.plot(steps, primal, marker="o", label=label or None)
    values = np.concatenate([*drawn, [tol]])
    if any(part.size for part in drawn):
        gap_ax.set_yscale("log")
        gap_ax.set_ylim(values.min() / 3.0, values.max() * 3.0)
    else:
        gap_ax.text(0.5, 0.5, "no positive finite gap", ha="center", va="center", transform=gap_ax.transAxes)
        gap_ax.set_yscale("log")
        gap_ax.set_ylim(tol / 10.0, tol * 10.0)
    gap_ax.axhline(tol, color="black", linestyle="--", linewidth=1.0, label=f"tolerance {tol:g}")
    labels = (
        ("relative duality gap  gap / max(1, |primal|)", gap_ax),
        ("primal relative to its last value", primal_ax),
    )
    for name, ax in labels:
        ax.set_xlabel("outer step / solve")
        ax.set_ylabel(name)
        ax.xaxis.get_major_locator().set_params(integer=True)
    gap_ax.legend(handles=[gap_ax.lines[-1]], fontsize="x-small", loc="upper right")
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
    """Plot the mean inner-CV ``metric`` (+- std over splits) against the hyper-parameter ``param``.

    Reads the ``search`` entries of the records whose ``selection_metric`` is ``metric``; one
    curve per method (and dataset, when there are several).  A value where a grid point failed
    (in any split) is marked by a red x on the x axis, annotated with the number of splits where
    it failed, so a gap in a curve is never mistaken for a value that was not searched.  The x
    axis is logarithmic when the values are positive and span two decades or more.

    Parameters
    ----------
    records : iterable of mapping
        The run's records.
    param : str
        The hyper-parameter on the x axis.
    metric : str
        The selection metric, a name of :data:`~multilabel_core.metrics.METRICS`.
    path : str or path-like
        The PNG file to write (its folder is created if needed).
    title : str, optional
        The title (default "METRIC against PARAM").

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    ValueError
        When no search entry has a numeric value of ``param``, or for an unknown metric.
    ImportError
        Without matplotlib (the ``plot`` extra).
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


def _plot_learned_graph(records, dataset, method, path) -> Path:
    """The concept graph of one method on one dataset (one split's, or the splits' summary)."""
    summary = concept_graph_summary(records)
    kept = np.zeros(len(records[0]["concept_graph"]["statistic"]), dtype=bool)
    kept[summary["labels"]] = True
    names, note = _kept_labels(records[0].get("label_names"), kept)
    n_edges = int(np.count_nonzero(np.triu(summary["adjacency"], 1)))
    threshold = _threshold_text(summary["thresholds"])
    n = summary["n_splits"]
    if n == 1 or summary["identical"]:
        learned = "" if n == 1 else f" (the same in all {n} splits)"
        title = f"{method} on {dataset}: concept graph{learned}, {n_edges} edges (outlined), {threshold}"
    else:
        title = (
            f"{method} on {dataset}: concept graph, statistic averaged over {n} splits;\n"
            f"outlined: the {n_edges} edges present in at least half of them; {threshold}"
        )
    graph = {"statistic": summary["statistic"], "adjacency": summary["adjacency"], "threshold": None}
    if len(summary["thresholds"]) == 1 and summary["thresholds"][0] is not None:
        graph["threshold"] = summary["thresholds"][0]
    return plot_concept_graph(graph, names, path, title + note, allow_missing=True)


def plots_from_records(records, out_dir) -> list[Path]:
    """Write every figure the records support, as PNG files in ``out_dir``.

    * ``correlation_DATASET_METHOD.png`` -- the mean over the successful splits of the
      learned ``label_correlation``, for each method that learns one;
    * ``concept_graph_DATASET_METHOD.png`` -- the learned ``concept_graph``, for each
      method that learns one (:func:`concept_graph_summary`: the statistic averaged and the
      edges of at least half the splits when the splits differ, as the title says);
    * ``convergence_DATASET_METHOD.png`` -- a curve per split, for each method whose
      fits produce two or more certificates (one certificate is not a curve; the
      report's convergence table covers those);
    * ``search_DATASET_PARAM_METRIC.png`` -- the inner-CV score against each numeric
      hyper-parameter searched over two or more values.

    Parameters
    ----------
    records : iterable of mapping
        The run's records.
    out_dir : str or path-like
        The folder to write to (created if needed).

    Returns
    -------
    list of pathlib.Path
        The files written.

    Raises
    ------
    ImportError
        Without matplotlib (the ``plot`` extra).
    """
    records = check_records(records)
    out_dir = Path(out_dir)
    written = []
    for (dataset, method), group in group_records(records).items():
        ok = [r for r in group if r["status"] == "ok"]
        name = f"{_slug(dataset)}_{_slug(method)}"
        learned = [r for r in ok if r.get("label_correlation") is not None]
        if learned:
            matrices = np.array([np.asarray(r["label_correlation"], dtype=np.float64) for r in learned])
            fitted = _fitted_labels(matrices)
            kept = fitted.any(axis=0)
            names, note = _kept_labels(learned[0].get("label_names"), kept)
            mean = _mean_over_fitted(matrices, fitted)[np.ix_(kept, kept)]
            title = f"{method} on {dataset}: label correlation, mean of {len(learned)} splits{note}"
            path = out_dir / f"correlation_{name}.png"
            written.append(plot_label_correlation(mean, names, path, title, allow_missing=True))
        graphs = [r for r in ok if r.get("concept_graph") is not None]
        if graphs:
            written.append(_plot_learned_graph(graphs, dataset, method, out_dir / f"concept_graph_{name}.png"))
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
