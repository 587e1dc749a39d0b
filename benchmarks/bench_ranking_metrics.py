"""Ranking metrics: the Cython kernel against scikit-learn on the same scores."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import coverage_error, label_ranking_average_precision_score, label_ranking_loss

from _common import median_time, print_table
from multilabel_core.metrics import average_precision, coverage, ranking_loss

PAIRS = [
    ("average_precision", average_precision, label_ranking_average_precision_score),
    ("ranking_loss", ranking_loss, label_ranking_loss),
    ("coverage", coverage, lambda Y, S: coverage_error(Y, S) - 1),
]


def main() -> None:
    rng = np.random.default_rng(0)
    rows = []
    for n, L in [(2000, 6), (2000, 14), (6000, 101)]:
        Y = (rng.random((n, L)) < 0.3).astype(np.int8)
        Y[Y.sum(axis=1) == 0, 0] = 1
        S = rng.standard_normal((n, L))
        for name, ours, peer in PAIRS:
            t_ours, v_ours = median_time(lambda: ours(Y, S))
            t_peer, v_peer = median_time(lambda: peer(Y, S))
            rows.append([f"{n}x{L}", name, t_ours * 1e3, t_peer * 1e3, t_ours / t_peer, abs(v_ours - v_peer)])
    print_table(["shape", "metric", "ours ms", "sklearn ms", "ratio", "|diff|"], rows)


if __name__ == "__main__":
    main()
