"""Set-size prediction by a learned threshold (Gu, Li & Han, CIKM 2011, section 3.8).

A ranking system scores every label, t_ik = w_k^T x_i + b_k; the labels predicted relevant
are those scoring above a threshold t(x_i) learned from the training rows.  Each training
row gives the threshold that separates its relevant labels from its irrelevant ones
(eq. 34, following Elisseeff & Weston)::

    t_i = 1/2 (min_{k in y_i} t_ik + max_{l in ybar_i} t_il).

A row whose label set is empty has no relevant label: its threshold is put half a margin
above its top score, ``t_i = max_l t_il + 1/2``; a row whose label set is full, half a
margin below its lowest, ``t_i = min_k t_ik - 1/2`` (the margin of problem 1 is 1, and a row
with both kinds of labels whose pairs keep their margins has t_i half a margin or more from
each side).  So every row takes part and predicting it from its threshold gives its labels.

The paper fits t(x) "by linear regression"; as in Elisseeff & Weston, the regressors are
the c label scores (plus a constant): ``t(x) = a^T t(x) + a_0``, a linear function of x
with c + 1 coefficients whatever d is, which also keeps the features MLFS left out unused.
It is fitted by least squares (numpy's lstsq: the minimum-norm solution when the scores
are collinear, e.g. all zero).
"""

from __future__ import annotations

import numpy as np

__all__ = ["fit_threshold", "predict_threshold", "threshold_targets"]

#: Half the margin of problem (1): where a row without a relevant (or irrelevant) label puts its threshold.
HALF_MARGIN = 0.5


def threshold_targets(scores, Y) -> np.ndarray:
    """t_i of eq. 34 for every training row (rows with an empty or full label set: see the module docstring)."""
    relevant = np.asarray(Y).astype(bool)
    lowest_relevant = np.where(relevant, scores, np.inf).min(axis=1)
    highest_irrelevant = np.where(relevant, -np.inf, scores).max(axis=1)
    return np.where(
        ~relevant.any(axis=1),
        highest_irrelevant + HALF_MARGIN,
        np.where(relevant.all(axis=1), lowest_relevant - HALF_MARGIN, 0.5 * (lowest_relevant + highest_irrelevant)),
    )


def fit_threshold(scores, Y) -> np.ndarray:
    """The coefficients (a, a_0) (c + 1,) of the least-squares threshold t(x) = a^T scores + a_0."""
    design = np.hstack([scores, np.ones((scores.shape[0], 1))])
    coef, *_ = np.linalg.lstsq(design, threshold_targets(scores, Y), rcond=None)
    return coef


def predict_threshold(scores, coef) -> np.ndarray:
    """t(x) (n,) for score rows (n, c)."""
    return scores @ coef[:-1] + coef[-1]
