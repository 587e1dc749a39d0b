"""MLRL's learned label covariance with the logistic and squared-hinge losses, by name.

Zhang & Yeung, *Multi-Label Relationship Learning* (problem 6), learn Omega with the hinge loss;
the same relation composes with any loss whose model step a registered solver can do.  On the
standard Mulan split of emotions (standardised on the training part, C = 1), each loss is fitted
with independent labels (``relation="independent"``) and with the learned covariance, all by name
and certified; the script prints the solver ``auto`` chose, the relative duality gap of the last
model step and the test metrics.

Run from anywhere after ``pip install .``:  python docs/examples/learned_covariance_losses.py
(the shared data folder ``../shared/datasets`` or ``$MULTILABEL_CORE_DATA``).
"""

from __future__ import annotations

import numpy as np

from multilabel_core import ComposedEstimator
from multilabel_core.datasets import load_dataset
from multilabel_core.metrics import evaluate


def standardised(train, test):
    mean, scale = train.mean(axis=0), train.std(axis=0)
    scale[scale == 0.0] = 1.0
    return (train - mean) / scale, (test - mean) / scale


def main() -> list[dict]:
    train, test = load_dataset("emotions-train"), load_dataset("emotions-test")
    X_train, X_test = standardised(np.asarray(train.X), np.asarray(test.X))
    rows = []
    for loss in ("logistic", "squared_hinge"):
        for relation in ("independent", "learned_covariance"):
            model = ComposedEstimator(loss=loss, regularizer="label_covariance", relation=relation, C=1.0)
            model.fit(X_train, train.Y)
            scores = model.decision_function(X_test)
            metrics = evaluate(test.Y, scores)
            rows.append({
                "loss": loss, "relation": relation, "solver": model.solver_name_,
                "certified": all(c.converged for c in model.step_certificates_),
                "relative_gap": model.step_certificates_[-1].relative_gap,
                **{name: metrics[name] for name in ("average_precision", "micro_f1", "macro_f1", "hamming_loss")},
            })  # fmt: skip
    return rows


if __name__ == "__main__":
    columns = ("loss", "relation", "solver", "certified", "relative_gap", "average_precision", "micro_f1", "macro_f1",
               "hamming_loss")  # fmt: skip
    print("| " + " | ".join(columns) + " |")
    print("| " + " | ".join("---" for _ in columns) + " |")
    for row in main():
        cells = [f"{row[c]:.4g}" if isinstance(row[c], float) else str(row[c]) for c in columns]
        print("| " + " | ".join(cells) + " |")
