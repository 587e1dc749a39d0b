"""LIEML's label enhancement in front of per-label models: BR and BSVM with and without it, on a real set.

Run ``python -m multilabel_core_plugins.lieml.cross_family`` (options: ``--dataset``, ``--data-home``,
``--lam``, ``--mu-min``).  Each model is a :class:`~multilabel_core.ComposedEstimator` built from
registered names, fitted on the dataset's standard training part (features standardised on it)
and measured on its test part; the table says which solver ``fit`` used, whether the label
enhancement fed it, how many training labels the enhancement turned over, and whether every
certificate of the fit (the enhancement's FPC one included) converged.

The compositions (docs/methods/lieml.md, "Label enhancement in front of any per-label model"):

- BR: squared hinge, linear kernel, ``cd``; BSVM: hinge, RBF kernel, ``smo``.  Behind the
  enhancement a sign loss trains on the signs of the enhanced labels.
- MSVR: the epsilon-insensitive loss, RBF kernel, ``irwls``, on the logical labels and on the
  enhanced labels U themselves (Tao, Xu & Geng's regressor T2, eq. 8, without its sign term).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from multilabel_core import ComposedEstimator
from multilabel_core.base import CapabilityError
from multilabel_core.datasets import load_dataset
from multilabel_core.metrics import average_precision, hamming_loss, macro_f1, micro_f1

__all__ = ["COMPOSITIONS", "main", "run"]

#: name -> the ComposedEstimator's parts by registered name (the relation is added per row).
COMPOSITIONS = {
    "BR": {"loss": "squared_hinge", "kernel": "linear", "solver": "cd"},
    "BSVM": {"loss": "hinge", "kernel": "rbf", "solver": "smo"},
    "MSVR": {"loss": "epsilon_insensitive", "kernel": "rbf", "solver": "irwls"},
}


def _standardised(train, test):
    X, X_test = (np.asarray(d.X.toarray() if hasattr(d.X, "toarray") else d.X, dtype=np.float64) for d in (train, test))
    mean, scale = X.mean(axis=0), X.std(axis=0)
    # A constant training column carries nothing: it is centred and left at scale 1.
    scale[scale == 0.0] = 1.0
    return (X - mean) / scale, (X_test - mean) / scale


def run(dataset: str = "emotions", data_home=None, lam: float = 0.1, mu_min: float = 3e-4) -> list[dict]:
    """Fit every composition with and without the label enhancement and measure it.

    Parameters
    ----------
    dataset : str, default "emotions"
        A dataset with ``-train`` and ``-test`` parts (:func:`~multilabel_core.datasets.load_dataset`).
    data_home : str, path or None, default None
        Where the datasets are kept; None is the library's default.
    lam : float, default 0.1
        lambda of the enhancement (Tao, Xu & Geng, eq. 4).
    mu_min : float, default 3e-4
        The enhancement's last continuation mu.

    Returns
    -------
    list of dict
        One record per (composition, relation): its parts, then either ``"refused"`` (the
        CapabilityError's message) or the solver ``fit`` used, whether the enhancement fed it,
        the labels it turned over, whether every certificate converged and their relative gaps,
        the warnings counted, and the test part's micro-F1, macro-F1, Hamming loss and average
        precision.
    """
    train = load_dataset(f"{dataset}-train", data_home=data_home)
    test = load_dataset(f"{dataset}-test", data_home=data_home)
    X, X_test = _standardised(train, test)
    Y, Y_test = np.asarray(train.Y), np.asarray(test.Y)
    records = []
    for name, parts in COMPOSITIONS.items():
        for relation in ("independent", "label_enhancement"):
            params = {"relation_params": {"lam": lam, "mu_min": mu_min}} if relation == "label_enhancement" else {}
            estimator = ComposedEstimator(**parts, relation=relation, **params)
            record = {"model": name, "relation": relation, **parts}
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    estimator.fit(X, Y)
            except CapabilityError as exc:
                records.append(record | {"refused": str(exc)})
                continue
            scores = estimator.decision_function(X_test)
            predicted = estimator.predict(X_test)
            fed = estimator.solution_.relation_state.fed_relation if estimator.fed_ else None
            records.append(
                record
                | {
                    "solver_used": estimator.solver_name_,
                    "fed": bool(estimator.fed_),
                    "turned_over": None if fed is None else int(fed.turned_over),
                    "certified": all(c.converged for c in estimator.step_certificates_),
                    "relative_gaps": [float(c.relative_gap) for c in estimator.step_certificates_],
                    "warnings": len(caught),
                    "micro_f1": micro_f1(Y_test, predicted),
                    "macro_f1": macro_f1(Y_test, predicted),
                    "hamming_loss": hamming_loss(Y_test, predicted),
                    "average_precision": average_precision(Y_test, scores),
                }
            )
    return records


def markdown(records: list[dict]) -> str:
    """The records as the table of docs/methods/lieml.md."""
    lines = [
        "| model | relation | solver (fed) | labels turned over | certificates (relative gaps) | micro-F1 | macro-F1 | HL | AP |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in records:
        if "refused" in r:
            lines.append(f"| {r['model']} | {r['relation']} | refused: {r['refused'][:120]} | | | | | | |")
            continue
        gaps = ", ".join(f"{g:.1e}" for g in r["relative_gaps"])
        lines.append(
            f"| {r['model']} | {r['relation']} | {r['solver_used']}{' (fed)' if r['fed'] else ''} | "
            f"{'' if r['turned_over'] is None else r['turned_over']} | "
            f"{'converged' if r['certified'] else 'NOT converged'} ({gaps}) | {r['micro_f1']:.3f} | "
            f"{r['macro_f1']:.3f} | {r['hamming_loss']:.3f} | {r['average_precision']:.3f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    """Run the comparison from the command line and print its table.

    Parameters
    ----------
    argv : list of str or None, default None
        The command-line arguments (``--dataset``, ``--data-home``, ``--lam``, ``--mu-min``);
        None reads ``sys.argv``.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="emotions", help="a dataset with -train and -test parts")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--lam", type=float, default=0.1, help="lambda of the enhancement (eq. 4)")
    parser.add_argument("--mu-min", type=float, default=3e-4, help="the continuation's last mu")
    args = parser.parse_args(argv)
    print(markdown(run(args.dataset, args.data_home, args.lam, args.mu_min)))


if __name__ == "__main__":
    main()
