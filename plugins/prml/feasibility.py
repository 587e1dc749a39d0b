"""Is an SVM+ problem feasible?  A linear program per label.

You, Xu, Wang, Xu & Tao's per-label problem (6) (and PrBR's) asks for (w, w~) with::

    y_j <w, x_j> + <w~, y~_j> >= 1,    <w~, y~_j> >= 0    (j = 1..n),

the slack of example j being the correcting function ``<w~, y~_j>`` (eq. 4).  Without a
constant privileged feature this system can have no solution -- two examples whose
privileged features are opposite force both slacks to 0, and then both margins must reach
1 -- and then the dual (7) is unbounded: its coordinate descent never stops on its own.
Feasibility of a linear system is a linear program with a zero objective, which HiGHS
(``scipy.optimize.linprog``) decides exactly up to its tolerances: status 2 certifies
infeasibility.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

__all__ = ["infeasible_labels"]


def infeasible_labels(X, Y, pool, *, fit_intercept: bool = False) -> list[int]:
    """Find the labels whose SVM+ system (module docstring) has no solution.

    Each label's system is a linear program with a zero objective, decided by HiGHS; a label
    is reported only on HiGHS's infeasibility certificate (status 2).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        The rows x_j.
    Y : array-like of shape (n, L)
        The labels as signs in {-1, +1}.
    pool : ndarray of shape (L, L), bool
        Row i marks the labels in y~_ij (eq. 3: all but i, or the label pool of
        :meth:`~multilabel_core_plugins.prml.PrivilegedLabels.pool`).
    fit_intercept : bool, default False
        Append a constant 1 to each x_j (the bias as one more weight).

    Returns
    -------
    list of int
        The labels i whose system is certified infeasible, ascending.  A label whose program
        HiGHS cannot decide (a numerical failure) is not reported: only a certificate counts.
    """
    X = sp.csr_matrix(X, dtype=np.float64)
    if fit_intercept:
        X = sp.hstack([X, np.ones((X.shape[0], 1))], format="csr")
    Y = np.asarray(Y, dtype=np.float64)
    n = X.shape[0]
    infeasible = []
    for i in range(Y.shape[1]):
        privileged = sp.csr_matrix(Y[:, pool[i]])
        margin = sp.hstack([sp.diags(Y[:, i]) @ X, privileged], format="csr")
        slack = sp.hstack([sp.csr_matrix((n, X.shape[1])), privileged], format="csr")
        A = sp.vstack([-margin, -slack], format="csr")
        b = np.concatenate([-np.ones(n), np.zeros(n)])
        result = linprog(np.zeros(A.shape[1]), A_ub=A, b_ub=b, bounds=(None, None), method="highs")
        if result.status == 2:
            infeasible.append(i)
    return infeasible
