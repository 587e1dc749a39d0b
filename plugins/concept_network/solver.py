"""The concept network's solver: kernel learning on the eigenbasis, then the L local duals (8) by dual CD.

Zhang et al., *Multi-Kernel Multi-Label Learning with Max-Margin Concept Network*, sections 2-3.  One
:meth:`ConceptNetworkSolver.solve` on the core's contract (a :class:`~multilabel_core.base.Problem` in, a
:class:`~multilabel_core.base.Fit` out):

1. the concept network of the training labels (the problem's relation: any relation with ``graph(Y)``,
   e.g. :class:`~.graph.ConceptNetworkRelation`);
2. the top-m eigenpairs of the base kernel matrix (the problem's kernel, linear, RBF or any other, on its
   rows, or the precomputed matrix the estimator hands over; for a kernel of p explicit features, from
   the p x p matrix ``Phi^T Phi``, with no n x n matrix) and the closed forms of (12) and (14)
   (:mod:`.kernels`);
3. for each label l, the linear SVM on the explicit features
   ``[(1 + eps) phi_l(x^i); sigma a_t^i phi_lt(x^i), t in N_l]`` with signs s_i = 2 y_l^i - 1, solved by
   :func:`multilabel_core.solvers.linear_svm_cd` with the problem's loss: the hinge gives the dual (8),
   box [0, lambda]; the squared hinge ``lambda sum_i max(0, 1 - s_i t_i)^2`` the same dual with the box
   [0, inf) and the diagonal term D = 1 / (2 lambda), ``max sum alpha - 1/2 alpha^T (Q + D I) alpha``
   (the engine's dual (2)); any loss with ``dual_box`` and ``dual_diagonal`` of that form is accepted.
   With ``problem.fit_intercept`` each local model gains a regularised bias, the weight of a constant
   feature of value ``intercept_scaling`` (LIBLINEAR's convention; the paper's models (5) have none).

The certificate sums the L local certificates (per-label values in ``statistics``).  It is converged only
when it means it: every local dual met the engine's rule, every local relative duality gap is within
GAP_RTOL, and so is the summed one.  A label that meets the projected-gradient rule ``tol`` with a gap
above that is solved on from where it stopped at tol / 10, tol / 100, ... (down to
:data:`~multilabel_core.solvers.SMALLEST_EPS`, within its ``max_iter`` epochs); when every label is
within its own gap but the sum is not (the labels' primals below 1 each, so their relative gaps measure
against 1 and not against their sum), the labels above their share of the summed target are tightened
the same way.  Neither changes the optimum, only how close the returned point is to it.

The solution holds ``dual`` (alpha, (n, L)), ``intercept`` (the biases, zero without one), ``dual_coef``
-- the site part of each label's score as an expansion in the base kernel,
``kernel(x, X) @ dual_coef[:, l] = (1 + eps) v_l^T phi_l(x)`` (:func:`site_dual_coef`), which is what a
:class:`~multilabel_core.ComposedEstimator` predicts with -- and, in ``model_state`` (declared in the solver's ``model_state_names``), the graph, the
eigenbasis, the learned kernels, the models in eigenfunction coordinates (``site_coef``, ``edge_coef``)
and the inference weights (``eps``, ``sigma``, ``eps_edge``) that :func:`~.estimator.concept_inference`
needs; the solver's ``fitted_attributes`` make them a composing estimator's ``concept_graph_``,
``basis_``, ``learned_kernels_``, ``site_coef_``, ``edge_coef_`` and ``dual_``.
"""

from __future__ import annotations

import time
import warnings
from typing import ClassVar

import attrs
import numpy as np

from multilabel_core.base import CapabilityError, Fit, Problem, Solution, Solver, WarmState, warm_state_of
from multilabel_core.certificate import GAP_RTOL, Certificate, within_gap_rtol
from multilabel_core.parallel import map_threads, n_jobs_field
from multilabel_core.solvers import SMALLEST_EPS, ConvergenceWarning, linear_svm_cd
from multilabel_core.validation import check_random_state, count, non_negative, open_unit, positive, seed

from .kernels import feature_eigenpairs, learn_kernels, top_eigenpairs

__all__ = ["ClippingWarning", "ConceptNetworkSolver", "local_features", "site_dual_coef"]

#: Each tightening divides the projected-gradient bound of a label above its gap target by this.
TIGHTEN_FACTOR = 10.0


class ClippingWarning(UserWarning):
    """Negative pair-kernel weights zeta_ltk of (14) were set to 0 (the warning counts them)."""


def local_features(basis_vectors, omega_l, zetas, neighbour_labels, Y, *, eps, sigma, eps_edge) -> np.ndarray:
    """Build label l's explicit features ``[(1 + eps) phi_l(x^i) ; sigma a_t^i phi_lt(x^i) for t in N_l]``.

    Delta Psi_l^i of eq. 9 (Zhang et al.) is s_i times row i.

    Parameters
    ----------
    basis_vectors : ndarray of shape (n, m)
        U, the eigenbasis at the training rows.
    omega_l : ndarray of shape (m,)
        Label l's site kernel weights; phi_l(x^i) = sqrt(omega_l) o u(i).
    zetas : ndarray of shape (|N_l|, m)
        The edge kernel weights of (l, t) for each neighbour t, in the order of ``neighbour_labels``.
    neighbour_labels : sequence of int
        N_l, the labels joined to l.
    Y : array-like of shape (n, L), 0/1
        The training labels, which give a_t^i = 1 + eps' if y_t^i = 1 else -eps'.
    eps : float
        eps of pi.
    sigma : float
        The weight of the edge potentials.
    eps_edge : float
        eps' of pi'.

    Returns
    -------
    ndarray of shape (n, m (1 + |N_l|))
        The feature rows of the local linear SVM of label l.
    """
    blocks = [(1.0 + eps) * basis_vectors * np.sqrt(omega_l)]
    for zeta, t in zip(zetas, neighbour_labels):
        a = np.where(np.asarray(Y)[:, t] > 0, 1.0 + eps_edge, -eps_edge)
        blocks.append(sigma * a[:, None] * basis_vectors * np.sqrt(zeta))
    return np.hstack(blocks)


def site_dual_coef(basis, site_coef, eps: float) -> np.ndarray:
    """Write the site scores as a kernel expansion in the base kernel.

    The Nystrom eigenfunctions (eq. 17) are linear in the base kernel's row, ``phi(x) = K(x, X) U / eta``,
    so the site potential ``(1 + eps) v_l^T phi_l(x)`` of each local model (its score with the
    neighbours' edge terms left out, the start of ICM) is ``K(x, X) U diag(1 / eta) (1 + eps) site_coef[l]``.

    Parameters
    ----------
    basis : EigenBasis
        The eigenbasis (U (n, m) and eta (m,)) of the base kernel on the training rows.
    site_coef : array-like of shape (L, m)
        The site models in eigenfunction coordinates, one row per label.
    eps : float
        eps of pi: the site term's weight is 1 + eps.

    Returns
    -------
    ndarray of shape (n, L)
        The coefficients D with ``K(x, X) @ D = (1 + eps) phi(x) @ site_coef.T``.
    """
    return basis.vectors @ ((1.0 + eps) * np.asarray(site_coef) / basis.values).T


@attrs.frozen
class ConceptNetworkSolver(Solver):
    """Kernel learning and the per-label duals (8) of the max-margin concept network, by dual CD.

    Parameters
    ----------
    sigma : float >= 0, default 1.0
        Weight of the edge potentials (eq. 1).
    eps, eps_edge : float in (0, 1), default 0.5
        eps of pi and eps' of pi'.
    site_tradeoff, edge_tradeoff : float > 0, default 1.0
        gamma_l and Upsilon_lt of (11) and (13) in relative units (:mod:`.kernels`).
    n_components : int, default 100
        m, eigenpairs requested.
    eig_rtol : float in (0, 1), default 1e-3
        Eigenpairs below ``eig_rtol * eta_1`` are dropped.
    tol : float, default 1e-3
        The CD engine's projected-gradient bound per local dual; tightened tenfold, from the point
        reached, for a label whose duality gap is above its target (module docstring).
    max_iter : int, default 100000
        Epochs per local dual, over all its tightenings.
    intercept_scaling : float > 0, default 1.0
        Value of the constant feature whose weight is a local model's bias, when the problem
        fits one (``fit_intercept``; the paper's models have none).
    random_state : None, int or Generator, default 0
        Seeds the eigensolver's start and the CD permutations.
    n_jobs : int or None, default None
        Threads the local models are solved on (:mod:`multilabel_core.parallel`; None: the
        budget the caller leaves).  The result does not depend on it.

    Notes
    -----
    What it asks of the parts (capabilities, never classes):

    * the loss: ``dual_box(C) -> (0, U)`` and ``dual_diagonal(C) -> D`` describing the SVM dual
      :func:`~multilabel_core.solvers.linear_svm_cd` solves (the hinge: U = C, D = 0; the squared
      hinge: U = inf, D = 1 / (2C)); the logistic and epsilon-insensitive losses have no such dual and
      are refused with the missing capability named;
    * the regulariser: ``label_gram(L) = M`` **diagonal**, m_l > 0 (``1/2 tr(Theta M^-1 Theta^T)``):
      label l's local model is (5) at the cost C m_l, its primal and dual scaled by 1 / m_l in the
      certificate (Frobenius, the paper's (2): M = I); a coupling M is refused;
    * the relation: ``graph(Y)`` (a :class:`~.graph.ConceptGraph`), not learned;
    * the kernel: any (its Gram matrix on the training rows is eigendecomposed; linear, RBF,
      polynomial and precomputed all define the basis and so the model); a kernel of explicit
      features (``explicit_features``: ``kernel="nystroem"`` or ``"rff"``) gives the basis from the
      p x p matrix ``Phi^T Phi`` instead, without an n x n matrix (:func:`~.kernels.feature_eigenpairs`).

    A warm start continues from a previous solution's warm state, its ``dual`` (each label's alpha,
    proportional to C, projected on this problem's box); the optimum does not depend on it.
    """

    sigma: float = attrs.field(default=1.0, validator=non_negative)
    eps: float = attrs.field(default=0.5, validator=open_unit)
    eps_edge: float = attrs.field(default=0.5, validator=open_unit)
    site_tradeoff: float = attrs.field(default=1.0, validator=positive)
    edge_tradeoff: float = attrs.field(default=1.0, validator=positive)
    n_components: int = attrs.field(default=100, validator=count)
    eig_rtol: float = attrs.field(default=1e-3, validator=open_unit)
    tol: float = attrs.field(default=1e-3, validator=positive)
    max_iter: int = attrs.field(default=100000, validator=count)
    intercept_scaling: float = attrs.field(default=1.0, validator=positive)
    random_state: object = attrs.field(default=0, validator=seed)
    n_jobs: int | None = n_jobs_field()

    requires: ClassVar[dict[str, tuple[str, ...]]] = {
        "loss": ("dual_box", "dual_diagonal"),
        "regularizer": ("label_gram",),
        "relation": ("graph",),
    }
    warm_state_names: ClassVar[dict[str, str]] = {"dual": "scaled: alpha / m (n, L), each label's dual, to start from"}
    model_state_names: ClassVar[dict[str, str]] = {
        "graph": "the ConceptGraph of the training labels",
        "basis": "the EigenBasis of the base kernel (eq. 17)",
        "kernels": "the LearnedKernels of (14)",
        "site_coef": "v_l (L, m), the site models in eigenfunction coordinates",
        "edge_coef": "the edge models (one row per edge, m)",
        "eps": "the inference weight eps",
        "sigma": "the inference weight sigma",
        "eps_edge": "the inference weight eps_edge",
    }
    fitted_attributes: ClassVar[dict[str, str]] = {
        "graph": "concept_graph_",
        "basis": "basis_",
        "kernels": "learned_kernels_",
        "site_coef": "site_coef_",
        "edge_coef": "edge_coef_",
        "dual": "dual_",
    }

    def check(self, problem: Problem) -> None:
        self._checked_terms(problem)

    def _checked_terms(self, problem: Problem) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`check`'s work and what it finds: m (the label_gram's diagonal) and each label's box bound U_l."""
        super().check(problem)
        name = type(self).__name__
        if problem.relation.learned:
            raise CapabilityError(
                f"{name} solves for the fixed graph of {type(problem.relation).__name__}.graph, but that relation "
                "is learned (its update would never run)"
            )
        scales = self._label_scales(problem)
        upper = np.empty(problem.n_labels)
        for label, cost in enumerate(problem.C * scales):
            low, high = (float(v) for v in problem.loss.dual_box(float(cost)))
            D = float(problem.loss.dual_diagonal(float(cost)))
            if not (low == 0.0 and high > 0.0 and np.isfinite(D) and D >= 0.0 and (np.isfinite(high) or D > 0.0)):
                raise CapabilityError(
                    f"{name} solves each local model's SVM dual over a box [0, U] (U > 0) with a diagonal D >= 0 "
                    f"(D > 0 when U = inf), but {type(problem.loss).__name__} gives dual_box({cost:g}) = "
                    f"({low!r}, {high!r}) and dual_diagonal({cost:g}) = {D!r}"
                )
            upper[label] = high
        return scales, upper

    def _label_scales(self, problem: Problem) -> np.ndarray:
        """m, the diagonal of ``label_gram(L)``: the local models of (5) decouple only for M = diag(m), m > 0."""
        return self.require_diagonal_label_gram(problem, "one local model (5) per label")

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> Fit:
        scales, upper = self._checked_terms(problem)
        start = time.perf_counter()
        Y = (np.asarray(problem.Y) > 0).astype(np.int8)
        alpha0 = self._alpha0(warm_start, Y.shape, scales, upper)
        rng = check_random_state(self.random_state)
        eigen_seed, cd_seed = (int(s) for s in rng.integers(0, 2**31 - 1, size=2))
        graph = problem.relation.graph(Y)
        basis = self._basis(problem, eigen_seed)
        kernels = learn_kernels(basis, Y, graph.edges, self.site_tradeoff, self.edge_tradeoff)
        if kernels.n_clipped:
            warnings.warn(
                f"ConceptNetwork: {kernels.n_clipped} of {kernels.n_edge_weights} pair-kernel weights zeta_ltk of "
                "(14) were negative and clipped at 0 so that every K_lt stays positive semi-definite",
                ClippingWarning,
                stacklevel=2,
            )
        local_start = time.perf_counter()
        site_coef, edge_coef, intercept, dual, local = self._local_models(
            problem, basis, kernels, graph, Y, cd_seed, scales, alpha0
        )
        certificate = _combined(local, scales, time.perf_counter() - start, time.perf_counter() - local_start)
        self._warn_unconverged(local, certificate)
        solution = Solution(
            coef=None,
            intercept=intercept,
            dual_coef=site_dual_coef(basis, site_coef, self.eps),
            dual=dual / scales,
            model_state={
                "graph": graph, "basis": basis, "kernels": kernels, "site_coef": site_coef, "edge_coef": edge_coef,
                "eps": self.eps, "sigma": self.sigma, "eps_edge": self.eps_edge,
            },
            warm_state=WarmState(type(self).__name__, scaled={"dual": dual / scales}),
        )  # fmt: skip
        return Fit(solution, certificate)

    def _basis(self, problem: Problem, eigen_seed: int):
        """The eigenbasis of the base kernel: from ``Phi^T Phi`` for a kernel of explicit features, else from K.

        A kernel with ``explicit_features`` (Nystroem, random Fourier features) gives the basis in
        O(n p^2) without the n x n matrix (:func:`~.kernels.feature_eigenpairs`); any other kernel's
        matrix on the training rows is eigendecomposed by Lanczos (:func:`~.kernels.top_eigenpairs`).
        """
        kernel = problem.kernel
        if getattr(kernel, "explicit_features", False) and not kernel.precomputed:
            return feature_eigenpairs(kernel.features(problem.X), self.n_components, eig_rtol=self.eig_rtol)
        K = problem.X if kernel.precomputed else kernel(problem.X)
        if hasattr(K, "toarray"):  # a kernel may return its Gram matrix sparse; the eigensolver wants it dense
            K = K.toarray()
        return top_eigenpairs(K, self.n_components, eig_rtol=self.eig_rtol, random_state=eigen_seed)

    @staticmethod
    def _alpha0(warm_start: Solution | None, shape, scales: np.ndarray, upper: np.ndarray) -> np.ndarray | None:
        """The engine's alpha (n, L) from a warm state's ``dual`` (alpha / m), projected on the box; None without one.

        Any point of the box is a valid start of coordinate descent; the projection only undoes a
        start from another C (the estimator rescales it) or another graph.
        """
        state = warm_state_of(warm_start)
        if state is None or state.get("dual") is None:
            return None
        dual = np.asarray(state.get("dual"), dtype=np.float64)
        if dual.shape != tuple(shape):
            raise ValueError(f"warm start dual has shape {dual.shape}, expected {tuple(shape)}")
        if not np.all(np.isfinite(dual)):
            raise ValueError("warm start dual contains NaN or infinity")
        return np.clip(dual * scales, 0.0, upper)

    def _local_models(self, problem, basis, kernels, graph, Y, seed, scales, alpha0):
        n, n_labels = Y.shape
        m = basis.n_components
        edges = graph.edges
        signs = 2.0 * Y - 1.0
        # The local model of l owns the contiguous rows of edges with edges[:, 0] == l (edges are sorted).
        first = np.searchsorted(edges[:, 0], np.arange(n_labels + 1)) if edges.size else np.zeros(n_labels + 1, int)
        seeds = check_random_state(seed).integers(0, 2**31 - 1, size=n_labels)
        costs = problem.C * scales

        def edge_rows(label: int) -> np.ndarray:
            rows = np.arange(first[label], first[label + 1])
            return rows[:0] if self.sigma == 0.0 else rows  # sigma = 0: the edge features are all zero

        def local_model(task):
            label, tol, budget, start = task
            rows = edge_rows(label)
            features = local_features(
                basis.vectors, kernels.omega[label], kernels.zeta[rows], edges[rows, 1], Y,
                eps=self.eps, sigma=self.sigma, eps_edge=self.eps_edge,
            )  # fmt: skip
            return linear_svm_cd(
                features, signs[:, [label]], C=costs[label], loss=problem.loss, fit_intercept=problem.fit_intercept,
                intercept_scaling=self.intercept_scaling, tol=tol, max_iter=budget, random_state=int(seeds[label]),
                alpha0=start, n_jobs=1,
            )  # fmt: skip

        local = [
            {"fit": None, "tol": float(self.tol), "epochs": 0, "tightenings": 0, "stopped": False}
            for _ in range(n_labels)
        ]
        tasks = [(label, self.tol, self.max_iter, None if alpha0 is None else alpha0[:, [label]])
                 for label in range(n_labels)]  # fmt: skip
        while tasks:
            # The labels' models share nothing but the read-only basis: n_jobs threads solve them (the
            # engine releases the GIL), each with its seed drawn above, so the result is the same for any
            # thread count.  One warning for all labels (in solve), not one per label from the engine:
            # the filter is set around the whole map (the warnings filters are process-wide).
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                fits = map_threads(local_model, tasks, self.n_jobs)
            for (label, tol, _, start), fit in zip(tasks, fits):
                state = local[label]
                state.update(
                    fit=fit, tol=float(tol), epochs=state["epochs"] + int(fit.certificate.n_iter),
                    stopped=bool(fit.certificate.statistics["converged"][0]),
                    tightenings=state["tightenings"] + (start is not None and state["fit"] is not None),
                )  # fmt: skip
            tasks = [
                (label, local[label]["tol"] / TIGHTEN_FACTOR, self.max_iter - local[label]["epochs"],
                 local[label]["fit"].solution.dual)
                for label in _to_tighten(local, scales, self.max_iter)
            ]  # fmt: skip

        site_coef, edge_coef = np.zeros((n_labels, m)), np.zeros((len(edges), m))
        intercept, dual = np.zeros(n_labels), np.zeros((n, n_labels))
        for label, state in enumerate(local):
            solution = state["fit"].solution
            theta = solution.coef[:, 0]
            site_coef[label] = theta[:m] * np.sqrt(kernels.omega[label])
            for j, row in enumerate(edge_rows(label)):
                edge_coef[row] = theta[m * (j + 1) : m * (j + 2)] * np.sqrt(kernels.zeta[row])
            intercept[label] = solution.intercept[0]
            dual[:, label] = solution.dual[:, 0]
        return site_coef, edge_coef, intercept, dual, local

    def _warn_unconverged(self, local: list[dict], certificate: Certificate) -> None:
        """One ConvergenceWarning for the whole solve, counting the labels by why they fell short."""
        if certificate.converged:
            return
        budget = [label for label, state in enumerate(local) if not state["stopped"]]
        gap = [label for label, state in enumerate(local) if state["stopped"] and not state["fit"].certificate.converged]
        reasons = []
        if budget:
            reasons.append(f"{len(budget)} spent max_iter={self.max_iter} epochs (labels {_listed(budget)})")
        if gap:
            smallest = min(local[label]["tol"] for label in gap)
            reasons.append(
                f"{len(gap)} stayed above a relative duality gap of GAP_RTOL={GAP_RTOL:g} at projected-gradient "
                f"bounds down to {smallest:g} (labels {_listed(gap)})"
            )
        if not reasons:
            reasons.append(
                f"the summed relative duality gap {certificate.relative_gap:.3g} stayed above GAP_RTOL={GAP_RTOL:g}"
            )
        warnings.warn(
            f"ConceptNetwork did not converge: of {len(local)} local models, {'; '.join(reasons)}; increase "
            "max_iter or lower C",
            ConvergenceWarning,
            stacklevel=3,
        )


def _listed(labels: list[int]) -> str:
    return f"{labels[:10]}{'...' if len(labels) > 10 else ''}"


def _to_tighten(local: list[dict], scales: np.ndarray, max_iter: int) -> list[int]:
    """The labels to solve on at a tighter bound: those that stopped on the projected-gradient rule with epochs
    left and a tighter bound to try, and either their own relative gap above GAP_RTOL or, when the summed gap
    is above it, their gap above an equal share of the summed target (then the shares add up to it)."""
    primal = np.array([state["fit"].certificate.primal for state in local]) / scales
    dual = np.array([state["fit"].certificate.dual for state in local]) / scales
    share = GAP_RTOL * max(1.0, abs(primal.sum())) / len(local)
    summed_ok = within_gap_rtol(primal.sum(), dual.sum())
    return [
        label
        for label, state in enumerate(local)
        if state["stopped"]
        and state["epochs"] < max_iter
        and state["tol"] / TIGHTEN_FACTOR >= SMALLEST_EPS
        and (not state["fit"].certificate.converged or (not summed_ok and primal[label] - dual[label] > share))
    ]


def _combined(local: list[dict], scales: np.ndarray, seconds: float, local_seconds: float) -> Certificate:
    """One certificate for the L local duals: primal and dual summed (label l's scaled by 1 / m_l), per-label
    values in statistics.

    ``converged`` when every local certificate is (the engine's rule and its own gap) and the summed
    relative gap is within GAP_RTOL.  ``time`` is the whole solve's (eigenpairs and kernel learning
    included); ``statistics["local_time"]`` the local duals' alone; ``n_epochs`` counts a label's epochs
    over all its tightenings, ``tol`` is the bound it ended at.
    """
    certificates = [state["fit"].certificate for state in local]
    primal = np.array([c.primal for c in certificates]) / scales
    dual = np.array([c.dual for c in certificates]) / scales
    local_ok = all(c.converged for c in certificates)
    return Certificate.from_objectives(
        primal.sum(),
        dual.sum(),
        kkt_violation=max(c.kkt_violation for c in certificates),
        n_iter=max(state["epochs"] for state in local),
        time=seconds,
        converged=bool(local_ok and within_gap_rtol(primal.sum(), dual.sum())),
        solver="ConceptNetworkSolver",
        statistics={
            "primal": primal.tolist(),
            "dual": dual.tolist(),
            "n_epochs": [int(state["epochs"]) for state in local],
            "converged": [bool(c.converged) for c in certificates],
            "relative_gap": [float(c.relative_gap) for c in certificates],
            "tol": [float(state["tol"]) for state in local],
            "n_tightenings": [int(state["tightenings"]) for state in local],
            "local_time": float(local_seconds),
        },
    )
