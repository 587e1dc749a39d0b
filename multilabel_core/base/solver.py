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
    """Word the refusal of a part that ``solver`` would ignore.

    Parameters
    ----------
    solver : Solver
        The solver that would not read the part.
    role : str
        The part's role in the :class:`Problem` (``"loss"``, ``"regularizer"``, ``"relation"``
        or ``"kernel"``).
    part : object
        The part itself.
    names : tuple of str
        The ``state`` names of the part that ``solver`` does not read (one entry of
        :func:`unread_state`); ``("update", ...)`` for a learned relation.

    Returns
    -------
    str
        The message of the :class:`CapabilityError`, saying which solver to choose instead.
    """
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
    """List the parts of ``problem`` whose ``state`` ``solver`` would not read.

    Parameters
    ----------
    solver : Solver
        The solver, read through its ``requires`` and ``consumes`` mappings.
    problem : Problem
        The problem whose parts are examined, role by role.

    Returns
    -------
    list of tuple
        One ``(role, part, names)`` per part with unread state: the role, the part and the
        tuple of its ``state`` names the solver does not read (a learned relation counts its
        ``"update"`` as state).  Empty when the solver reads everything.

    Notes
    -----
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

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
        The training rows (or a precomputed ``(n, n)`` kernel).
    Y : ndarray of shape (n, L)
        The targets in the loss's convention ({-1, +1} for sign losses, reals for regression).
    loss : Loss
        The loss part.
    regularizer : Regularizer
        The regulariser part.
    relation : LabelRelation
        The label relation part.
    kernel : Kernel
        The kernel part.
    C : float, default=1.0
        The weight of the loss against the regulariser (C = 1 / lambda).
    fit_intercept : bool, default=True
        Whether the scores carry a per-label bias b.
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


def _rescaled_value(value, ratio: float):
    if value is None:
        return None
    if isinstance(value, WarmState):
        return value.rescaled(ratio)
    return ratio * np.asarray(value)


@attrs.frozen(eq=False)
class WarmState:
    """What a solver needs to continue exactly from the point it returned: opaque, owned by that solver.

    A caller never reads the values; it keeps the state and hands the Solution back as
    ``warm_start`` (the next point of a grid, the next model step of an alternating solve, a
    refit with ``warm_start=True``).  The owning solver declares the names it puts here in
    its ``warm_state_names`` and reads them back; a solver given another's state reads only
    the names it knows and starts the rest cold.

    Parameters
    ----------
    owner : str
        The class name of the solver that wrote the state.
    scaled : dict of str -> ndarray or WarmState
        The values that scale with the loss weight C: dual variables in a box ``[0, C]``
        (the dual of ``regularizer(W) + C * loss`` has its variables proportional to C, so a
        solution at C is the start at C' after multiplying them by ``C'/C``).  A nested
        WarmState (an inner solver's, kept by a driver) rescales itself.
    fixed : dict of str -> object
        The values that do not depend on C (primal weights, a learned relation, a tolerance
        reached, learned feature-subset weights).

    Raises
    ------
    ValueError
        If a name is both in ``scaled`` and in ``fixed``.
    """

    owner: str
    scaled: Mapping[str, Any] = attrs.field(factory=dict, converter=dict)
    fixed: Mapping[str, Any] = attrs.field(factory=dict, converter=dict)

    def __attrs_post_init__(self):
        shared = set(self.scaled) & set(self.fixed)
        if shared:
            raise ValueError(f"WarmState of {self.owner}: {sorted(shared)} are both scaled and fixed")

    def rescaled(self, ratio: float) -> WarmState:
        """Rescale the state to the loss weight ``ratio * C``.

        Parameters
        ----------
        ratio : float
            The ratio ``C' / C`` of the new cost to the one the state was computed at; finite
            and positive.

        Returns
        -------
        WarmState
            A new state with every ``scaled`` value times ``ratio`` (a nested WarmState
            rescaled in turn) and the ``fixed`` values shared.

        Raises
        ------
        ValueError
            If ``ratio`` is not finite and positive.
        """
        ratio = float(ratio)
        if not (np.isfinite(ratio) and ratio > 0.0):
            raise ValueError(f"a warm state rescales by a finite positive ratio of costs, got {ratio!r}")
        return attrs.evolve(self, scaled={name: _rescaled_value(value, ratio) for name, value in self.scaled.items()})

    def get(self, name: str, default=None):
        """Look a value up by name, in ``scaled`` first and then in ``fixed``.

        Parameters
        ----------
        name : str
            The name the owning solver stored the value under.
        default : object, optional
            What to return when the state holds no ``name``; None by default.

        Returns
        -------
        object
            The stored value, else ``default``.
        """
        if name in self.scaled:
            return self.scaled[name]
        return self.fixed.get(name, default)

    def __contains__(self, name: str) -> bool:
        return name in self.scaled or name in self.fixed

    def names(self) -> set[str]:
        """Give every name the state holds.

        Returns
        -------
        set of str
            The union of the ``scaled`` and ``fixed`` names.
        """
        return set(self.scaled) | set(self.fixed)


#: The owner of the state :func:`warm_state_of` reads from a Solution that carries none of its own.
POINT_OWNER = "Solution"


def warm_state_of(warm_start: Solution | None) -> WarmState | None:
    """Give the :class:`WarmState` a solver continues from.

    Parameters
    ----------
    warm_start : Solution or None
        The point to continue from; None for a cold start.

    Returns
    -------
    WarmState or None
        The state ``warm_start`` carries, else one built from its typed point; None when
        ``warm_start`` is None (cold).

    Notes
    -----
    The one way every bundled solver reads a warm start.  A Solution built by hand (or returned
    by a solver that keeps no state) carries none; its state is then its typed point, under the
    same names the solvers use for their own: ``scaled`` ``"dual"`` and ``"dual_coef"`` (dual
    variables, proportional to C), ``fixed`` ``"coef"``, ``"intercept"`` and ``"relation"``
    (owner :data:`POINT_OWNER`).
    """
    if warm_start is None:
        return None
    if warm_start.warm_state is not None:
        return warm_start.warm_state
    scaled = {name: getattr(warm_start, name) for name in ("dual", "dual_coef") if getattr(warm_start, name) is not None}
    fixed = {name: getattr(warm_start, name) for name in ("coef", "intercept", "relation") if getattr(warm_start, name) is not None}
    return WarmState(POINT_OWNER, scaled=scaled, fixed=fixed)


@attrs.frozen(eq=False)
class RelationState:
    """What a model step tells the label-relation side of a solve (the alternating driver, a fed relation).

    Every field is optional: a solver fills what it can compute, and a reader that needs a
    missing one falls back (the relation step to ``coef``) or gives up that bound.

    Parameters
    ----------
    weight_factor : ndarray (r, L) or None
        A factor F with ``F^T F = W^T W`` for the relation step when the solver's weights are not
        ``coef`` itself (kernel duals: ``Lambda^(1/2) V^T M`` from ``H``'s eigendecomposition;
        L-BFGS on a factored problem: its factor).
    dual_gram : ndarray (L, L) or None
        ``H = B^T K B``, the matrix of the dual's quadratic term ``1/2 tr(H M)``, for the joint
        certificate's lower bound (Zhang & Yeung, "Multi-Label Relationship Learning", eq. 10).
    regularizer_value : float or None
        ``1/2 tr(H M)``, the step's regulariser value, for the joint certificate's bounds.
    fed_relation : LabelRelation or None
        The relation that fed the problem (label enhancement), kept as the record of the feed.
    """

    weight_factor: np.ndarray | None = None
    dual_gram: np.ndarray | None = None
    regularizer_value: float | None = None
    fed_relation: Any = None


@attrs.frozen(eq=False)
class Solution:
    """The point a solver returns.

    Every field is typed: what a caller reads is a named attribute, what a solver needs to
    continue is one opaque :class:`WarmState`, and a family's own fitted quantities are in
    ``model_state`` under names its solver declares.

    Parameters
    ----------
    coef : ndarray (d, L) or None
        The primal W of a feature solver; None for a kernel solver, which returns ``dual_coef``
        instead (scores on new rows are ``kernel(X_new, X) @ dual_coef + intercept``).
    intercept : ndarray (L,)
        The per-label bias b (zeros without ``fit_intercept``).
    dual_coef : ndarray (n, L) or None
        The kernel expansion's coefficients.
    relation : ndarray (L, L) or None
        The final label relation of an alternating solve.
    dual : ndarray or None
        The solver's own dual variables when they differ from ``dual_coef`` (SMO: alpha, while
        ``dual_coef = (alpha * Y) M``; the ranking solvers: one alpha per label pair), for the
        optimality checks and the fitted attributes the solver declares.  A warm start does not
        read it: it reads ``warm_state``.
    regularizer : Regularizer or None
        The regulariser the solve resolved from the training labels (its ``with_labels`` state),
        when it did: the one the certificate is about, which a composing estimator keeps.
    relation_state : RelationState
        What the relation side of the solve reads of this point (:class:`RelationState`).
    model_state : dict of str -> object
        The family's fitted quantities by name, each declared by the solver in
        :attr:`Solver.model_state_names` (e.g. the ranking family's feature-subset weights, the
        concept network's graph and coefficients, LIEML's enhancement record); those the solver
        maps in :attr:`Solver.fitted_attributes` become a composing estimator's fitted attributes.
    warm_state : WarmState or None
        What the solver that returned this point needs to continue from it exactly, declared in
        its :attr:`Solver.warm_state_names`; it says itself how it rescales to another C
        (:meth:`WarmState.rescaled`).  None: a warm start from this point starts cold.
    """

    coef: np.ndarray | None
    intercept: np.ndarray
    dual_coef: np.ndarray | None = None
    relation: np.ndarray | None = None
    dual: np.ndarray | None = None
    regularizer: Any = None
    relation_state: RelationState = attrs.field(factory=RelationState)
    model_state: Mapping[str, Any] = attrs.field(factory=dict, converter=dict)
    warm_state: WarmState | None = None


@attrs.frozen(eq=False)
class Fit:
    """What every solve returns: :meth:`Solver.solve` and the engine functions alike.

    Parameters
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
        """Number of iterations (passes or outer rounds, as the solver counts them) the solve used."""
        return int(self.certificate.n_iter)


def undeclared_state(solver, solution: Solution) -> list[str]:
    """List what ``solution`` holds that ``solver`` does not declare.

    Parameters
    ----------
    solver : Solver
        The solver that returned ``solution``, read through its ``model_state_names``,
        ``warm_state_names`` and ``fitted_attributes``.
    solution : Solution
        The point it returned.

    Returns
    -------
    list of str
        One readable line per undeclared name (or a warm state owned by another solver);
        empty when everything is declared.

    Notes
    -----
    Checks the ``model_state`` names against :attr:`Solver.model_state_names`, the ``warm_state``
    names against :attr:`Solver.warm_state_names` (and its owner against the solver's class), and
    the :attr:`Solver.fitted_attributes` keys against the model state names (or ``"dual"``).
    """
    name = type(solver).__name__
    problems = []
    model_names = dict(getattr(solver, "model_state_names", {}) or {})
    for key in sorted(set(solution.model_state) - set(model_names)):
        problems.append(f"{name} puts {key!r} in model_state but does not declare it in model_state_names")
    for key, attribute in dict(getattr(solver, "fitted_attributes", {}) or {}).items():
        if key != "dual" and key not in model_names:
            problems.append(f"{name}.fitted_attributes maps {key!r} (to {attribute}), not a declared model_state name")
    warm = solution.warm_state
    if warm is not None:
        if warm.owner != name:
            problems.append(f"{name} returned the warm_state of {warm.owner}")
        for key in sorted(warm.names() - set(getattr(solver, "warm_state_names", {}) or {})):
            problems.append(f"{name} puts {key!r} in warm_state but does not declare it in warm_state_names")
    return problems


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
    #: The names this solver puts in its solutions' :attr:`Solution.warm_state`, each with what
    #: it holds (its ``scaled`` names scale with C; see :class:`WarmState`).
    warm_state_names: ClassVar[Mapping[str, str]] = {}
    #: The names this solver puts in its solutions' :attr:`Solution.model_state`, each with what it holds.
    model_state_names: ClassVar[Mapping[str, str]] = {}
    #: ``model_state`` name (or ``"dual"``, :attr:`Solution.dual`) -> the fitted attribute a composing
    #: estimator exposes it as; :meth:`ComposedEstimator._store_fit` copies them, no preset code needed.
    fitted_attributes: ClassVar[Mapping[str, str]] = {}
    #: The names of :attr:`fitted_attributes` whose values are dual variables: they scale with the
    #: objective, so an estimator whose objective is ``s`` times the Problem's stores them times ``s``
    #: (its ``_objective_scale``; MLRL's paper-scaled alphas, Zhang & Yeung, section 2).
    objective_units: ClassVar[frozenset] = frozenset()
    #: ``Fit.history`` key (a per-step series) -> the fitted attribute a composing estimator exposes
    #: it as (a series of numbers as a float array); an alternating driver concatenates its steps'.
    history_attributes: ClassVar[Mapping[str, str]] = {}
    #: Whether the certificate of a solve is the solver's own (an outer problem's bounds, as the
    #: cutting plane's), not its last step's: a per-step list of certificates then ends with it.
    outer_certificate: ClassVar[bool] = False

    def check(self, problem: Problem) -> None:
        """Check that this solver can solve ``problem`` before any numerical work.

        Parameters
        ----------
        problem : Problem
            The problem to be solved.

        Raises
        ------
        CapabilityError
            If a part of ``problem`` lacks a capability in :attr:`requires`, or carries
            state (its ``state`` names) that this solver would not read.
        """
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
        """Refuse a regulariser whose ``label_gram(L)`` is not the identity.

        For solvers of label-separable problems under ``1/2 ||W||_F^2`` (the Frobenius norm).

        Parameters
        ----------
        problem : Problem
            The problem whose regulariser is checked (it must have ``label_gram``).
        objective : str
            What the solver solves, for the error message.

        Raises
        ------
        CapabilityError
            If ``problem.regularizer.label_gram(L)`` is not exactly the ``(L, L)`` identity.
        """
        n_labels = problem.n_labels
        gram = np.asarray(problem.regularizer.label_gram(n_labels), dtype=np.float64)
        if gram.shape != (n_labels, n_labels) or not np.array_equal(gram, np.eye(n_labels)):
            raise CapabilityError(
                f"{type(self).__name__} solves {objective}; "
                f"{type(problem.regularizer).__name__}.label_gram is not the identity"
            )

    def require_diagonal_label_gram(self, problem: Problem, objective: str) -> np.ndarray:
        """Give the diagonal m of the regulariser's ``label_gram(L)``, refusing a coupled one.

        For solvers of per-label problems whose regulariser weighs label j by m_j (the duals then
        decouple, label j with the cost C m_j).

        Parameters
        ----------
        problem : Problem
            The problem whose regulariser is read (it must have ``label_gram``).
        objective : str
            What the solver solves, for the error message.

        Returns
        -------
        ndarray of shape (L,)
            The diagonal m of ``M = label_gram(L)``.

        Raises
        ------
        CapabilityError
            Unless ``M`` is ``(L, L)`` and equal to ``diag(m)`` with every m_j finite and positive.
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
        """Solve ``problem``, from ``warm_start`` when given.

        The one contract of every solver, core or plugin: validate what the solver needs
        (:meth:`check`), solve, and return a :class:`Fit`.

        Parameters
        ----------
        problem : Problem
            The training problem.
        warm_start : Solution or None, optional
            A point to continue from (the previous point of a grid, the previous model step of
            an alternating solve); the solver reads its :attr:`Solution.warm_state` through
            :func:`warm_state_of`.  None starts cold.

        Returns
        -------
        Fit
            The solution, its certificate, the per-step certificates and history.

        Raises
        ------
        CapabilityError
            If the solver cannot solve ``problem`` (:meth:`check`).
        """
