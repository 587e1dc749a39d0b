# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Inner loop of the ranking metrics (MLRL section 5.1).

For each row i with relevant set Y_i and scores f(x_i, .), and each label j, write
``rank(j) = |{k : f_k >= f_j}|`` (ties count against the label: the pessimistic
rank, as in scikit-learn's ``coverage_error`` and ``label_ranking_average_precision_score``).
Per row, in the column order of the output, this computes

0. coverage: max_{j in Y_i} rank(j) - 1 (MLRL eq. 26);
1. ranking loss: |{(k, l) in Y_i x Ybar_i : f_k <= f_l}| / (|Y_i| |Ybar_i|) (eq. 27);
2. average precision: 1/|Y_i| sum_{j in Y_i} |{k in Y_i : f_k >= f_j}| / rank(j) (eq. 28);
3. one-error (eq. 25): the fraction of the top-scored labels (all labels tied at the
   maximum) that are irrelevant -- the expected one-error when ties are broken at random.

Cost O(L^2) per row with no allocation, which beats sorting for the label counts of
multi-label data (L <= a few hundred) and keeps ties exact.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport NAN

cnp.import_array()


def ranking_statistics(const double[:, ::1] scores, const signed char[:, ::1] Y):
    """Per-row (coverage, ranking_loss, average_precision, one_error), shape (n, 4).

    A row with no relevant label gets NaN in all four columns: each measure asks how
    well the relevant labels are ranked, and there are none (eq. 26-28 divide by or
    maximise over the empty set).  A row with every label relevant has no
    relevant/irrelevant pair to misorder, so its ranking loss is 0.
    :mod:`multilabel_core.metrics` averages each column over its defined rows.
    """
    cdef Py_ssize_t n = scores.shape[0], L = scores.shape[1]
    if Y.shape[0] != n or Y.shape[1] != L:
        raise ValueError(f"scores {(n, L)} and Y {(Y.shape[0], Y.shape[1])} differ in shape")
    out = np.empty((n, 4), dtype=np.float64)
    cdef double[:, ::1] o = out
    cdef Py_ssize_t i, j, k
    cdef double fj, top, n_top, n_top_irr, cov, wrong, ap
    cdef Py_ssize_t n_rel, rank, rank_rel
    with nogil:
        for i in range(n):
            n_rel = 0
            top = scores[i, 0]
            for j in range(L):
                n_rel += Y[i, j]
                if scores[i, j] > top:
                    top = scores[i, j]
            n_top = 0
            n_top_irr = 0
            for j in range(L):
                if scores[i, j] == top:
                    n_top += 1
                    if Y[i, j] == 0:
                        n_top_irr += 1
            if n_rel == 0:
                o[i, 0] = NAN
                o[i, 1] = NAN
                o[i, 2] = NAN
                o[i, 3] = NAN
                continue
            o[i, 3] = n_top_irr / n_top
            cov = 0
            wrong = 0
            ap = 0
            for j in range(L):
                if Y[i, j] == 0:
                    continue
                fj = scores[i, j]
                rank = 0
                rank_rel = 0
                for k in range(L):
                    if scores[i, k] >= fj:
                        rank += 1
                        if Y[i, k]:
                            rank_rel += 1
                    if Y[i, k] == 0 and fj <= scores[i, k]:
                        wrong += 1
                if rank - 1 > cov:
                    cov = rank - 1
                ap += <double> rank_rel / rank
            o[i, 0] = cov
            if n_rel == L:
                o[i, 1] = 0
            else:
                o[i, 1] = wrong / (n_rel * (L - n_rel))
            o[i, 2] = ap / n_rel
    return out
