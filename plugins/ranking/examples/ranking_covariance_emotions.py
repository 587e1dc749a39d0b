"""The pairwise-ranking loss with and without a learned label covariance, by name, on emotions.

Gu, Li & Han, *Correlated Multi-Label Feature Selection* (CIKM 2011), problem (6) with p = 1 is
the pairwise ranking hinge (eq. 1) under ``1/2 ||W||^2 + mu/2 tr(W D^-1 W^T)`` with D learned
(CLaRank SVM); Zhang & Yeung, *Multi-Label Relationship Learning* (problem 6), learn the label
covariance Omega under ``1/2 tr(W Omega^-1 W^T)`` alone.  Both regularisers compose with the ranking
loss by name, with a linear or an RBF kernel; each is fitted with independent labels and with the
learned covariance, ``solver="auto"`` choosing the solver.  On the standard Mulan split of emotions
(standardised on the training part, C = 1, mu = 1), the script prints the solver chosen, whether
every certificate converged, the last model step's relative duality gap, the relative joint gap
of the alternation (None without a learned relation) and the test ranking measures.

Run from the checkout:  python plugins/ranking/examples/ranking_covariance_emotions.py
(the shared data folder ``../shared/datasets`` or ``$MULTILABEL_CORE_DATA``).
"""

from __future__ import annotations

import numpy as np

from multilabel_core import ComposedEstimator
from multilabel_core.datasets import load_dataset
from multilabel_core.metrics import evaluate

MEASURES = ("average_precision", "ranking_loss", "coverage", "one_error")

#: (regulariser, its parameters, relation): the fixed-relation counterpart of each learned model first.
COMPOSITIONS = [
    ("frobenius", None, "independent"),
    ("frobenius_label_covariance", {"mu": 1.0}, "learned_covariance"),
    ("label_covariance", None, "independent"),
    ("label_covariance", None, "learned_covariance"),
]


def standardised(train, test):
    mean, scale = train.mean(axis=0), train.std(axis=0)
    scale[scale == 0.0] = 1.0
    return (train - mean) / scale, (test - mean) / scale


def main(kernels=("linear", "rbf")) -> list[dict]:
    train, test = load_dataset("emotions-train"), load_dataset("emotions-test")
    X_train, X_test = standardised(np.asarray(train.X), np.asarray(test.X))
    rows = []
    for kernel in kernels:
        for regularizer, params, relation in COMPOSITIONS:
            model = ComposedEstimator(
                loss="pairwise_ranking_hinge", regularizer=regularizer, regularizer_params=params,
                relation=relation, kernel=kernel, C=1.0,
            )  # fmt: skip
            model.fit(X_train, train.Y)
            metrics = evaluate(test.Y, model.decision_function(X_test), metrics=MEASURES)
            joint = getattr(model, "joint_gap_history_", None)
            rows.append({
                "kernel": kernel, "regularizer": regularizer, "relation": relation, "solver": model.solver_name_,
                "certified": all(c.converged for c in model.step_certificates_),
                "relative_gap": model.step_certificates_[-1].relative_gap,
                "joint_gap": None if joint is None else joint[-1], **metrics,
            })  # fmt: skip
    return rows


if __name__ == "__main__":
    columns = ("kernel", "regularizer", "relation", "solver", "certified", "relative_gap", "joint_gap", *MEASURES)
    print("| " + " | ".join(columns) + " |")
    print("| " + " | ".join("---" for _ in columns) + " |")
    for row in main():
        cells = [f"{row[c]:.4g}" if isinstance(row[c], float) else str(row[c]) for c in columns]
        print("| " + " | ".join(cells) + " |")
