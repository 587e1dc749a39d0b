"""The max-margin concept network with label- and pair-specific kernels (registered as ``concept_network``).

Zhang, Xue, Fan, Huang, Wu & Liu, *Multi-Kernel Multi-Label Learning with Max-Margin Concept
Network*, IJCAI 2011.  The score of a labelling y of x is (eq. 1)

    theta^T Phi(x, y) = sum_l pi_l v_l^T phi_l(x) + sigma sum_{l ~ t} pi'_lt w_lt^T phi_lt(x),

pi_l = 1 if y_l = 1 else -eps, pi'_lt = 1 if y_l = y_t = 1, -eps' if y_l != y_t, 0 if both are 0.
It decouples (eq. 3-4) into one local model per label, learned by (5) s.t. (7):

    min  1/2 ||vartheta_l||^2 + lambda sum_i xi_l^i
    s.t. vartheta_l^T Delta Psi_l^i >= 1 - xi_l^i,    xi_l^i >= 0,

where ``Delta Psi_l^i = Psi_l(x^i, y_l^i, y_N^i) - Psi_l(x^i, 1 - y_l^i, y_N^i)`` (eq. 9).  The
paper omits its coefficients (eq. 10).  From eq. 4, with s_i = 2 y_l^i - 1: the site part is
``pi(y) - pi(1 - y) = s_i (1 + eps)``, and the edge part for t in N_l is
``pi'(y, y_t) - pi'(1 - y, y_t) = s_i a_t^i``, a_t^i = 1 + eps' if y_t^i = 1 else -eps'.  So

    Delta Psi_l^i = s_i [ (1 + eps) phi_l(x^i) ; sigma a_t^i phi_lt(x^i) for t in N_l ],

and the dual (8), ``max sum alpha - 1/2 alpha^T Q alpha`` over ``0 <= alpha <= lambda``, has

    Q_ij = s_i s_j [ (1 + eps)^2 K_l(i, j) + sigma^2 sum_{t in N_l} a_t^i a_t^j K_lt(i, j) ],

positive semi-definite when K_l and every K_lt are (a Hadamard product of PSD matrices is PSD).
The edge l ~ t enters the local models of both l and t: w_lt and w_tl are separate parameters.

The kernels K_l = U diag(omega_l) U^T and K_lt = U diag(zeta_lt) U^T share the top-m eigenbasis
of the base RBF kernel (section 3, :mod:`.kernels`), so phi_l(x^i) = sqrt(omega_l) o U[i, :] is
an explicit m-dimensional feature map, and each local model is a bias-free linear SVM on the
m (1 + |N_l|) features above: it is solved by the core's dual coordinate descent
(:func:`multilabel_core.solvers.linear_svm_cd`), never as an n x n kernel QP.  New rows get the
eigenfunctions by Nystrom (eq. 17-18) and their labels by inference (:mod:`.inference`).
"""

from __future__ import annotations

import numbers
import time
import warnings

import numpy as np

from multilabel_core.certificate import Certificate
from multilabel_core.estimator import MultiLabelEstimator
from multilabel_core.kernels import RBFKernel
from multilabel_core.solvers import ConvergenceWarning, linear_svm_cd
from multilabel_core.validation import MAX_ITER_LIMIT, check_random_state, check_scalar, check_seed

from .graph import ConceptGraph, check_threshold, concept_graph
from .inference import INFERENCE, InferenceResult, infer
from .kernels import EigenBasis, LearnedKernels, learn_kernels, top_eigenpairs

__all__ = ["ClippingWarning", "ConceptNetwork", "InferenceWarning", "local_features"]


class ClippingWarning(UserWarning):
    """Negative pair-kernel weights zeta_ltk of (14) were set to 0 (the warning counts them)."""


class InferenceWarning(UserWarning):
    """Inference stopped for some rows without a fixed point: a cycle (ICM) or the sweep cap."""


def local_features(basis_vectors, omega_l, zetas, neighbour_labels, Y, *, eps, sigma, eps_edge) -> np.ndarray:
    """The rows ``[(1 + eps) phi_l(x^i) ; sigma a_t^i phi_lt(x^i) for t in N_l]`` (n, m (1 + |N_l|)).

    ``basis_vectors`` is U (n, m) at the training rows (or the Nystrom eigenfunctions at other
    rows), ``omega_l`` (m,), ``zetas`` (|N_l|, m) in the order of ``neighbour_labels``; Y the
    {0, 1} labels that give a_t^i.  Delta Psi_l^i is s_i times row i.
    """
    blocks = [(1.0 + eps) * basis_vectors * np.sqrt(omega_l)]
    for zeta, t in zip(zetas, neighbour_labels):
        a = np.where(np.asarray(Y)[:, t] > 0, 1.0 + eps_edge, -eps_edge)
        blocks.append(sigma * a[:, None] * basis_vectors * np.sqrt(zeta))
    return np.hstack(blocks)


class ConceptNetwork(MultiLabelEstimator):
    """Multi-kernel multi-label learning with a max-margin concept network (registered as ``concept_network``).

    Parameters (the paper "tunes" them and gives no values; each default's reason is in
    docs/methods/concept-network.md)
    ----------
    C : float, default 1.0
        lambda of (5), the weight of the slacks (the dual box is [0, C]).
    sigma : float >= 0, default 1.0
        Weight of the edge potentials (eq. 1); 0 gives independent SVMs on the K_l.
    eps, eps_edge : float in (0, 1), default 0.5
        eps and eps' of pi and pi' (the weights of a negative label and of a disagreeing pair).
    threshold : float in [0, 1/2), default 0.05
        P0 of the concept network (edge l ~ t when p(t|l) p(l|t) / (p(t|l) + p(l|t)) > P0).
    site_tradeoff, edge_tradeoff : float > 0, default 1.0
        gamma_l and Upsilon_lt of (11) and (13) in relative units: the label term changes the
        truncated base kernel's trace by 1 / (2 tradeoff) of it (:mod:`.kernels`).
    gamma : float > 0 or None, default None
        The base RBF kernel's gamma; None: width = mean pairwise distance (the core's convention).
    n_components : int, default 100
        m, eigenpairs of the base kernel requested.
    eig_rtol : float in (0, 1), default 1e-3
        Eigenpairs with eta_k < eig_rtol eta_1 are dropped (the Nystrom extension divides by eta_k).
    inference : {"icm", "global"}, default "icm"
        The paper's ICM, or coordinate ascent on the global score (3) (:mod:`.inference`).
    max_sweeps : int, default 100
        Cap on the inference sweeps per row.
    tol : float, default 1e-3
        The coordinate-descent engine's projected-gradient bound per local model; a model is
        certified converged when its relative duality gap is within GAP_RTOL as well.
    max_iter : int, default 100000
        Epochs per local model.  Ten times the core CD default: the eigen features are badly scaled
        (sqrt(omega_k) spans the spectrum), and on yeast at C = 10 the local duals need up to 52000
        epochs (6.7 s for all 14 labels).
    random_state : None, int or Generator, default 0
        Seeds the eigensolver's start and the coordinate-descent permutations.

    Fitted attributes
    -----------------
    concept_graph_ : ConceptGraph (``adjacency``, ``statistic``, ``threshold``, ``edges``).
    basis_ : EigenBasis of the base kernel (``values`` eta, ``vectors`` U, ``time``).
    learned_kernels_ : LearnedKernels (``omega`` (L, m), ``zeta`` (E, m), ``site_gamma``,
        ``edge_upsilon``, ``n_clipped``).
    site_coef_ : (L, m), edge_coef_ : (E, m) -- the models in the eigenfunction coordinates:
        ``v_l^T phi_l(x) = phi(x) . site_coef_[l]`` and ``w_lt^T phi_lt(x) = phi(x) . edge_coef_[e]``.
    dual_ : (n, L) the alpha of (8); certificate_ : the summed certificate of the L local duals
        (per-label values in ``statistics``); kernel_ : the resolved base RBF kernel; X_fit_.
    """

    def __init__(
        self,
        C=1.0,
        sigma=1.0,
        eps=0.5,
        eps_edge=0.5,
        threshold=0.05,
        site_tradeoff=1.0,
        edge_tradeoff=1.0,
        gamma=None,
        n_components=100,
        eig_rtol=1e-3,
        inference="icm",
        max_sweeps=100,
        tol=1e-3,
        max_iter=100000,
        random_state=0,
    ):
        self.C = C
        self.sigma = sigma
        self.eps = eps
        self.eps_edge = eps_edge
        self.threshold = threshold
        self.site_tradeoff = site_tradeoff
        self.edge_tradeoff = edge_tradeoff
        self.gamma = gamma
        self.n_components = n_components
        self.eig_rtol = eig_rtol
        self.inference = inference
        self.max_sweeps = max_sweeps
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    # -- validation ---------------------------------------------------------------------

    def _validate_params(self) -> None:
        super()._validate_params()
        check_scalar(self.sigma, "sigma", low=0.0)
        for name in ("eps", "eps_edge"):
            check_scalar(getattr(self, name), name, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        check_threshold(self.threshold)
        for name in ("site_tradeoff", "edge_tradeoff"):
            check_scalar(getattr(self, name), name, low=0.0, low_inclusive=False)
        check_scalar(self.n_components, "n_components", kind=numbers.Integral, low=1, high=MAX_ITER_LIMIT)
        check_scalar(self.eig_rtol, "eig_rtol", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        if self.inference not in INFERENCE:
            raise ValueError(f"inference must be one of {INFERENCE}, got {self.inference!r}")
        check_scalar(self.max_sweeps, "max_sweeps", kind=numbers.Integral, low=1, high=MAX_ITER_LIMIT)
        check_seed(self.random_state)

    # -- fit ----------------------------------------------------------------------------

    def _fit(self, X, Y):
        rng = check_random_state(self.random_state)
        eigen_seed, cd_seed = (int(s) for s in rng.integers(0, 2**31 - 1, size=2))
        graph = concept_graph(Y, self.threshold)
        kernel = RBFKernel(gamma=self.gamma).resolve(X)
        basis = top_eigenpairs(kernel(X), self.n_components, eig_rtol=self.eig_rtol, random_state=eigen_seed)
        edges = graph.edges
        kernels = learn_kernels(basis, Y, edges, self.site_tradeoff, self.edge_tradeoff)
        if kernels.n_clipped:
            warnings.warn(
                f"ConceptNetwork: {kernels.n_clipped} of {kernels.n_edge_weights} pair-kernel weights zeta_ltk of "
                "(14) were negative and clipped at 0 so that every K_lt stays positive semi-definite",
                ClippingWarning,
                stacklevel=4,
            )
        self._solve_local_models(basis, kernels, graph, Y, cd_seed)
        self.concept_graph_ = graph
        self.basis_ = basis
        self.learned_kernels_ = kernels
        self.kernel_ = kernel
        self.X_fit_ = X.copy()

    def _solve_local_models(self, basis: EigenBasis, kernels: LearnedKernels, graph: ConceptGraph, Y, seed) -> None:
        n, n_labels = Y.shape
        m = basis.n_components
        edges = graph.edges
        # Row of edges for each (l, t): the local model of l owns the contiguous rows with edges[:, 0] == l.
        first = np.searchsorted(edges[:, 0], np.arange(n_labels + 1)) if edges.size else np.zeros(n_labels + 1, int)
        site_coef, edge_coef = np.zeros((n_labels, m)), np.zeros((len(edges), m))
        dual = np.zeros((n, n_labels))
        seeds = check_random_state(seed).integers(0, 2**31 - 1, size=n_labels)
        certificates, unconverged = [], []
        start = time.perf_counter()
        for label in range(n_labels):
            rows = np.arange(first[label], first[label + 1])
            if self.sigma == 0.0:
                rows = rows[:0]  # the edge features are all zero: no edge weight to learn
            features = local_features(
                basis.vectors, kernels.omega[label], kernels.zeta[rows], edges[rows, 1], Y,
                eps=self.eps, sigma=self.sigma, eps_edge=self.eps_edge,
            )  # fmt: skip
            signs = 2.0 * Y[:, [label]] - 1.0
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                fit = linear_svm_cd(
                    features, signs, C=self.C, loss="hinge", fit_intercept=False,
                    tol=self.tol, max_iter=self.max_iter, random_state=int(seeds[label]),
                )  # fmt: skip
            for record in caught:
                if not issubclass(record.category, ConvergenceWarning):
                    warnings.warn_explicit(record.message, record.category, record.filename, record.lineno)
            theta = fit.solution.coef[:, 0]
            site_coef[label] = theta[:m] * np.sqrt(kernels.omega[label])
            for j, row in enumerate(rows):
                edge_coef[row] = theta[m * (j + 1) : m * (j + 2)] * np.sqrt(kernels.zeta[row])
            dual[:, label] = fit.solution.dual[:, 0]
            certificates.append(fit.certificate)
            if not fit.certificate.converged:
                unconverged.append(label)
        self.site_coef_, self.edge_coef_, self.dual_ = site_coef, edge_coef, dual
        self.certificate_ = _combined(certificates, time.perf_counter() - start)
        if unconverged:
            warnings.warn(
                f"ConceptNetwork did not converge: {len(unconverged)} of {n_labels} local models (labels "
                f"{unconverged[:10]}{'...' if len(unconverged) > 10 else ''}) stopped at max_iter={self.max_iter} "
                f"epochs or above a relative duality gap of 1e-3; increase max_iter or lower C",
                ConvergenceWarning,
                stacklevel=5,
            )

    # -- prediction ---------------------------------------------------------------------

    def eigenfunctions(self, X) -> np.ndarray:
        """phi(x) (n, m): the Nystrom eigenfunctions (eq. 17) of the base kernel at the rows X."""
        X = self._validate_test_X(X)
        return self.basis_.extend(self.kernel_(X, self.X_fit_))

    def site_scores(self, X) -> np.ndarray:
        """g (n, L), ``g_l = v_l^T phi_l(x)``: the site potentials (the start of ICM)."""
        return self.eigenfunctions(X) @ self.site_coef_.T

    def infer(self, X) -> InferenceResult:
        """Run inference on the rows X: labels, per-label scores and the per-row counts (sweeps, cycles, cap)."""
        phi = self.eigenfunctions(X)
        return infer(
            phi @ self.site_coef_.T, phi @ self.edge_coef_.T, self.concept_graph_.edges,
            eps=self.eps, sigma=self.sigma, eps_edge=self.eps_edge, method=self.inference, max_sweeps=self.max_sweeps,
        )  # fmt: skip

    def _inferred(self, X) -> InferenceResult:
        result = self.infer(X)
        if result.n_cycled or result.n_hit_cap:
            warnings.warn(
                f"ConceptNetwork {self.inference} inference: {result.n_cycled} of {result.labels.shape[0]} rows "
                f"cycled (a labelling repeated) and {result.n_hit_cap} hit max_sweeps={self.max_sweeps}; those "
                "rows keep their last labelling" + (' (inference="global" never cycles)' if self.inference == "icm" else ""),
                InferenceWarning,
                stacklevel=3,
            )
        return result

    def _decision_function(self, X):
        return self._inferred(X).scores

    def predict(self, X) -> np.ndarray:
        """The labels found by inference, dense int64 (n, L) {0, 1}.

        At a fixed point they equal ``decision_function(X) > 0``; rows that cycled or hit the
        sweep cap (counted in an :class:`InferenceWarning`) keep their last labelling.
        """
        return self._inferred(self._validate_test_X(X)).labels


def _combined(certificates: list[Certificate], seconds: float) -> Certificate:
    """One certificate for the L local duals: primal and dual summed, per-label values in statistics."""
    primal = np.array([c.primal for c in certificates])
    dual = np.array([c.dual for c in certificates])
    return Certificate.from_objectives(
        primal.sum(),
        dual.sum(),
        kkt_violation=max(c.kkt_violation for c in certificates),
        n_iter=max(c.n_iter for c in certificates),
        time=seconds,
        converged=all(c.converged for c in certificates),
        solver="concept_network_cd",
        statistics={
            "primal": primal.tolist(),
            "dual": dual.tolist(),
            "n_epochs": [int(c.n_iter) for c in certificates],
            "converged": [bool(c.converged) for c in certificates],
            "relative_gap": [float(c.relative_gap) for c in certificates],
        },
    )
