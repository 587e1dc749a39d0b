"""Privileged labels with the hinge and the squared hinge, against independent labels, by name (docs/methods/prml.md).

You, Xu, Wang, Xu & Tao, *Privileged Multi-label Learning*: SVM+ replaces each slack by a correcting function of the
other labels (eq. 4).  With the squared hinge the correcting function's value is paid squared (the squared-slack
SVM+).  Each (regulariser, loss, relation) is a ``ComposedEstimator`` of registered names, C = 0.1, fitted on
emotions' training split (features standardised on it) and measured on its test split; the last column is the
largest change of a test decision value against the row with independent labels and the same loss and regulariser.

    MULTILABEL_CORE_DATA=../shared/datasets python plugins/prml/examples/privileged_losses_emotions.py
"""

import time

import numpy as np

from multilabel_core import ComposedEstimator
from multilabel_core.datasets import load_dataset
from multilabel_core.metrics import average_precision, hamming_loss, micro_f1


def main() -> None:
    train, test = load_dataset("emotions-train"), load_dataset("emotions-test")
    mean, std = train.X.mean(axis=0), train.X.std(axis=0) + 1e-12
    X, X_test = (train.X - mean) / std, (test.X - mean) / std
    print("| regularizer | loss | relation | solver | relative gap | AP | micro-F1 | Hamming loss | max change | s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for regularizer, params in (("frobenius", {}), ("low_rank", {"regularizer_params": {"rank": 5}, "max_iter": 100})):
        for loss in ("hinge", "squared_hinge"):
            independent = None
            for relation in ("independent", "privileged_labels"):
                # PrBR's solver for both rows of the per-label problems (auto would take the core's cd for the
                # independent one: the same problem, another solver).
                solver = "privileged_cd" if regularizer == "frobenius" else "auto"
                start = time.perf_counter()
                model = ComposedEstimator(loss=loss, regularizer=regularizer, relation=relation, solver=solver,
                                          C=0.1, **params).fit(X, train.Y)
                seconds = time.perf_counter() - start
                scores = model.decision_function(X_test)
                change = "" if independent is None else f"{np.abs(scores - independent).max():.3f}"
                independent = scores if independent is None else independent
                predicted = model.predict(X_test)
                print(f"| `{regularizer}` | `{loss}` | `{relation}` | {model.solver_name_} | "
                      f"{model.certificate_.relative_gap:.1e} | {average_precision(test.Y, scores):.3f} | "
                      f"{micro_f1(test.Y, predicted):.3f} | {hamming_loss(test.Y, predicted):.3f} | {change} | "
                      f"{seconds:.1f} |")


if __name__ == "__main__":
    main()
