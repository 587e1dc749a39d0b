"""The concept network's solver: kernel learning on the eigenbasis, then the L local duals (8) by dual CD.

Zhang et al., *Multi-Kernel Multi-Label Learning with Max-Margin Concept Network*, sections 2-3.  One
:meth:`ConceptNetworkSolver.solve` on the core's contract (a :class:`~multilabel_core.base.Problem` in, a
:class:`~multilabel_core.base.Fit` out):

1. the concept network of the training labels (the problem's relation, :class:`~.graph.ConceptNetworkRelation`);
2. the top-m eigenpairs of the base kernel matrix (the problem's kernel on its rows, or the precomputed
   matrix the estimator hands over) and the closed forms of (12) and (14) (:mod:`.kernels`);
3. for each label l, the bias-free linear SVM on the explicit features
   ``[(1 + eps) phi_l(x^i); sigma a_t^i phi_lt(x^i), t in N_l]`` with signs s_i = 2 y_l^i - 1, solved by
   :func:`multilabel_core.solvers.linear_svm_cd` with the problem's loss (the hinge: the dual (8), box
   [0, lambda]) -- see :mod:`.estimator` for the derivation of these features from eq. 4 and 9.

The certificate sums the L local certificates (per-label values in ``statistics``); it is converged when
every local dual met the engine's rule and its relative duality gap is within GAP_RTOL.  The solution
holds ``dual`` (alpha, (n, L)), ``dual_coef`` (alpha times the signs) and, in ``extras``, the graph, the
eigenbasis, the learned kernels and the models in eigenfunction coordinates (``site_coef``, ``edge_coef``).
"""

from __future__ import annotations

import time
import warnings
from typing import ClassVar

import attrs
import numpy as np

from multilabel_core.base import Fit, Problem, Solution, Solver
from multilabel_core.certificate import Certificate
from multilabel_core.parallel import map_threads, n_jobs_field
from multilabel_core.solvers import ConvergenceWarning, linear_svm_cd
from multilabel_core.validation import check_random_state, count, non_negative, open_unit, positive, seed

from .kernels import learn_kernels, top_eigenpairs

__all__ = ["ClippingWarning", "ConceptNetworkSolver", "local_features"]


class ClippingWarning(UserWarning):
    """Negative pair-kernel weights zeta_ltk of (14) were set to 0 (the warning counts them)."""


def local_features(basis_vectors, omega_l, zetas, neighbour_labels, Y, *, eps, sigma, eps_edge) -> np.ndarray:
    """The rows ``[(1 + eps) phi_l(x^i) ; sigma a_t^i phi_lt(x^i) for t in N_l]`` (n, m (1 + |N_l|)).

    ``basis_vectors`` is U (n, m) at the training rows, ``omega_l`` (m,), ``zetas`` (|N_l|, m) in the
    order of ``neighbour_labels``; Y the {0, 1} labels that give a_t^i = 1 + eps' if y_t^i = 1 else
    -eps'.  Delta Psi_l^i of eq. 9 is s_i times row i.
    """
    blocks = [(1.0 + eps) * basis_vectors * np.sqrt(omega_l)]
    for zeta, t in zip(zetas, neighbour_labels):
        a = np.where(np.asarray(Y)[:, t] > 0, 1.0 + eps_edge, -eps_edge)
        blocks.append(sigma * a[:, None] * basis_vectors * np.sqrt(zeta))
    return np.hstack(blocks)


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
        The CD engine's projected-gradient bound per local dual.
    max_iter : int, default 100000
        Epochs per local dual.
    random_state : None, int or Generator, default 0
        Seeds the eigensolver's start and the CD permutations.
    n_jobs : int or None, default None
        Threads the local models are solved on (:mod:`multilabel_core.parallel`; None: the
        budget the caller leaves).  The result does not depend on it.

    What it asks of the parts: the loss's ``dual_box`` and ``dual_diagonal`` (an SVM-dual loss, as
    :func:`~multilabel_core.solvers.linear_svm_cd` needs), the relation's ``graph(Y)``, and a regulariser
    whose ``label_gram(L)`` is the identity (the Frobenius norm of theta, as in (2) and (5)).
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
    random_state: object = attrs.field(default=0, validator=seed)
    n_jobs: int | None = n_jobs_field()

    requires: ClassVar[dict[str, tuple[str, ...]]] = {
        "loss": ("dual_box", "dual_diagonal"),
        "regularizer": ("label_gram",),
        "relation": ("graph",),
    }

    def check(self, problem: Problem) -> None:
        super().check(problem)
        self.require_identity_label_gram(problem, "the local models of (5) under 1/2 ||theta||^2")

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> Fit:
        self.check(problem)
        start = time.perf_counter()
        Y = (np.asarray(problem.Y) > 0).astype(np.int8)
        rng = check_random_state(self.random_state)
        eigen_seed, cd_seed = (int(s) for s in rng.integers(0, 2**31 - 1, size=2))
        graph = problem.relation.graph(Y)
        K = problem.X if problem.kernel.precomputed else problem.kernel(problem.X)
        basis = top_eigenpairs(K, self.n_components, eig_rtol=self.eig_rtol, random_state=eigen_seed)
        kernels = learn_kernels(basis, Y, graph.edges, self.site_tradeoff, self.edge_tradeoff)
        if kernels.n_clipped:
            warnings.warn(
                f"ConceptNetwork: {kernels.n_clipped} of {kernels.n_edge_weights} pair-kernel weights zeta_ltk of "
                "(14) were negative and clipped at 0 so that every K_lt stays positive semi-definite",
                ClippingWarning,
                stacklevel=2,
            )
        local_start = time.perf_counter()
        site_coef, edge_coef, dual, certificates = self._local_models(problem, basis, kernels, graph, Y, cd_seed)
        certificate = _combined(certificates, time.perf_counter() - start, time.perf_counter() - local_start)
        unconverged = [label for label, c in enumerate(certificates) if not c.converged]
        if unconverged:
            warnings.warn(
                f"ConceptNetwork did not converge: {len(unconverged)} of {len(certificates)} local models (labels "
                f"{unconverged[:10]}{'...' if len(unconverged) > 10 else ''}) stopped at max_iter={self.max_iter} "
                "epochs or above a relative duality gap of 1e-3; increase max_iter or lower C",
                ConvergenceWarning,
                stacklevel=2,
            )
        signs = 2.0 * Y - 1.0
        solution = Solution(
            coef=None,
            intercept=np.zeros(Y.shape[1]),
            dual_coef=dual * signs,
            dual=dual,
            extras={"graph": graph, "basis": basis, "kernels": kernels, "site_coef": site_coef, "edge_coef": edge_coef},
        )
        return Fit(solution, certificate)

    def _local_models(self, problem, basis, kernels, graph, Y, seed):
        n, n_labels = Y.shape
        m = basis.n_components
        edges = graph.edges
        # The local model of l owns the contiguous rows of edges with edges[:, 0] == l (edges are sorted).
        first = np.searchsorted(edges[:, 0], np.arange(n_labels + 1)) if edges.size else np.zeros(n_labels + 1, int)
        site_coef, edge_coef = np.zeros((n_labels, m)), np.zeros((len(edges), m))
        dual = np.zeros((n, n_labels))
        seeds = check_random_state(seed).integers(0, 2**31 - 1, size=n_labels)

        def local_model(label: int):
            rows = np.arange(first[label], first[label + 1])
            if self.sigma == 0.0:
                rows = rows[:0]  # the edge features are all zero: no edge weight to learn
            features = local_features(
                basis.vectors, kernels.omega[label], kernels.zeta[rows], edges[rows, 1], Y,
                eps=self.eps, sigma=self.sigma, eps_edge=self.eps_edge,
            )  # fmt: skip
            fit = linear_svm_cd(
                features, 2.0 * Y[:, [label]] - 1.0, C=problem.C, loss=problem.loss, fit_intercept=False,
                tol=self.tol, max_iter=self.max_iter, random_state=int(seeds[label]), n_jobs=1,
            )  # fmt: skip
            return rows, fit

        # The labels' models share nothing but the read-only basis: n_jobs threads solve them (the
        # engine releases the GIL), each with its seed drawn above, so the result is the same for any
        # thread count.  One warning for all labels (in solve), not one per label from the engine:
        # the filter is set around the whole map (the warnings filters are process-wide).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits = map_threads(local_model, range(n_labels), self.n_jobs)
        certificates = []
        for label, (rows, fit) in enumerate(fits):
            theta = fit.solution.coef[:, 0]
            site_coef[label] = theta[:m] * np.sqrt(kernels.omega[label])
            for j, row in enumerate(rows):
                edge_coef[row] = theta[m * (j + 1) : m * (j + 2)] * np.sqrt(kernels.zeta[row])
            dual[:, label] = fit.solution.dual[:, 0]
            certificates.append(fit.certificate)
        return site_coef, edge_coef, dual, certificates


def _combined(certificates: list[Certificate], seconds: float, local_seconds: float) -> Certificate:
    """One certificate for the L local duals: primal and dual summed, per-label values in statistics.

    ``time`` is the whole solve's (eigenpairs and kernel learning included); ``statistics["local_time"]``
    the local duals' alone.
    """
    primal = np.array([c.primal for c in certificates])
    dual = np.array([c.dual for c in certificates])
    return Certificate.from_objectives(
        primal.sum(),
        dual.sum(),
        kkt_violation=max(c.kkt_violation for c in certificates),
        n_iter=max(c.n_iter for c in certificates),
        time=seconds,
        converged=all(c.converged for c in certificates),
        solver="ConceptNetworkSolver",
        statistics={
            "primal": primal.tolist(),
            "dual": dual.tolist(),
            "n_epochs": [int(c.n_iter) for c in certificates],
            "converged": [bool(c.converged) for c in certificates],
            "relative_gap": [float(c.relative_gap) for c in certificates],
            "local_time": float(local_seconds),
        },
    )
