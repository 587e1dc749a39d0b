"""Testing helpers of the PrML family's SVM+ engine: problems, the explicit dual, the reference check.

They belong with the engine they check (:mod:`~multilabel_core_plugins.prml.svmplus`) and build on
the core's testing kit (:mod:`multilabel_core.testing`): its feature and sign strategies, its
reference box-QP solver and its KKT and objective assertions.  Importing this module needs
hypothesis (the ``test`` extra), as the core's kit does.

>>> from hypothesis import given
>>> from multilabel_core_plugins.prml.testing import svmplus_problems
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from multilabel_core.testing.checks import assert_kkt, assert_matches_reference
from multilabel_core.testing.reference import MAX_REFERENCE_VARIABLES, solve_box_qp_reference
from multilabel_core.testing.strategies import feature_matrices, label_embeddings, sign_matrices

from .svmplus import privileged_label_features

__all__ = ["assert_svmplus_matches_reference", "svmplus_dual_matrices", "svmplus_problems"]


@st.composite
def svmplus_problems(draw, *, n_samples=st.integers(3, 7), n_labels=st.integers(1, 3)):
    """Draw the keyword arguments of :func:`~multilabel_core_plugins.prml.svmplus.svmplus_cd`: a whole SVM+ problem.

    ``X`` dense or sparse (1 to 3 features, entries in [-3, 3]), ``Y`` signs, privileged
    features ``X_priv`` either the other labels (You et al., *Privileged Multi-label
    Learning*, eq. 3, with their ``privileged_mask``; only for L > 1) or drawn features,
    ``embedding`` None or a drawn (k, L) matrix A, ``C`` in [0.1, 5], ``gamma`` in [0.2, 5]
    and ``fit_intercept``.

    Parameters
    ----------
    n_samples : int or hypothesis strategy of int, default integers(3, 7)
        Rows of X.
    n_labels : int or hypothesis strategy of int, default integers(1, 3)
        Labels L.

    Returns
    -------
    dict
        ``X``, ``X_priv``, ``Y``, ``C``, ``gamma``, ``embedding``, ``privileged_mask`` and
        ``fit_intercept``, to pass as ``svmplus_cd(**problem)``.

    Examples
    --------
    >>> from hypothesis import given, settings
    >>> from multilabel_core_plugins.prml.svmplus import svmplus_cd
    >>> @settings(max_examples=5)
    ... @given(svmplus_problems())
    ... def test(problem):
    ...     assert svmplus_cd(**problem).certificate.primal >= 0.0
    >>> test()
    """
    n = n_samples if isinstance(n_samples, int) else draw(n_samples)
    n_lab = n_labels if isinstance(n_labels, int) else draw(n_labels)
    X = draw(feature_matrices(n, st.integers(1, 3), sparse=None, magnitude=3.0))
    Y = draw(sign_matrices(n, n_lab))
    if n_lab > 1 and draw(st.booleans()):
        X_priv, mask = privileged_label_features(Y)
    else:
        X_priv, mask = draw(feature_matrices(n, st.integers(1, 3), sparse=None, magnitude=3.0)), None
    return {
        "X": X, "X_priv": X_priv, "Y": Y, "C": draw(st.floats(0.1, 5.0)), "gamma": draw(st.floats(0.2, 5.0)),
        "embedding": draw(label_embeddings(n_lab)), "privileged_mask": mask, "fit_intercept": draw(st.booleans()),
    }


def svmplus_dual_matrices(X, X_priv, Y, C, gamma, *, embedding=None, privileged_mask=None, fit_intercept=False,
                          privileged_intercept=True, **ignored):
    """Build the SVM+ dual of :func:`~multilabel_core_plugins.prml.svmplus.svmplus_cd` as an explicit QP -- ONLY for tiny problems.

    You, Xu, Wang, Xu & Tao, *Privileged Multi-label Learning*, eqs. 7 and 11, in minimisation
    form over eta = [alpha; beta] >= 0 (each an (n, L) array in C order)::

        g(eta) = 1/2 eta^T H eta + p^T eta + constant,
        H = [[Q + K / gamma, K / gamma], [K / gamma, K / gamma]],   p = [-1 - C/gamma K 1; -C/gamma K 1],

    with ``Q_st = y_s y_t (a_i^T a_i') (x_j^T x_j')`` for s = (j, i), t = (j', i') (x with its
    constant 1 when ``fit_intercept``) and ``K_st = [i = i'] psi_s^T psi_t``, psi_s = m_i o x~_j
    (with the constant 1, never masked, when ``privileged_intercept``), and ``constant =
    C^2 / (2 gamma) 1^T K 1``.

    Parameters
    ----------
    X, X_priv, Y, C, gamma, embedding, privileged_mask, fit_intercept, privileged_intercept
        As :func:`~multilabel_core_plugins.prml.svmplus.svmplus_cd`'s.
    **ignored
        Any other keyword argument of ``svmplus_cd``, so that a dict of its arguments can be
        passed as it is.

    Returns
    -------
    H : ndarray of shape (2 n L, 2 n L)
        The dual's Hessian.
    p : ndarray of shape (2 n L,)
        Its linear term.
    constant : float
        Its constant term.

    Raises
    ------
    ValueError
        Beyond :data:`multilabel_core.testing.reference.MAX_REFERENCE_VARIABLES` dual variables.
    """
    Y = np.asarray(Y, dtype=np.float64)
    n, n_labels = Y.shape
    if 2 * n * n_labels > MAX_REFERENCE_VARIABLES:
        raise ValueError(
            f"{2 * n * n_labels} dual variables: the explicit dual is for tiny reference problems "
            f"(at most {MAX_REFERENCE_VARIABLES})"
        )

    def dense(matrix, constant):
        rows = matrix.toarray() if hasattr(matrix, "toarray") else np.array(matrix, dtype=np.float64)
        return np.hstack([rows, np.ones((n, 1))]) if constant else rows

    rows, privileged = dense(X, fit_intercept), dense(X_priv, privileged_intercept)
    A = np.eye(n_labels) if embedding is None else np.asarray(embedding, dtype=np.float64)
    d_priv = np.shape(X_priv)[1]
    mask = np.ones((n_labels, d_priv), dtype=bool) if privileged_mask is None else np.asarray(privileged_mask, bool)
    mask = np.hstack([mask, np.ones((n_labels, privileged.shape[1] - d_priv), dtype=bool)])
    j, i = np.divmod(np.arange(n * n_labels), n_labels)
    y = Y[j, i]
    Q = np.outer(y, y) * (A.T @ A)[np.ix_(i, i)] * (rows @ rows.T)[np.ix_(j, j)]
    psi = privileged[j] * mask[i]
    K = (i[:, None] == i[None, :]) * (psi @ psi.T)
    H = np.block([[Q + K / gamma, K / gamma], [K / gamma, K / gamma]])
    linear = C / gamma * K.sum(axis=1)
    return H, np.concatenate([-1.0 - linear, -linear]), C**2 / (2.0 * gamma) * K.sum()


def assert_svmplus_matches_reference(fit, problem: dict, *, kkt_tol: float) -> float:
    """Assert that an SVM+ Fit agrees with the reference solve of its explicit dual.

    Builds the dual of :func:`~multilabel_core_plugins.prml.svmplus.svmplus_cd` as an explicit
    QP (:func:`svmplus_dual_matrices`), solves it with the core's reference active-set solver
    (:func:`multilabel_core.testing.reference.solve_box_qp_reference`), and asserts the fit's
    objective within 1e-6 relative (:func:`multilabel_core.testing.checks.assert_matches_reference`;
    the duals themselves are not unique) and its KKT conditions within ``kkt_tol``
    (:func:`multilabel_core.testing.checks.assert_kkt`, the box [0, inf)).

    Parameters
    ----------
    fit : Fit
        What ``svmplus_cd(**problem)`` returned.
    problem : dict
        The keyword arguments the fit was solved with.
    kkt_tol : float
        Largest projected gradient allowed at the fit's duals.

    Returns
    -------
    float
        The fit's dual objective in minimisation form, ``g(eta)``, for further checks.
    """
    H, p, constant = svmplus_dual_matrices(**problem)
    reference = solve_box_qp_reference(H, p, 0.0, np.inf)
    eta = np.concatenate([fit.solution.dual.ravel(), fit.solution.model_state["beta"].ravel()])
    value = float(0.5 * eta @ H @ eta + p @ eta + constant)
    assert_matches_reference(eta, value, reference.x, reference.objective + constant, rtol_objective=1e-6,
                             atol_objective=1e-9, atol_alpha=None)
    assert_kkt(eta, H @ eta + p, None, np.inf, tol=kkt_tol, equality=False)
    return value
