"""Algorithm 1 as the family's model step: the label-ranking dual (7) for a fixed coupling R.

Gu, Li & Han (CIKM 2011).  For fixed D (through R^-1 = D (D + mu I)^-1, the regulariser's
``label_gram``) and fixed feature weights s, the dual (7) is solved by dual coordinate
descent over the alpha_ikl (Algorithm 1 with eq. 23's gradient; the engine is
:func:`multilabel_core_plugins.ranking.engine.ranking_cd`, see docs/solvers/cd-ranking.md).

Precision.  ``ranking_cd`` stops on LIBLINEAR's rule -- every projected gradient (eq. 25)
within [-eps, eps] -- whose meaning in objective terms depends on C and the data
(scene, C = 100: eps = 0.1 leaves a relative duality gap of 7e-2, eps = 0.01 one of 5e-3).
This solver is asked for a relative duality gap instead: an alpha-step runs ranking_cd at
eps = 0.1 (LIBLINEAR's default) and, while the certificate's relative gap
``gap / max(1, |primal|)`` exceeds ``tol``, again at eps / 10 warm-started from the alpha
it reached.  A warm start whose warm state carries ``"eps"`` (the eps a previous step reached)
starts there.

Feature subsets.  A problem whose kernel is a :class:`~.kernel.SubsetKernel` (Algorithm
2's working set P, T subsets) is solved at the feature weights ``s = P^T lambda``.  With
T > 1 the solver also learns lambda (it ``learns_state``, so the core's
:class:`~multilabel_core.solvers.AlternatingSolver` alternates): after the alpha-step it
takes the lambda-step of eq. 31 (:func:`~.subsets.lambda_step`), and the next model step,
warm-started from this one's solution, solves at the new lambda.  The relation step that
follows (Theorem 3.4) sees the features re-weighted by the new lambda: the solution's
``weight_factor`` is F with ``F^T F = sum_j (w^j)^T w^j / s'_j + b^T b``, s' the weights
after the lambda-step (the paper orders the steps alpha, D, lambda; lambda before D lets the
lambda-step use this alpha-step's R^-1, and every block step decreases the objective in
either order).

Kernels.  The dual (7) sees the rows only through their inner products, so any positive
semi-definite kernel k serves (Elisseeff & Weston's ranking SVM is a kernel method, and
eq. 18 writes the subset kernel as one).  A problem whose kernel is a matrix (``precomputed``:
an RBF or polynomial kernel given by name reaches the solver as its training Gram matrix K)
is solved on a factor G with ``G G^T = K``: the eigenvectors of K scaled by the square roots
of its eigenvalues, those at most ``n * eps * lambda_max`` dropped (round-off: the stock
kernels and :class:`~multilabel_core.kernels.PrecomputedKernel` are checked positive
semi-definite), so ``||K - G G^T||_2 <= n * eps * lambda_max`` and the certificate is exact
for that G.  The weights ``W_G = G^T beta R^-1`` on G's columns never leave the solver: the
solution is the kernel expansion ``dual_coef = beta R^-1`` (scores ``k(x, X) beta R^-1 + b``,
since ``G W_G = K beta R^-1``) and ``weight_factor`` is ``[W_G; b]``, whose Gram is W^T W in
the kernel's feature space (Theorem 3.4's D-step needs nothing else).  The factor costs one
symmetric eigendecomposition of K; the model steps of an alternation on the same K reuse it.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import ClassVar

import attrs
import numpy as np
import scipy.sparse as sp

from multilabel_core.base import CapabilityError, Fit, Problem, RelationState, Solution, Solver, WarmState, warm_state_of
from multilabel_core.solvers import SMALLEST_EPS, AlternatingSolver, tighten_to_relative_gap
from multilabel_core.validation import check_random_state, count, flag, positive, seed

from .engine import ENGINE_COUNTS, ranking_cd
from .subsets import feature_scores, lambda_step

__all__ = ["FIRST_EPS", "SMALLEST_EPS", "RankingCDSolver", "check_two_labels", "kernel_factor", "ranking_alternating"]

#: LIBLINEAR's default eps, where an alpha-step without a warm-start eps starts.
FIRST_EPS = 0.1


def check_two_labels(n_labels: int) -> None:
    """Refuse a Y of fewer than two label columns: a ranking needs a pair of labels to order.

    The pairwise ranking hinge (eq. 1) sums over the pairs (k, l) of a relevant and an
    irrelevant label of a row; with one label column there is none, problem (6) is its
    regulariser alone and its optimum W = 0, b = 0 is certified at gap 0 while ranking
    nothing (and the set-size threshold then decides every row alone).  A one-label task
    is binary classification, for which the binary methods are made.

    Parameters
    ----------
    n_labels : int
        The number of label columns of Y.

    Raises
    ------
    ValueError
        When ``n_labels`` is less than 2, naming a binary method to use instead.
    """
    if n_labels < 2:
        raise ValueError(
            f"ranking methods need at least two labels: Y has {n_labels} label column, so no pair of a relevant "
            f"and an irrelevant label exists and the pairwise ranking loss (eq. 1) is empty (its optimum, W = 0, "
            f"would rank nothing); for a single label use a binary method such as br or bsvm"
        )


@attrs.frozen
class RankingCDSolver(Solver):
    """LaRank SVM's solver and the family's model step: Algorithm 1 to a relative duality gap.

    Solves a :class:`~multilabel_core.base.Problem` whose loss enumerates its ranked pairs
    (``pairs``: :class:`~multilabel_core.losses.PairwiseRankingHinge`), whose regulariser
    has the form ``1/2 tr(W M^-1 W^T)`` (``label_gram``: M is R^-1; ``Frobenius`` gives
    LaRank SVM, eq. 1; ``FrobeniusLabelCovariance`` with D held fixed, R = I + mu D^-1;
    ``LabelCovariance`` with Omega held fixed, R = Omega^-1), whose kernel is linear (a
    kernel with ``subsets``, :class:`~.kernel.SubsetKernel`, re-weights the features) or a
    positive semi-definite kernel matrix (``precomputed``; module docstring, "Kernels"), and
    whose relation is fixed and carries no state of its own.  The bias (``fit_intercept``) is
    the weight of a constant feature, as in eq. 1.  A learned relation is the core's
    alternating driver's business: ``AlternatingSolver(inner=RankingCDSolver())`` is CLaRank
    SVM (:func:`ranking_alternating`).

    Parameters
    ----------
    tol : float, default 1e-3
        Largest relative duality gap ``gap / max(1, |primal|)`` of a solve.
    max_iter : int, default 10000
        Most epochs of one ranking_cd call (ConvergenceWarning beyond).
    shrinking : bool, default True
        Whether ranking_cd drops from its sweeps the coordinates stuck at a bound of their
        box, restoring them all before its final check of the stopping rule.
    random_state : None, int or numpy Generator, default 0
        Seed of the coordinate permutations (anything
        :func:`multilabel_core.validation.check_seed` accepts).  An int (or None) starts a
        stream afresh at every solve: an int makes fits reproducible, and every model step
        of an alternation starts the same stream.  A Generator is drawn from and goes on
        from solve to solve (and from fit to fit).

    Notes
    -----
    ``solve`` returns a :class:`~multilabel_core.base.Fit`; its solution has ``coef`` W
    (d, c) on the raw features (for a kernel matrix ``coef`` is None and ``dual_coef`` is
    beta R^-1, (n, c)), ``intercept`` b, ``dual`` alpha (one entry per pair, in
    the order of the loss's ``pairs``); ``model_state`` (:attr:`model_state_names`):
    ``"beta"`` (eq. 8), ``"pairs"``, ``"weight_gram"``, ``"feature_weights"`` s and, with a
    SubsetKernel, ``"subset_weights"`` lambda (the ones solved with) and, for T > 1,
    ``"next_subset_weights"`` (after the lambda-step); ``relation_state``: ``weight_factor``
    F (module docstring), ``regularizer_value`` ``1/2 tr(H R^-1)`` with H = V^T diag(s) V +
    (1^T beta)^T (1^T beta) (bias part with ``fit_intercept``), V = X^T beta, the matrix
    of the dual (7)'s quadratic term, which is ``dual_gram`` when T <= 1 (with lambda
    learned the joint bound of a fixed-s problem does not bound the relaxed problem).
    The certificate's ``statistics["eps"]`` is the eps reached.  A ``warm_start`` (for the
    same Y) starts from its warm state (:attr:`warm_state_names`): alpha (``"dual"``),
    ``"eps"`` and the subset weights (``"next_subset_weights"``, else ``"subset_weights"``;
    the kernel's own weights when absent or of another length).
    """

    tol: float = attrs.field(default=1e-3, validator=positive)
    max_iter: int = attrs.field(default=10000, validator=count)
    shrinking: bool = attrs.field(default=True, validator=flag)
    random_state: object = attrs.field(default=0, validator=seed)

    # The kernel must be linear or a matrix (check): ``requires`` names capabilities that must all hold.
    requires: ClassVar[dict[str, tuple[str, ...]]] = {
        "loss": ("pairs",),
        "regularizer": ("label_gram",),
    }
    #: A kernel with ``subsets`` (and ``weights``) is a working set of feature subsets (eq. 18).
    consumes: ClassVar[dict[str, tuple[str, ...]]] = {"kernel": ("subsets",)}
    warm_state_names: ClassVar[dict[str, str]] = {
        "dual": "scaled: alpha (n_pairs,), one dual variable per label pair, in the box [0, C / pairs of its row]",
        "eps": "fixed: the eps of the stopping rule the last alpha-step reached",
        "subset_weights": "fixed: lambda (T,), the subset weights solved with",
        "next_subset_weights": "fixed: lambda (T,) after the lambda-step (T > 1), where the next step solves",
    }
    model_state_names: ClassVar[dict[str, str]] = {
        "beta": "beta (n, c) of eq. 8, the per-label sums of the pairs' alphas",
        "pairs": "(pair_row, pair_k, pair_l), the label pairs of the alphas",
        "weight_gram": "W_z^T W_z (c, c), bias included",
        "feature_weights": "s (d,), the feature weights solved with",
        "subset_weights": "lambda (T,), the subset weights solved with (a SubsetKernel)",
        "next_subset_weights": "lambda (T,) after the lambda-step (T > 1)",
    }

    def check(self, problem: Problem) -> None:
        super().check(problem)
        check_two_labels(problem.n_labels)
        kernel = problem.kernel
        if not (kernel.linear or kernel.precomputed):
            raise CapabilityError(
                f"{type(self).__name__} needs a linear kernel or the kernel's training matrix, but "
                f"{type(kernel).__name__} is neither (its matrix exceeds the estimator's kernel memory budget): "
                "compute it as a precomputed kernel, or use the linear kernel"
            )
        if _working_set(kernel) is not None and kernel.precomputed:
            raise CapabilityError(f"{type(kernel).__name__} re-weights features, but a kernel matrix has none")

    def learns_state(self, problem: Problem) -> bool:
        """Tell whether a solve also learns state of its own: the weights of several subsets.

        Parameters
        ----------
        problem : Problem
            The problem to be solved.

        Returns
        -------
        bool
            True when the problem's kernel is a working set of more than one feature subset
            (a :class:`~.kernel.SubsetKernel` with T > 1): each solve then takes a lambda-step
            (eq. 31), so the core's alternating driver keeps stepping even with a fixed
            relation.
        """
        subsets = _working_set(problem.kernel)
        return subsets is not None and subsets.shape[0] > 1

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> Fit:
        self.check(problem)
        start = time.perf_counter()
        if problem.kernel.precomputed:  # the rows of a factor of K stand for the rows (module docstring)
            X = kernel_factor(problem.X)
        else:  # CSR once: ranking_cd would convert a CSC X at every call of the eps chain.
            X = problem.X.tocsr() if sp.issparse(problem.X) else problem.X
        Y = (np.asarray(problem.Y) > 0).astype(np.int8)
        state = warm_state_of(warm_start)
        subsets, lam = _subset_weights(problem.kernel, state)
        s = None if subsets is None else lam @ subsets
        eps = FIRST_EPS if state is None else float(state.get("eps", FIRST_EPS))
        alpha0 = None if state is None else state.get("dual")
        R_inv = problem.regularizer.label_gram(problem.n_labels)
        fit, eps = self._alpha_step(X, Y, problem, R_inv, s, alpha0, eps)
        solution = fit.solution
        beta = solution.model_state["beta"]
        V = np.asarray(X.T @ beta)
        weights = np.ones(X.shape[1]) if s is None else s
        model = dict(solution.model_state) | {"feature_weights": weights}
        kept = {"eps": eps}
        next_weights = weights
        if subsets is not None:
            model["subset_weights"] = kept["subset_weights"] = lam
            if subsets.shape[0] > 1:
                step = lambda_step(subsets, lam, weights**2 * feature_scores(V, R_inv))
                model["next_subset_weights"] = kept["next_subset_weights"] = step
                next_weights = step @ subsets
        H = V.T @ (V * weights[:, None])
        if problem.fit_intercept:
            bias_row = beta.sum(axis=0)
            H += np.outer(bias_row, bias_row)
        H = (H + H.T) / 2.0
        relation_state = RelationState(
            weight_factor=reweighted_factor(solution.coef, solution.intercept, next_weights, problem.fit_intercept),
            dual_gram=H if subsets is None or subsets.shape[0] == 1 else None,
            regularizer_value=0.5 * float(np.vdot(H, R_inv)),
        )
        certificate = attrs.evolve(fit.certificate, time=time.perf_counter() - start)
        if problem.kernel.precomputed:  # W_G lives on the factor's columns: the model is its kernel expansion
            solution = attrs.evolve(solution, coef=None, dual_coef=beta @ R_inv)
        warm = WarmState(type(self).__name__, scaled={"dual": solution.dual}, fixed=kept)
        solution = attrs.evolve(solution, model_state=model, relation_state=relation_state, warm_state=warm)
        return Fit(solution, certificate)

    def _alpha_step(self, X, Y, problem: Problem, R_inv, feature_weights, alpha0, eps: float) -> tuple[Fit, float]:
        """Algorithm 1 at eps, eps / 10, ... (warm-started) until the relative gap is at most ``tol``.

        Returns the last call's Fit, whose certificate counts the epochs and the engine's
        counts (updates, visits, ...) of all the calls (``statistics["eps"]`` the last eps),
        and that eps.
        """
        rng = check_random_state(self.random_state)

        def solve(eps, start):
            return ranking_cd(
                X,
                Y,
                float(problem.C),
                R_inv,
                feature_weights,
                fit_intercept=bool(problem.fit_intercept),
                tol=eps,
                max_iter=self.max_iter,
                shrinking=bool(self.shrinking),
                random_state=rng,
                alpha0=alpha0 if start is None else start.solution.dual,
                warn=False,
            )

        return tighten_to_relative_gap(solve, eps, self.tol, name=type(self).__name__, counts=ENGINE_COUNTS)


def _working_set(kernel) -> np.ndarray | None:
    """The (T, d) subsets of a kernel that re-weights features by a working set (``subsets``), else None."""
    subsets = getattr(kernel, "subsets", None)
    return None if subsets is None else np.asarray(subsets)


def _subset_weights(kernel, state) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The working set P and the lambda to solve at (class docstring), or (None, None) for every feature."""
    subsets = _working_set(kernel)
    if subsets is None:
        return None, None
    for key in ("next_subset_weights", "subset_weights"):
        weights = None if state is None else state.get(key)
        if weights is not None and np.shape(weights) == (subsets.shape[0],):
            return subsets, attrs.evolve(kernel, weights=weights).weights  # checked on the simplex
    return subsets, np.asarray(kernel.weights)


#: The last factors computed, by kernel matrix (weakly: a factor is dropped when its matrix is freed).
_FACTORS: list[tuple[weakref.ref, np.ndarray]] = []
_FACTORS_LOCK = threading.RLock()  # re-entrant: a freed matrix's callback may run while it is held
#: How many matrices keep their factor (the model steps of one alternation reuse one).
FACTOR_CACHE_SIZE = 2


def kernel_factor(K) -> np.ndarray:
    """Factor a kernel matrix K as ``G G^T`` up to ``n eps lambda_max(K)`` in the spectral norm.

    The solver works on the rows of G in place of the kernel's feature space (module
    docstring, "Kernels").  Eigenvalues at most ``n * eps * lambda_max`` are dropped (they are round-off of a positive
    semi-definite K; below -n * PSD_RTOL * max |K_ij| :class:`~multilabel_core.kernels.PrecomputedKernel`
    has refused K already).  The factor of the same matrix object is reused when a product
    with a fixed probe vector still agrees (K changed in place is factored again).

    Parameters
    ----------
    K : ndarray or sparse matrix of shape (n_samples, n_samples)
        The training kernel matrix, symmetric positive semi-definite up to round-off
        (only its symmetric part is used).

    Returns
    -------
    G : ndarray of shape (n_samples, r), float64, C-contiguous
        The eigenvectors of K with eigenvalue above ``n * eps * lambda_max``, scaled by the
        square roots of their eigenvalues (r of them), so that
        ``||K - G G^T||_2 <= n * eps * lambda_max(K)``.  The same array is returned for
        the same, unchanged matrix object (at most :data:`FACTOR_CACHE_SIZE` are kept).

    Raises
    ------
    ValueError
        When K has no positive eigenvalue above round-off (the zero matrix): no row can be
        told from another.
    """
    K = np.asarray(K.toarray() if sp.issparse(K) else K, dtype=np.float64)
    n = K.shape[0]
    probe = np.random.default_rng(0).standard_normal(n)
    with _FACTORS_LOCK:
        _FACTORS[:] = [(ref, G) for ref, G in _FACTORS if ref() is not None]
        cached = next((G for ref, G in _FACTORS if ref() is K), None)
    if cached is not None:
        # ||K - G G^T||_2 is round-off of order n eps lambda_max <= n^2 eps max |K_ij| while K is unchanged.
        allowance = 10.0 * n * n * np.finfo(np.float64).eps * float(np.abs(K).max())
        if np.linalg.norm(K @ probe - cached @ (cached.T @ probe)) <= allowance * np.linalg.norm(probe):
            return cached
    eigenvalues, vectors = np.linalg.eigh((K + K.T) / 2.0)
    largest = max(float(eigenvalues[-1]), 0.0)
    keep = eigenvalues > n * np.finfo(np.float64).eps * largest
    if not keep.any():
        raise ValueError("the kernel matrix is zero: every row has the same (zero) representation, nothing to rank")
    G = np.ascontiguousarray(vectors[:, keep] * np.sqrt(eigenvalues[keep]))
    # The callback runs when K is freed: a factor (n x r floats) never outlives its matrix.
    ref = weakref.ref(K, _forget)
    with _FACTORS_LOCK:
        _FACTORS[:] = [*_FACTORS[-(FACTOR_CACHE_SIZE - 1):], (ref, G)] if FACTOR_CACHE_SIZE > 1 else [(ref, G)]
    return G


def _forget(ref) -> None:
    with _FACTORS_LOCK:
        _FACTORS[:] = [entry for entry in _FACTORS if entry[0] is not ref]


def reweighted_factor(W, intercept, weights, fit_intercept: bool) -> np.ndarray:
    """Return F with ``F^T F = sum_j (w^j)^T w^j / s_j + b^T b`` (rows with s_j = 0 dropped; b with the bias).

    W^T W of the features re-weighted by s: Theorem 3.4's C (Gu, Li & Han, *Correlated
    multi-label feature selection*), whose square root the D-step normalises; the cutting-plane
    solver's D-step reads the same factor.  The relation state's ``weight_factor`` (what
    :func:`multilabel_core.solvers.alternating.weight_factor` reads) of features re-weighted by s.

    Parameters
    ----------
    W : ndarray of shape (n_features, n_labels)
        The feature weights w^j as rows.
    intercept : ndarray of shape (n_labels,)
        The bias b (read only when ``fit_intercept``).
    weights : ndarray of shape (n_features,)
        The feature scores s_j >= 0.
    fit_intercept : bool
        Whether b is a row of F.

    Returns
    -------
    ndarray of shape (n_kept, n_labels)
        F: the rows w^j / sqrt(s_j) of the features with s_j > 0, then b.
    """
    support = weights > 0.0
    rows = [W[support] / np.sqrt(weights[support])[:, None]]
    if fit_intercept:
        rows.append(np.asarray(intercept)[None, :])
    return np.vstack(rows)


def ranking_alternating(tol: float = 1e-3, max_iter: int = 100, cd: RankingCDSolver | None = None, **cd_settings):
    """CLaRank SVM's solver: the core's AlternatingSolver over RankingCDSolver model steps and Theorem 3.4's D-step.

    ``AlternatingSolver(inner=cd, tol=tol, max_iter=max_iter)``: model steps by Algorithm 1
    at R = I + mu D^-1 (warm-started from the previous alpha and eps), relation steps
    ``D = relation.update(W^T W)``, stopping by the AlternatingSolver's rule: the relative
    joint duality gap of (W, D) at most ``tol`` (the defaults are the family's: 1e-3,
    100 alpha-steps).  ``cd`` is the model
    steps' solver, or its settings are given as keywords (``cd_tol``, ``cd_max_iter``,
    ``shrinking``, ``random_state``); not both.

    Parameters
    ----------
    tol : float, default 1e-3
        The alternation's tolerance: it stops, converged, when the relative joint duality
        gap of the primal (6) over (W, D) is at most ``tol`` (the core's
        :class:`~multilabel_core.solvers.AlternatingSolver` rule).
    max_iter : int, default 100
        Most model steps (alpha-steps) of the alternation.
    cd : RankingCDSolver or None, default None
        The model steps' solver; None builds one from ``cd_settings``.
    **cd_settings
        Settings of the model steps' :class:`RankingCDSolver` when ``cd`` is None:
        ``cd_tol`` (its ``tol``), ``cd_max_iter`` (its ``max_iter``), ``shrinking`` and
        ``random_state``.

    Returns
    -------
    AlternatingSolver
        ``AlternatingSolver(inner=cd, tol=tol, max_iter=max_iter)``.

    Raises
    ------
    ValueError
        When both ``cd`` and ``cd_settings`` are given, when a setting is not one of the
        four above, or when ``cd`` is not a RankingCDSolver.
    """
    if cd is not None and cd_settings:
        raise ValueError(f"give cd or its settings {sorted(cd_settings)}, not both")
    if cd is None:
        renamed = {"cd_tol": "tol", "cd_max_iter": "max_iter"}
        unknown = set(cd_settings) - set(renamed) - {"shrinking", "random_state"}
        if unknown:
            raise ValueError(f"unknown settings {sorted(unknown)}: ranking_alternating takes tol, max_iter, cd, "
                             "cd_tol, cd_max_iter, shrinking, random_state")
        cd = RankingCDSolver(**{renamed.get(name, name): value for name, value in cd_settings.items()})
    if not isinstance(cd, RankingCDSolver):
        raise ValueError(f"cd must be a RankingCDSolver, got {cd!r}")
    return AlternatingSolver(inner=cd, tol=tol, max_iter=max_iter)
