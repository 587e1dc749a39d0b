"""What in a run's records needs the reader's attention: failed fits and grid-edge choices.

Read from the records alone (docs/experiments.md), so the report, ``summary.json`` and the
command line count the same things:

* **failed fits** -- every fit that raised: each (grid point, inner fold) of a
  hyper-parameter search whose fit or scoring raised, and each final fit (or prediction)
  of a split that raised.  A split whose search could not choose (every point failed, or
  the inner folds could not be drawn) is a *failed split*; when none of its inner fits
  is counted (the folds could not be drawn) it counts as one failed fit itself, so a
  failure is never counted as zero.
* **grid edges** -- a chosen value of a numeric hyper-parameter searched over three or
  more values that is the lowest or the highest of them: the best value may lie outside
  the grid, which should then be widened in that direction.
* **constant labels** -- labels that take one value in a training part (or in an inner
  fold's), refused or predicted constant as the run's ``constant_labels`` option says
  (:mod:`.constant_labels`): per dataset, which labels, in how many splits.
"""

from __future__ import annotations

import numbers

from .stats import group_records

__all__ = [
    "constant_label_counts", "constant_labels_sentence", "failed_stage", "failure_counts", "failures",
    "grid_edge_counts", "grid_edges", "is_number", "n_grid_edges",
    "search_summary",
]

#: Grids of fewer numeric values than this have no interior, so no edge is flagged.
MIN_EDGE_GRID = 3


def failed_stage(record) -> str | None:
    """Tell at which stage a record failed.

    Records written before the runner stored ``failed_stage`` are classified by the error the
    runner wrote for a search failure.

    Parameters
    ----------
    record : mapping
        One record of the run.

    Returns
    -------
    {"search", "fit"} or None
        ``"search"`` (the inner search could not choose), ``"fit"`` (the final fit or prediction
        raised) or None for a record that did not fail.
    """
    if record["status"] != "failed":
        return None
    stage = record.get("failed_stage")
    if stage is not None:
        return stage
    error = record.get("error") or ""
    return "search" if error.startswith("SearchError") or ": inner search: " in error else "fit"


def _failed_folds(entry) -> list[int] | None:
    """The inner folds where a failed grid point raised (None: not recorded, older records)."""
    fold_errors = entry.get("fold_errors")
    if fold_errors is None:
        return None
    return [k for k, error in enumerate(fold_errors) if error is not None]


def failures(records) -> list[dict]:
    """List one row per failed grid point of a search and per failed split, in record order.

    Parameters
    ----------
    records : iterable of mapping
        The run's records.

    Returns
    -------
    list of dict
        Each row: ``method``, ``dataset``, ``split``, ``stage`` (``"grid point"``: a point of the
        inner search raised on some folds; ``"search"`` or ``"fit"``: the split failed,
        :func:`failed_stage`), ``params`` (the grid point; for a split, the parameters of its
        final fit, or None), ``folds`` (the inner folds where the point raised, None when unknown
        or for a split), ``n_folds`` (inner folds of the search), ``n_fits`` (failed fits this row
        counts) and ``error`` (the first error).
    """
    rows = []
    for record in records:
        key = {k: record[k] for k in ("method", "dataset", "split")}
        search = record.get("search") or []
        for entry in search:
            if entry.get("status", "ok") != "failed":
                continue
            folds = _failed_folds(entry)
            rows.append({
                **key,
                "stage": "grid point",
                "params": entry.get("params") or {},
                "folds": folds,
                "n_folds": len(entry.get("fold_scores") or []) or None,
                "n_fits": max(1, len(folds or ())),
                "error": entry.get("error"),
            })
        stage = failed_stage(record)
        if stage is not None:
            # A search whose every point failed has its fits counted above already.
            counted = stage == "search" and search and all(e.get("status") == "failed" for e in search)
            rows.append({
                **key,
                "stage": stage,
                "params": record.get("params") or None,
                "folds": None,
                "n_folds": None,
                "n_fits": 0 if counted else 1,
                "error": record.get("error"),
            })
    return rows


def failure_counts(records) -> dict:
    """Count the run's failures.

    Parameters
    ----------
    records : iterable of mapping
        The run's records.

    Returns
    -------
    dict
        ``n_failed_fits``, of which ``n_failed_inner_fits`` in the searches; ``n_failed_points``
        (failed grid points, over all searches), ``n_failed_splits`` and
        ``n_searches_with_failures`` (splits whose search lost a point).
    """
    rows = failures(records)
    return {
        "n_failed_fits": sum(row["n_fits"] for row in rows),
        "n_failed_inner_fits": sum(row["n_fits"] for row in rows if row["stage"] == "grid point"),
        "n_failed_points": sum(row["stage"] == "grid point" for row in rows),
        "n_failed_splits": sum(record["status"] == "failed" for record in records),
        "n_searches_with_failures": len({
            (row["method"], row["dataset"], row["split"]) for row in rows if row["stage"] == "grid point"
        }),
    }


def search_summary(record) -> dict:
    """Count the points of a record's inner search.

    Parameters
    ----------
    record : mapping
        One record of the run.

    Returns
    -------
    dict
        ``n_points`` searched and ``n_failed_points`` (0 and 0 without a search).
    """
    search = record.get("search") or []
    return {
        "n_points": len(search),
        "n_failed_points": sum(entry.get("status", "ok") == "failed" for entry in search),
    }


def is_number(value) -> bool:
    """Tell whether ``value`` is a real number that is not a bool.

    A grid value a plot can place on an axis, and an edge can be read from.

    Parameters
    ----------
    value : object
        A grid value.

    Returns
    -------
    bool
        True for an ``numbers.Real`` that is not a bool.
    """
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def grid_edges(record) -> list[dict]:
    """List the chosen values of a successful record that lie at an edge of their grid.

    The grid is read from the record's search entries, failed points included: a failed point
    is still part of the grid that was asked for.

    Parameters
    ----------
    record : mapping
        One record of the run.

    Returns
    -------
    list of dict
        For each chosen parameter whose searched values are all numbers, at least
        :data:`MIN_EDGE_GRID` distinct ones, and whose choice is an end: a row ``param``,
        ``value``, ``edge`` (``"lowest"`` or ``"highest"``), ``grid`` (the distinct values,
        sorted).  Empty for a failed record or one without a search.
    """
    search = record.get("search") or []
    if record["status"] != "ok" or not search:
        return []
    rows = []
    for name, chosen in (record.get("params") or {}).items():
        values = [(entry.get("params") or {}).get(name) for entry in search]
        if not is_number(chosen) or not all(map(is_number, values)):
            continue
        grid = sorted(set(values))
        if len(grid) < MIN_EDGE_GRID:
            continue
        edge = "lowest" if chosen == grid[0] else "highest" if chosen == grid[-1] else None
        if edge is not None:
            rows.append({"param": name, "value": chosen, "edge": edge, "grid": grid})
    return rows


def grid_edge_counts(records) -> list[dict]:
    """Count, per (dataset, method, parameter) with a chosen value at a grid edge, how often.

    Parameters
    ----------
    records : iterable of mapping
        The run's records.

    Returns
    -------
    list of dict
        Each row: ``dataset``, ``method``, ``param``, ``lowest`` and ``highest`` (splits whose
        choice is that edge), ``n_searched`` (successful splits of the method on the dataset with
        a search) and ``grid`` (the distinct values of the first such split).
    """
    rows = []
    for (dataset, method), group in group_records(records).items():
        searched = [r for r in group if r["status"] == "ok" and r.get("search")]
        per_param: dict = {}
        for record in searched:
            for edge in grid_edges(record):
                row = per_param.setdefault(edge["param"], {
                    "dataset": dataset, "method": method, "param": edge["param"], "lowest": 0, "highest": 0,
                    "n_searched": len(searched), "grid": edge["grid"],
                })  # fmt: skip
                row[edge["edge"]] += 1
        rows += per_param.values()
    return rows


def n_grid_edges(edge_counts) -> int:
    """Count the chosen values that lie at a grid edge, over the rows of :func:`grid_edge_counts`.

    Parameters
    ----------
    edge_counts : iterable of dict
        Rows of :func:`grid_edge_counts`.

    Returns
    -------
    int
        The sum of their ``lowest`` and ``highest`` counts.
    """
    return sum(row["lowest"] + row["highest"] for row in edge_counts)


def constant_label_counts(records) -> list[dict]:
    """Count, per dataset whose records name constant labels, how many, in how many splits, and how handled.

    The constant labels depend on the split only, so each split is read once, from its first
    record.

    Parameters
    ----------
    records : iterable of mapping
        The run's records.

    Returns
    -------
    list of dict
        Each row: ``dataset``, ``option`` (the run's ``constant_labels``), ``labels`` (every label
        constant in some split's training part, sorted), ``n_labels`` (how many), ``n_splits``
        (splits of the dataset), ``n_splits_constant`` (splits whose training part has a constant
        label), ``n_inner_folds`` and ``n_inner_folds_constant`` (the same over the inner folds of
        the searches), ``label_names`` (of ``labels``).  Datasets without any constant label, and
        records written before the option existed, give no row.
    """
    per_split: dict = {}
    for record in records:
        info = record.get("constant_labels")
        if info is not None:
            per_split.setdefault(record["dataset"], {}).setdefault(record["split"], (info, record))
    rows = []
    for dataset, splits in per_split.items():
        labels = sorted({j for info, _ in splits.values() for j in info["indices"]})
        folds = [fold for info, _ in splits.values() for fold in info.get("inner_folds") or []]
        if not labels and not any(folds):
            continue
        info, record = next(iter(splits.values()))
        names = record.get("label_names") or []
        rows.append({
            "dataset": dataset,
            "option": info["option"],
            "labels": labels,
            "label_names": [str(names[j]) if j < len(names) else str(j) for j in labels],
            "n_labels": len(labels),
            "n_splits": len(splits),
            "n_splits_constant": sum(info["count"] > 0 for info, _ in splits.values()),
            "n_inner_folds": len(folds),
            "n_inner_folds_constant": sum(bool(fold) for fold in folds),
        })
    return rows


def constant_labels_sentence(row: dict) -> str:
    """Write one row of :func:`constant_label_counts` for people: what was constant, and what was done.

    Parameters
    ----------
    row : dict
        A row of :func:`constant_label_counts`.

    Returns
    -------
    str
        One line naming the dataset, the constant labels and their counts, and how the option
        handled them.
    """
    pairs = zip(row["labels"], row["label_names"])
    shown = ", ".join(f"{j} ({name})" if name != str(j) else str(j) for j, name in pairs)
    outer = (
        f"{row['n_labels']} label(s) constant in the training part of {row['n_splits_constant']} of "
        f"{row['n_splits']} split(s)" + (f": {shown}" if shown else "")
    )
    inner = (
        f"; in {row['n_inner_folds_constant']} of {row['n_inner_folds']} inner fold(s) of the searches"
        if row["n_inner_folds_constant"] else ""
    )
    if row["option"] == "predict_constant":
        done = "predicted at their training value, not learned (constant_labels = predict_constant)"
    else:
        done = (
            "refused (constant_labels = refuse): those fits fail; constant_labels = predict_constant "
            "(--constant-labels predict_constant) predicts them at their training value instead"
        )
    return f"{row['dataset']}: {outer}{inner}; {done}"
