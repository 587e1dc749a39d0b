"""The concept network's relation with the hinge and with the squared hinge, by name, on emotions-train/-test.

Zhang et al., *Multi-Kernel Multi-Label Learning with Max-Margin Concept Network*: the local models (5) with the
paper's hinge, and the same models with the squared hinge ``lambda sum_i max(0, 1 - s_i t_i)^2`` (the dual (8)
with the box [0, inf) and the diagonal 1 / (2 lambda)).  Everything else is equal: the graph (P0 = 0.05), the
learned kernels on the RBF base kernel, sigma = 1, C = 1, no bias (the paper's models), features standardised
with the training split's mean and deviation.  For each loss it prints the certificate, then the test
measures of the composed estimator's own prediction (the sign of the site scores, ICM's start) and of the
paper's ICM inference (``concept_inference``), and how far the two losses' decision values are apart.

Run from the repository (docs/methods/concept-network.md quotes its output)::

    MULTILABEL_CORE_DATA=/path/to/datasets python plugins/concept_network/scripts/compare_losses.py
"""

import time
import warnings

import numpy as np
from multilabel_core_plugins.concept_network import ClippingWarning, concept_inference

from multilabel_core import ComposedEstimator
from multilabel_core.datasets import load_dataset
from multilabel_core.metrics import evaluate

MEASURES = ("micro_f1", "macro_f1", "hamming_loss", "average_precision", "ranking_loss")


def main():
    train, test = load_dataset("emotions-train"), load_dataset("emotions-test")
    mean, std = train.X.mean(axis=0), train.X.std(axis=0)
    std[std == 0.0] = 1.0
    X, X_test = (train.X - mean) / std, (test.X - mean) / std
    Y, Y_test = np.asarray(train.Y), np.asarray(test.Y)
    scores = {}
    print(f"emotions: {X.shape[0]} training rows, {X_test.shape[0]} test rows, {Y.shape[1]} labels")
    header = "loss           prediction   " + "  ".join(f"{m:>17}" for m in MEASURES)
    rows = []
    for loss in ("hinge", "squared_hinge"):
        model = ComposedEstimator(
            loss=loss, regularizer="frobenius", relation="concept_network", kernel="rbf", solver="concept_network_cd",
            relation_params={"threshold": 0.05}, C=1.0, fit_intercept=False,
        )  # fmt: skip
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ClippingWarning)  # counted on every fit of real labels
            model.fit(X, Y)
        seconds = time.perf_counter() - start
        c = model.certificate_
        print(
            f"{loss}: solver {model.solver_name_}, converged {c.converged}, relative gap {c.relative_gap:.2e}, "
            f"epochs (most of a label) {c.n_iter}, final projected-gradient bounds {sorted(set(c.statistics['tol']))}, "
            f"{seconds:.2f} s"
        )
        scores[loss] = model.decision_function(X_test)
        site = evaluate(Y_test, scores[loss], model.predict(X_test), metrics=MEASURES)
        inferred = concept_inference(model, X_test)
        icm = evaluate(Y_test, inferred.scores, inferred.labels, metrics=MEASURES)
        rows.append((loss, "site sign", site))
        rows.append((loss, f"ICM ({inferred.n_cycled} cycled)", icm))
    print(header)
    for loss, kind, values in rows:
        print(f"{loss:<14} {kind:<13}" + "  ".join(f"{values[m]:>17.4f}" for m in MEASURES))
    difference = np.abs(scores["hinge"] - scores["squared_hinge"])
    flips = np.mean((scores["hinge"] > 0) != (scores["squared_hinge"] > 0))
    print(
        f"decision values, hinge vs squared hinge: max |difference| {difference.max():.3f}, mean {difference.mean():.3f} "
        f"(mean |value| {np.abs(scores['hinge']).mean():.3f}); test labels with another sign: {flips:.1%}"
    )


if __name__ == "__main__":
    main()
