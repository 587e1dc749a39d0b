"""The :class:`Solver` interface and the :class:`Problem` it solves."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Mapping

import attrs
import numpy as np

from ..certificate import Certificate
from ..exceptions import CapabilityError
from .kernel import Kernel
from .loss import Loss
from .regularizer import Regularizer
from .relation import LabelRelation


def unread_message(solver, role: str, part, names: tuple[str, ...]) -> str:
    """The refusal of a part ``solver`` would ignore (:func:`unread_state`'s ``(role, part, names)``)."""
    solver_name = type(solver).__name__
    if role == "relation" and names[0] == "update" and getattr(part, "learned", False):
        return (
            f"{solver_name} solves for a fixed label relation, but {type(part).__name__} is learned and "
            f"{solver_name} never runs its update: compose it with an alternating solver (solver='alternating', "
            "or solver='auto')"
        )
    return (
        f"{solver_name} would ignore the {role} {type(part).__name__}: it does not read "
        f"{', '.join(f'{role}.{name}' for name in names)}, through which that {role} shapes the model; "
        f"choose a solver that reads it (solver='auto' finds one) or drop the {role}"
    )


def unread_state(solver, problem) -> list[tuple[str, object, tuple[str, ...]]]:
    """The parts of ``problem`` whose ``state`` ``solver`` would not read: ``(role, part, names)`` each.

    A name is read when the solver lists it for that role in ``requires`` or ``consumes``.
    What :meth:`Solver.check` refuses, and what a composing estimator asks before it hands a
    problem to a solver whose own ``check`` it cannot vouch for.
    """
    requires = getattr(solver, "requires", {}) or {}
    consumes = getattr(solver, "consumes", {}) or {}
    unread = []
    for role in PART_ROLES:
        part = getattr(problem, role)
        read = set(requires.get(role, ())) | set(consumes.get(role, ()))
        state = tuple(getattr(part, "state", ()))
        if role == "relation" and getattr(part, "learned", False):
            # A learned relation shapes the model through its update step: a solver that never
            # runs it solves for the initial relation and would pass that off as the learned one.
            state = ("update",) + state
        missing = tuple(name for name in state if name not in read)
        if missing:
            unread.append((role, part, missing))
    return unread


@attrs.frozen(eq=False)
class Problem:
    """A training problem built from the parts.

    The primal every solver works on is::

        min_{W, b}  regularizer(W) + C * loss(Y, K W + 1 b^T)      (linear kernel: X W)

    Attributes
    ----------
    X : ndarray or sparse matrix (n, d) -- training rows (or a precomputed kernel).
    Y : ndarray (n, L) -- targets in the loss's convention ({-1, +1} for sign losses).
    loss, regularizer, relation, kernel : the parts.
    C : float -- weight of the loss against the regulariser (C = 1 / lambda).
    fit_intercept : bool -- whether the scores carry a per-label bias b.
    """

    X: Any
    Y: np.ndarray
    loss: Loss
    regularizer: Regularizer
    relation: LabelRelation
    kernel: Kernel
    C: float = 1.0
    fit_intercept: bool = True

    @property
    def n_samples(self) -> int:
        """Number of training examples n (rows of ``Y``)."""
        return self.Y.shape[0]

    @property
    def n_labels(self) -> int:
        """Number of labels L (columns of ``Y``)."""
        return self.Y.shape[1]


@attrs.frozen(eq=False)
class Solution:
    """The point a solver returns.

    ``coef`` is the (d, L) primal W for feature solvers, or None for kernel solvers,
    which return dual coefficients ``dual_coef`` (n, L) instead (scores on new rows are
    ``kernel(X_new, X) @ dual_coef + intercept``); ``intercept`` is (L,).  ``relation``
    is the final label relation (L, L) of an alternating solve.  ``dual`` holds the
    solver's own dual variables when they differ from ``dual_coef`` (SMO: alpha, while
    ``dual_coef = (alpha * Y) M``; the ranking solvers: one alpha per label pair); a warm
    start of that solver continues from them exactly.  ``extras`` holds what else a solver
    knows about its point and a caller may use, by name (e.g. ``"scores"``, the training
    scores; ``"beta"``, the ranking family's per-label dual sums; ``"feature_weights"``).
    """

    coef: np.ndarray | None
    intercept: np.ndarray
    dual_coef: np.ndarray | None = None
    relation: np.ndarray | None = None
    dual: np.ndarray | None = None
    extras: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(eq=False)
class Fit:
    """What every solve returns: :meth:`Solver.solve` and the engine functions alike.

    Attributes
    ----------
    solution : Solution
        The returned point (for an alternating solve, the last accepted model step, with
        the relation it was solved for).
    certificate : Certificate
        The certificate of the whole solve.  For a single solve it is that solve's; for an
        alternating or cutting-plane solve, the last model step's primal, dual and gap
        with the outer counts (``n_iter`` outer steps, ``converged`` only when the last
        step and the outer stopping rule both are).
    steps : tuple of Certificate
        One certificate per model step, in order (``(certificate,)`` for a single solve).
    history : dict of str -> list
        Per-step series: ``"objective"`` (the primal after each model step) always, and
        what the solver adds (``"joint_gap"``, ``"bounds"``, ...).
    """

    solution: Solution
    certificate: Certificate
    steps: tuple = attrs.field(default=(), converter=tuple)
    history: Mapping[str, list] = attrs.field(factory=dict)

    def __attrs_post_init__(self):
        if not self.steps:
            object.__setattr__(self, "steps", (self.certificate,))
        if "objective" not in self.history:
            object.__setattr__(self, "history", {"objective": [float(c.primal) for c in self.steps], **self.history})

    @property
    def converged(self) -> bool:
        """Whether the certificate met its tolerance (see :attr:`Certificate.converged`)."""
        return bool(self.certificate.converged)

    @property
    def n_iter(self) -> int:
        """Iterations (passes or outer rounds, as the solver counts them) the solve used."""
        return int(self.certificate.n_iter)


#: The roles of the parts a solver reads from a :class:`Problem`.
PART_ROLES = ("loss", "regularizer", "relation", "kernel")


class Solver(ABC):
    """Base class of a solver.

    ``requires`` maps a part's role in :class:`Problem` ("loss", "regularizer",
    "relation", "kernel") to the names of the capabilities the solver calls on it.
    Method names must be callables of the part; other names (e.g. ``"smooth"``,
    ``"linear"``) must be true attributes.  :meth:`check` raises
    :class:`CapabilityError` naming the first one missing, before any numerical work.

    ``consumes`` maps a role to the capabilities the solver reads *when the part has them*
    (optional inputs: LIEML's solver enhances the labels when the relation can).  A part
    whose own information reaches a model only through some capability lists it in its
    ``state`` (the concept network's relation: ``("graph",)``); a solver that neither
    requires nor consumes each of those names would fit as if the part were absent, so
    :meth:`check` refuses the part (:func:`unread_state`).  A part with an empty ``state``
    (independent labels, the stock losses) is read through its generic interface alone.
    """

    requires: ClassVar[dict[str, tuple[str, ...]]] = {}
    consumes: ClassVar[dict[str, tuple[str, ...]]] = {}

    def check(self, problem: Problem) -> None:
        """Raise :class:`CapabilityError` if a part of ``problem`` lacks a capability in :attr:`requires`,
        or carries state (its ``state`` names) that this solver would not read."""
        for role, names in self.requires.items():
            part = getattr(problem, role)
            for name in names:
                attr = getattr(part, name, None)
                if attr is None or attr is False:
                    raise CapabilityError(
                        f"{type(self).__name__} requires {role}.{name}, which "
                        f"{type(part).__name__} does not provide"
                    )
        unread = unread_state(self, problem)
        if unread:
            raise CapabilityError(unread_message(self, *unread[0]))

    def require_identity_label_gram(self, problem: Problem, objective: str) -> None:
        """Raise :class:`CapabilityError` unless the regulariser's ``label_gram(L)`` is the identity.

        For solvers of label-separable problems under ``1/2 ||W||_F^2`` (the Frobenius norm);
        ``objective`` names what the solver solves, for the error.
        """
        n_labels = problem.n_labels
        gram = np.asarray(problem.regularizer.label_gram(n_labels), dtype=np.float64)
        if gram.shape != (n_labels, n_labels) or not np.array_equal(gram, np.eye(n_labels)):
            raise CapabilityError(
                f"{type(self).__name__} solves {objective}; "
                f"{type(problem.regularizer).__name__}.label_gram is not the identity"
            )

    def require_diagonal_label_gram(self, problem: Problem, objective: str) -> np.ndarray:
        """m, the diagonal of the regulariser's ``label_gram(L)``; CapabilityError unless ``M = diag(m)``, m > 0.

        For solvers of per-label problems whose regulariser weighs label j by m_j (the duals then
        decouple, label j with the cost C m_j); ``objective`` names what the solver solves, for the error.
        """
        name, regularizer, L = type(self).__name__, type(problem.regularizer).__name__, problem.n_labels
        M = np.asarray(problem.regularizer.label_gram(L), dtype=np.float64)
        if M.shape != (L, L):
            raise CapabilityError(f"{regularizer}.label_gram({L}) has shape {M.shape}, expected ({L}, {L})")
        m = np.diag(M).copy()
        off_diagonal = M - np.diag(m)
        if np.any(off_diagonal != 0.0):
            i, j = np.unravel_index(np.argmax(np.abs(off_diagonal)), M.shape)
            raise CapabilityError(
                f"{name} solves {objective} and needs a diagonal label_gram (independent per-label duals), but "
                f"{regularizer}.label_gram({L}) couples labels {i} and {j} (entry {M[i, j]:.3g}); "
                "a solver for coupled duals (SMO) handles it"
            )
        if not np.all(np.isfinite(m) & (m > 0.0)):
            raise CapabilityError(
                f"{name} needs a label_gram with finite positive diagonal entries, but "
                f"{regularizer}.label_gram({L}) has diagonal {m.tolist()}"
            )
        return m

    @abstractmethod
    def solve(self, problem: Problem, warm_start: Solution | None = None) -> Fit:
        """Solve ``problem`` (from ``warm_start`` when given, e.g. the previous point of a grid).

        The one contract of every solver, core or plugin: validate what the solver needs
        (:meth:`check`), solve, and return a :class:`Fit`.
        """
