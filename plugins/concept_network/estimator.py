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
import warnings

import numpy as np

from multilabel_core.estimator import ComposedEstimator
from multilabel_core.kernels import make_kernel
from multilabel_core.parameter_names import DEPRECATED, renamed_parameter
from multilabel_core.parallel import blas_limited
from multilabel_core.plugins import make_component
from multilabel_core.validation import (
    COUNT,
    MAX_ITER_LIMIT,
    NON_NEGATIVE,
    POSITIVE,
    Interval,
    Options,
    Rule,
    Unchecked,
    check_scalar,
    check_X,
)

from .graph import MAX_STATISTIC
from .inference import INFERENCE, InferenceResult, infer

__all__ = ["ConceptNetwork", "InferenceWarning", "concept_inference"]


class InferenceWarning(UserWarning):
    """Inference stopped for some rows without a fixed point: a cycle (ICM) or the sweep cap."""


#: The parts the method composes (also its MethodSpec's ``parts``): per-label SVMs (5)-(7) with the hinge, the
#: Frobenius norm of theta, the concept network as the label relation, the RBF base kernel, and the solver.
PARTS = {
    "loss": "hinge",
    "regularizer": "frobenius",
    "relation": "concept_network",
    "kernel": "rbf",
    "solver": "concept_network_cd",
}


def _edge_threshold(value, name):
    check_scalar(value, name, low=0.0)
    if value >= MAX_STATISTIC:
        raise ValueError(
            f"{name} (P0) = {value!r} admits no edge: the statistic p(t|l) p(l|t) / (p(t|l) + p(l|t)) is half a "
            f"harmonic mean of probabilities, at most {MAX_STATISTIC}, so P0 must be below {MAX_STATISTIC}"
        )


_EDGE_THRESHOLD = Rule(_edge_threshold, "P0 in [0, 1/2): a larger one admits no edge")
_OPEN_UNIT = Interval(numbers.Real, 0.0, 1.0, low_inclusive=False, high_inclusive=False)


class ConceptNetwork(ComposedEstimator):
    """Multi-kernel multi-label learning with a max-margin concept network (registered as ``concept_network``).

    A preset over :data:`PARTS`: the relation :class:`~.graph.ConceptNetworkRelation` (P0) and the solver
    :class:`~.solver.ConceptNetworkSolver` are built from the parameters below; fitting is the composed
    estimator's, prediction is inference (:mod:`.inference`).

    The paper "tunes" the parameters and gives no values; each default's reason is in
    docs/methods/concept-network.md.

    Parameters
    ----------
    C : float, default 1.0
        lambda of (5), the weight of the slacks (the dual box is [0, C]).
    sigma : float >= 0, default 1.0
        Weight of the edge potentials (eq. 1); 0 gives independent SVMs on the K_l.
    eps, eps_edge : float in (0, 1), default 0.5
        eps and eps' of pi and pi' (the weights of a negative label and of a disagreeing pair).
    edge_threshold : float in [0, 1/2), default 0.05
        P0 of the concept network: an edge joins labels l and t when
        p(t|l) p(l|t) / (p(t|l) + p(l|t)) > P0.
    site_tradeoff, edge_tradeoff : float > 0, default 1.0
        gamma_l and Upsilon_lt of (11) and (13) in relative units: the label term changes the
        truncated base kernel's trace by 1 / (2 tradeoff) of it (:mod:`.kernels`).
    kernel : str or Kernel, default "rbf"
        The base kernel, a registered name or a Kernel object.  The default RBF kernel's matrix on
        the training rows is eigendecomposed by Lanczos (O(n^2 m) time, an n x n matrix held).  A
        kernel of explicit features, ``"nystroem"`` (landmarks of the RBF kernel) or ``"rff"``
        (random Fourier features), or a :class:`~multilabel_core.kernel_approximation.NystroemKernel`
        object for another number of landmarks, replaces the base kernel by ``Phi Phi^T`` and takes the
        eigenbasis from the p x p matrix ``Phi^T Phi`` (O(n p^2), no n x n matrix; :mod:`.kernels`).
    gamma : float > 0 or None, default None
        The base kernel's gamma (RBF, and the RBF kernel a Nystroem or Fourier approximation
        approximates); None: width = mean pairwise distance (the core's convention).
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
        epochs (their time: benchmarks/RESULTS.md, "Timings behind code comments").
    random_state : None, int or Generator, default 0
        Seeds the eigensolver's start and the coordinate-descent permutations.
    n_jobs : int or None, default None
        Threads the L local models are solved on (BLAS held to one thread): None is the thread
        budget the caller leaves (every core in a plain fit, ``cores // workers`` inside the
        experiment runner or ``cross_validate``), -1 every core.  The model does not depend on it.
    thresholding : str or Threshold, default "zero"
        ``"zero"``: ``predict`` gives the labels found by inference (``inference``); any other
        registered threshold (or a Threshold object) cuts the inferred scores instead.
    threshold : float, default "deprecated"
        Deprecated name of ``edge_threshold`` (``threshold`` names the ranking family's set-size
        threshold regressors); accepted with a FutureWarning for this release.

    Notes
    -----
    Fitted attributes:

    concept_graph_ : ConceptGraph (``adjacency``, ``statistic``, ``threshold``, ``edges``).
    basis_ : EigenBasis of the base kernel (``values`` eta, ``vectors`` U, ``time``).
    learned_kernels_ : LearnedKernels (``omega`` (L, m), ``zeta`` (E, m), ``site_gamma``,
        ``edge_upsilon``, ``n_clipped``).
    site_coef_ : (L, m), edge_coef_ : (E, m) -- the models in the eigenfunction coordinates:
        ``v_l^T phi_l(x) = phi(x) . site_coef_[l]`` and ``w_lt^T phi_lt(x) = phi(x) . edge_coef_[e]``.
    dual_ : (n, L) the alpha of (8); certificate_ : the summed certificate of the L local duals
        (per-label values in ``statistics``); kernel_ : the resolved base kernel; X_fit_;
        and the composed estimator's ``parts_``, ``solution_`` and ``dual_coef_`` -- the site scores
        as an expansion in the base kernel, ``kernel_(x, X_fit_) @ dual_coef_ = (1 + eps) site_scores(x)``
        (what a :class:`~multilabel_core.ComposedEstimator` of the same parts predicts with).

    The same model composes by name: ``ComposedEstimator(loss="hinge", regularizer="frobenius",
    relation="concept_network", kernel="rbf", solver="concept_network_cd", relation_params={"threshold": P0},
    solver_params={"sigma": ..., "eps": ..., ...}, C=C, fit_intercept=False)``; its decision values are the
    site scores and its ``predict`` their sign, while this preset infers the labels jointly (ICM);
    :func:`concept_inference` runs that inference on the composition too.  Any loss with an SVM dual (the
    squared hinge) and any kernel compose the same way (docs/methods/concept-network.md, "As a composition").
    """

    PARTS = PARTS
    #: The local models have no bias (eq. 5-7); not a parameter.
    fit_intercept = False

    _parameter_constraints = {
        "sigma": NON_NEGATIVE,
        "eps": _OPEN_UNIT,
        "eps_edge": _OPEN_UNIT,
        "edge_threshold": _EDGE_THRESHOLD,
        "threshold": Unchecked("the deprecated spelling of edge_threshold, checked as it by _check_parameter_rules"),
        "site_tradeoff": POSITIVE,
        "edge_tradeoff": POSITIVE,
        "n_components": COUNT,
        "eig_rtol": _OPEN_UNIT,
        "inference": Options(INFERENCE),
        "max_sweeps": COUNT,
        # The solver's settings are required (None is not its default here).
        "tol": POSITIVE,
        "max_iter": COUNT,
    }

    def __init__(
        self,
        C=1.0,
        sigma=1.0,
        eps=0.5,
        eps_edge=0.5,
        edge_threshold=0.05,
        site_tradeoff=1.0,
        edge_tradeoff=1.0,
        kernel="rbf",
        gamma=None,
        n_components=100,
        eig_rtol=1e-3,
        inference="icm",
        max_sweeps=100,
        tol=1e-3,
        max_iter=100000,
        random_state=0,
        n_jobs=None,
        thresholding="zero",
        threshold=DEPRECATED,
    ):
        self.C = C
        self.sigma = sigma
        self.eps = eps
        self.eps_edge = eps_edge
        self.edge_threshold = edge_threshold
        self.threshold = threshold
        self.site_tradeoff = site_tradeoff
        self.edge_tradeoff = edge_tradeoff
        self.kernel = kernel
        self.gamma = gamma
        self.n_components = n_components
        self.eig_rtol = eig_rtol
        self.inference = inference
        self.max_sweeps = max_sweeps
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.thresholding = thresholding

    # -- the parts ----------------------------------------------------------------------

    def _check_parameter_rules(self) -> None:
        # The deprecated spelling is checked as what it stands for (the FutureWarning, once per fit).
        _EDGE_THRESHOLD.check(renamed_parameter(self, "threshold", "edge_threshold"), "threshold")

    def _parts(self) -> dict:
        settings = {
            "relation": {"threshold": renamed_parameter(self, "threshold", "edge_threshold", warn=False)},
            "solver": {
                name: getattr(self, name)
                for name in ("sigma", "eps", "eps_edge", "site_tradeoff", "edge_tradeoff", "n_components", "eig_rtol",
                             "tol", "max_iter", "random_state", "n_jobs")
            },  # fmt: skip
        }
        parts = {
            role: make_component(role, name, **settings.get(role, {}))
            for role, name in self.PARTS.items()
            if role != "kernel"
        }
        return parts | {"kernel": make_kernel(self.kernel, self.gamma)}

    def _kernel_data(self, X, kernel):
        # A kernel of explicit features reaches the solver as itself: its eigenbasis comes from Phi^T Phi,
        # and the composed estimator's default would hand over the n x n matrix Phi Phi^T instead.
        if getattr(kernel, "explicit_features", False):
            return X, kernel
        return super()._kernel_data(X, kernel)

    def _fit(self, X, Y, **data):
        # BLAS held to one thread for the fit (threadpoolctl; the caller's setting is restored
        # after it): the solve is many small products between Cython loops, which OpenBLAS's
        # threads slow down many times over on few cores (measured: benchmarks/RESULTS.md, "Timings behind code comments").
        with blas_limited(1):
            super()._fit(X, Y, **data)

    # -- prediction ---------------------------------------------------------------------

    def eigenfunctions(self, X) -> np.ndarray:
        """Compute the Nystrom eigenfunctions phi(x) (eq. 17) of the base kernel at the rows X.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            The rows.

        Returns
        -------
        ndarray of shape (n, m)
            phi_k(x) for each of the basis's m eigenpairs; at the training rows, the
            eigenvectors U up to round-off.
        """
        return self._eigenfunctions(self._validate_test_X(X))

    def site_scores(self, X) -> np.ndarray:
        """Compute the site potentials ``g_l = v_l^T phi_l(x)`` (the start of ICM).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            The rows.

        Returns
        -------
        ndarray of shape (n, L)
            g, each label's site score, without the edge terms.
        """
        return self.eigenfunctions(X) @ self.site_coef_.T

    def infer(self, X) -> InferenceResult:
        """Run inference on the rows X.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            The rows.

        Returns
        -------
        InferenceResult
            The labels, the per-label scores and the per-row counts (sweeps, cycles, rows at
            the cap) of the estimator's ``inference`` procedure.
        """
        return self._infer(self._validate_test_X(X))

    # The methods below take rows already validated (predict and decision_function validate them once).

    def _eigenfunctions(self, X) -> np.ndarray:
        return _eigenfunctions(self.basis_, self.kernel_, X, self.X_fit_)

    def _infer(self, X) -> InferenceResult:
        return _inference(self.solution_, self.intercept_, self._eigenfunctions(X), self.inference, self.max_sweeps)

    def _inferred(self, X) -> InferenceResult:
        result = self._infer(X)
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
        """Predict the labels found by inference.

        At a fixed point they equal ``decision_function(X) > 0``; rows that cycled or hit the
        sweep cap (counted in an :class:`InferenceWarning`) keep their last labelling.  With a
        ``thresholding`` other than ``zero``, that threshold cuts the inferred scores instead.
        A label constant on the training rows takes no part in the inference (the network is
        over the learned labels) and is predicted at its training value.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            The rows.

        Returns
        -------
        ndarray of shape (n, L), int64
            The {0, 1} labels.

        Warns
        -----
        InferenceWarning
            When rows cycled or hit ``max_sweeps``, with their numbers.
        """
        if self._applies_threshold() or not self._learned_some_label():
            return super().predict(X)
        X = self._validate_test_X(X)
        return self._with_constant_labels(self._inferred(X).labels, X.shape[0], "labels")


def _eigenfunctions(basis, kernel, X, X_fit) -> np.ndarray:
    """phi(X) of eq. 17: from the explicit features of X when the basis was computed from them, else from K(X, X_fit)."""
    if basis.feature_map is not None and getattr(kernel, "explicit_features", False):
        return basis.extend_features(kernel.features(X))
    return basis.extend(kernel(X, X_fit))


def _inference(solution, intercept, phi, method: str, max_sweeps: int) -> InferenceResult:
    """Inference on rows with eigenfunctions ``phi``, from a solution of :class:`~.solver.ConceptNetworkSolver`.

    A local model's bias b_l (a problem with ``fit_intercept``) adds to its gain at y_l = 1 against
    y_l = 0, as ``(1 + eps) g_l`` does: it enters as ``g_l + b_l / (1 + eps)``.
    """
    model = solution.model_state
    eps = model["eps"]
    G = phi @ model["site_coef"].T + np.asarray(intercept) / (1.0 + eps)
    return infer(
        G, phi @ model["edge_coef"].T, model["graph"].edges,
        eps=eps, sigma=model["sigma"], eps_edge=model["eps_edge"], method=method, max_sweeps=max_sweeps,
    )  # fmt: skip


def concept_inference(estimator, X, *, method: str = "icm", max_sweeps: int = 100) -> InferenceResult:
    """The concept network's joint inference on rows X for any estimator its solver fitted.

    A :class:`~multilabel_core.ComposedEstimator` composed with ``solver="concept_network_cd"`` (or
    ``"auto"`` choosing it) predicts the sign of its decision values, the local models' site scores
    ``(1 + eps) v_l^T phi_l(x) + b_l`` -- the labelling ICM starts from.  This runs the inference of
    Zhang et al. (section 4; :mod:`.inference`) on its fitted model, as :class:`ConceptNetwork`'s
    ``predict`` does, so the composition reaches the paper's predictions too.

    Parameters
    ----------
    estimator : a fitted ComposedEstimator (or ConceptNetwork) whose solver was ConceptNetworkSolver.
    X : array or sparse matrix (n, d) -- rows as given to ``predict`` (the kernel's rows for a precomputed kernel).
    method : {"icm", "global"}, default "icm"
    max_sweeps : int >= 1, default 100

    Returns
    -------
    InferenceResult
        ``labels`` (the joint labelling), ``scores`` (the gains at it) and the per-row counts.

    Raises
    ------
    ValueError
        When the estimator was not fitted by :class:`~.solver.ConceptNetworkSolver` (the
        message names its solver), for X of the wrong width, or for a bad ``method`` / ``max_sweeps``.
    """
    if method not in INFERENCE:
        raise ValueError(f"method must be one of {INFERENCE}, got {method!r}")
    check_scalar(max_sweeps, "max_sweeps", kind=numbers.Integral, low=1, high=MAX_ITER_LIMIT)
    solution = getattr(estimator, "solution_", None)
    model = getattr(solution, "model_state", {}) or {}
    if not all(key in model for key in ("graph", "basis", "site_coef", "edge_coef", "eps", "sigma", "eps_edge")):
        solver = type(getattr(estimator, "parts_", {}).get("solver", None)).__name__
        raise ValueError(
            f"concept_inference needs an estimator fitted by ConceptNetworkSolver; {type(estimator).__name__} "
            + ("is not fitted" if solution is None else f"was fitted by {solver}")
        )
    X = check_X(X)
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} columns, but the estimator was fitted on {estimator.n_features_in_}")
    phi = _eigenfunctions(model["basis"], estimator.kernel_, X, estimator.X_fit_)
    return _inference(solution, estimator.intercept_, phi, method, max_sweeps)
