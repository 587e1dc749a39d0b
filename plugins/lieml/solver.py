"""LIEML's solver: label enhancement (FPC), then the regressor T2 by IRWLS, on the core's contract.

Tao, Xu & Geng, *Labeling Information Enhancement for Multi-label Learning with Low-Rank Subspace*,
Algorithm 1.  One :meth:`LIEMLSolver.solve` takes a :class:`~multilabel_core.base.Problem` (raw
rows X, the {0, 1} labels, the epsilon-insensitive loss, the RBF kernel, C = gamma1) and returns a
:class:`~multilabel_core.base.Fit`:

1. the numerical labels U = the relation's ``enhance(X, Y)`` (:class:`~.enhancement.LowRankEnhancement`;
   a relation without ``enhance``, e.g. ``independent``, leaves the logical labels -1/+1 as targets,
   which is the regressor "without LE" the reproduction compares against);
2. beta and m minimising T2 (eq. 8) for the targets U and the signs y, by
   :func:`multilabel_core.solvers.irwls_msvr` (kernel matrix of the rows, gamma1 = C, gamma2 and
   the tube of the loss); for a kernel of explicit features Phi, Theta = Phi^T beta and m by
   :func:`~.primal.irwls_msvr_features`, IRWLS in the primal (the same T2 and certificate for the
   kernel Phi Phi^T).

The Fit's certificate is the regressor's (T2 and its dual bound), converged only when the
enhancement's certificate is too; ``steps`` holds both (enhancement first).
"""

from __future__ import annotations

import warnings
from typing import ClassVar

import attrs
import numpy as np

from multilabel_core.base import CapabilityError, Fit, Problem, Solution, Solver, warm_state_of
from multilabel_core.solvers import ConvergenceWarning, irwls_msvr
from multilabel_core.validation import count, non_negative, positive

from .primal import irwls_msvr_features

__all__ = ["LIEMLSolver"]


@attrs.frozen
class LIEMLSolver(Solver):
    """Label enhancement then IRWLS for LIEML's regressor T2 (Tao, Xu & Geng, Algorithm 1).

    Parameters
    ----------
    gamma2 : float >= 0, default 0.1
        Weight of the sign-consistency term Omega2 (eq. 10); 0 gives MSVR on the enhanced labels.
    tol : float, default 1e-5
        IRWLS stops when T2 decreases by less than tol in an iteration (the paper's rule).
    max_iter : int, default 500
        IRWLS iterations.
    jitter : float, default 1e-8
        Added to the bias equation when every residual is inside the tube (counted).

    Notes
    -----
    What it asks of the parts: the loss's ``epsilon`` and ``irwls_weights`` (the
    epsilon-insensitive loss), a regulariser whose ``label_gram`` is the identity
    (1/2 sum_j ||theta_j||^2), the kernel on the raw rows, and the relation's ``enhance`` when it
    has one.  A kernel of explicit features (``explicit_features``: ``"nystroem"``, ``"rff"``) is
    solved in the primal over its p features (:func:`~.primal.irwls_msvr_features`, a (p + 1)-square
    system per IRWLS step); any other kernel's matrix by :func:`~multilabel_core.solvers.irwls_msvr`
    (an (n + 1)-square system per step).

    References
    ----------
    Tao, Xu & Geng, "Labeling Information Enhancement for Multi-label Learning with Low-Rank
    Subspace": Algorithm 1, the regressor T2 (eq. 8) and its sign-consistency term Omega2
    (eq. 10).
    """

    gamma2: float = attrs.field(default=0.1, validator=non_negative)
    tol: float = attrs.field(default=1e-5, validator=positive)
    max_iter: int = attrs.field(default=500, validator=count)
    jitter: float = attrs.field(default=1e-8, validator=positive)

    requires: ClassVar[dict[str, tuple[str, ...]]] = {
        "loss": ("epsilon", "irwls_weights"),
        "regularizer": ("label_gram",),
    }
    consumes: ClassVar[dict[str, tuple[str, ...]]] = {"relation": ("enhance",)}
    warm_state_names: ClassVar[dict[str, str]] = {
        "dual_coef": "scaled: beta (n, L), the kernel expansion's coefficients, to start IRWLS from",
        "intercept": "fixed: the bias m (L,) to start from",
    }
    model_state_names: ClassVar[dict[str, str]] = {
        "enhancement": "the LabelEnhancement record (only with a relation that enhances)",
        "enhanced_labels": "the enhanced labels U (n, L) the regressor fitted (only with an enhancement)",
        "rank": "the rank of the enhancement's Z (only with an enhancement)",
        "targets": "the real targets the regressor fitted (the enhanced labels, else the signs)",
        "feature_coef": "Theta (p, L), the weights on a kernel's explicit features (only with such a kernel)",
    }
    fitted_attributes: ClassVar[dict[str, str]] = {
        "enhancement": "enhancement_",
        "enhanced_labels": "enhanced_labels_",
        "rank": "rank_",
        "feature_coef": "feature_coef_",
    }

    def check(self, problem: Problem) -> None:
        super().check(problem)
        self.require_identity_label_gram(problem, "T2 under 1/2 sum_j ||theta_j||^2")
        if hasattr(problem.relation, "enhance") and problem.kernel.precomputed:
            raise CapabilityError(
                f"{type(self).__name__} enhances the labels from the raw rows X; a precomputed kernel hides them"
            )

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> Fit:
        self.check(problem)
        Y = np.asarray(problem.Y, dtype=np.float64)
        signs = Y if (Y == -1.0).any() else 2.0 * Y - 1.0
        enhancement = None
        if hasattr(problem.relation, "enhance"):
            enhancement = problem.relation.enhance(problem.X, signs, warn=False)
            targets = enhancement.labels
        else:
            targets = signs
        state = warm_state_of(warm_start)
        start = warm_start if state is not None and np.shape(state.get("dual_coef")) == Y.shape else None
        settings = dict(
            gamma1=problem.C, gamma2=self.gamma2, epsilon=float(problem.loss.epsilon), tol=self.tol,
            max_iter=self.max_iter, jitter=self.jitter, start=start, warn=False,
        )  # fmt: skip
        kernel = problem.kernel
        if getattr(kernel, "explicit_features", False) and not kernel.precomputed:
            # The primal route: an (p + 1)-square system per IRWLS step on the p features, no n x n matrix.
            fit = irwls_msvr_features(kernel.features(problem.X), targets, signs, **settings)
        else:
            K = problem.X if kernel.precomputed else kernel(problem.X)
            fit = irwls_msvr(K, targets, signs, **settings)
        le_ok = enhancement is None or enhancement.certificate.converged
        if not (fit.certificate.converged and le_ok):
            parts = []
            if not le_ok:
                c = enhancement.certificate
                parts.append(f"label enhancement stopped at relative gap {c.relative_gap:.3g} after {c.n_iter} shrinkage steps")
            if not fit.certificate.converged:
                c = fit.certificate
                parts.append(f"IRWLS stopped at relative gap {c.relative_gap:.3g} after {c.n_iter} iterations")
            warnings.warn(
                "LIEML did not converge: " + "; ".join(parts) + " (raise max_iter / fpc_max_iter)",
                ConvergenceWarning,
                stacklevel=2,
            )
        certificate = attrs.evolve(
            fit.certificate,
            converged=bool(fit.certificate.converged and le_ok),
            solver="LIEMLSolver",
            statistics=fit.certificate.statistics
            | (
                {}
                if enhancement is None
                else {
                    "enhancement_relative_gap": float(enhancement.certificate.relative_gap),
                    "enhancement_converged": bool(enhancement.certificate.converged),
                    "enhancement_steps": int(enhancement.certificate.n_iter),
                    "enhancement_time": float(enhancement.certificate.time),
                    "enhancement_rank": int(enhancement.rank),
                }
            ),
        )
        solution = Solution(
            coef=None,
            intercept=fit.solution.intercept,
            dual_coef=fit.solution.dual_coef,
            model_state={"targets": targets} | dict(fit.solution.model_state) | (
                {} if enhancement is None
                else {"enhancement": enhancement, "enhanced_labels": enhancement.labels, "rank": enhancement.rank}
            ),  # fmt: skip
            warm_state=attrs.evolve(fit.solution.warm_state, owner=type(self).__name__),
        )
        steps = (fit.certificate,) if enhancement is None else (enhancement.certificate, fit.certificate)
        return Fit(solution, certificate, steps=steps, history={"objective": list(fit.history["objective"])})
