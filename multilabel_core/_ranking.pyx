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

Each row is sorted once (numpy's argsort, outside the loop) and then swept from the
highest score down, one group of tied scores at a time: every label of a group of
equal scores ending at sorted position ``end`` has the pessimistic rank ``end``, and the
counts of relevant and irrelevant labels seen so far give all four measures in O(L)
per row -- O(L log L) with the sort, instead of O(L^2) for comparing all pairs.
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
    order_array = np.argsort(np.negative(scores), axis=1, kind="stable").astype(np.intp, copy=False)
    cdef const Py_ssize_t[:, ::1] order = order_array
    cdef double[:, ::1] o = out
    cdef Py_ssize_t i, start, end, p
    cdef Py_ssize_t n_rel, seen_rel, seen_irr, group_rel, group_irr
    cdef double group_score, wrong, ap, cov
    with nogil:
        for i in range(n):
            n_rel = 0
            for p in range(L):
                n_rel += Y[i, p]
            if n_rel == 0:
                o[i, 0] = NAN
                o[i, 1] = NAN
                o[i, 2] = NAN
                o[i, 3] = NAN
                continue
            seen_rel = 0
            seen_irr = 0
            wrong = 0
            ap = 0
            cov = 0
            start = 0
            while start < L:
                group_score = scores[i, order[i, start]]
                group_rel = 0
                end = start
                while end < L and scores[i, order[i, end]] == group_score:
                    group_rel += Y[i, order[i, end]]
                    end += 1
                group_irr = end - start - group_rel
                seen_rel += group_rel
                seen_irr += group_irr
                if start == 0:
                    o[i, 3] = <double> group_irr / (end - start)
                if group_rel > 0:
                    # every relevant label of the group has rank `end`, with `seen_rel`
                    # relevant labels and `seen_irr` irrelevant ones scored at least as high
                    cov = end - 1
                    ap += group_rel * (<double> seen_rel / end)
                    wrong += group_rel * <double> seen_irr
                start = end
            o[i, 0] = cov
            o[i, 1] = 0 if n_rel == L else wrong / (n_rel * (L - n_rel))
            o[i, 2] = ap / n_rel
    return out
