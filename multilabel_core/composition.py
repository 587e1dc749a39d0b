"""Composition: which registered solver solves a problem made of given parts.

A solver declares what it needs of each part (:attr:`~multilabel_core.base.Solver.requires`)
and which optional capabilities it reads (:attr:`~multilabel_core.base.Solver.consumes`); a
part declares the capabilities through which its own information reaches a model (its
``state``).  :meth:`~multilabel_core.base.Solver.check` holds a solver to both, so a
composition is either solved with every part it names, or refused with a
:class:`~multilabel_core.base.CapabilityError` that names the part and what is missing.

``solver="auto"`` (:func:`select_solver`) tries the registered solvers that carry an
``auto_order`` (:class:`~multilabel_core.registry.ComponentSpec`), lowest first, and takes the
first whose check passes; a solver with an ``inner`` parameter (the alternating driver) gets
its model-step solver by the same rule, applied to the model step's problem.  When no solver
reads a fixed relation's state but the relation can ``feed`` a generic solver (LIEML's label
enhancement: the enhanced labels become the targets), the fed problem is tried the same way.

:func:`auto_table` renders what ``auto`` picks for every registered (loss, regularizer,
relation) by kernel: the table of docs/components.md (a test holds the two equal).
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Mapping

import attrs
import numpy as np

from .base import CapabilityError, Problem, Solver, unread_state
from .plugins import component_parameters, list_components, make_component

__all__ = [
    "AUTO",
    "SolverChoice",
    "auto_table",
    "auto_table_markdown",
    "build_solver",
    "feed_if_unread",
    "feed_problem",
    "select_solver",
    "solver_order",
    "telling_reason",
]

#: The name that asks for the automatic choice (``solver="auto"``, ``inner="auto"``).
AUTO = "auto"


@attrs.frozen(eq=False)
class SolverChoice:
    """The outcome of a solver choice.

    Parameters
    ----------
    solver : Solver
        The built solver.
    name : str
        Its registered name.
    problem : Problem
        The problem it solves (the fed one when the relation fed it).
    inner : str or None, default=None
        For a driver (a solver with an ``inner`` parameter), the model-step solver's name.
    fed : bool, default=False
        Whether ``problem`` is the relation's fed problem (:func:`feed_problem`).
    """

    solver: Solver
    name: str
    problem: Problem
    inner: str | None = None
    fed: bool = False


def solver_order() -> list[str]:
    """List the registered solvers ``auto`` tries, in order (``auto_order``, then name).

    Returns
    -------
    list of str
        The names of the solvers registered with an ``auto_order``, in that order.
    """
    specs = [spec for spec in list_components("solver") if spec.auto_order is not None]
    return [spec.name for spec in sorted(specs, key=lambda spec: (spec.auto_order, spec.name))]


def has_inner(name: str) -> bool:
    """Whether the solver registered as ``name`` takes a model-step solver (``inner``)."""
    return "inner" in component_parameters("solver", name)


def _accepts(name: str, settings: Mapping) -> bool:
    """Whether the solver registered as ``name`` takes every one of ``settings`` (any, with ``**kwargs``)."""
    if set(settings) <= component_parameters("solver", name):
        return True
    factory = next(spec.factory for spec in list_components("solver") if spec.name == name)
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(factory).parameters.values())


def _step_problem(problem: Problem) -> Problem:
    """A model step's problem of an alternating solve, on which its solver is chosen.

    The relation is held at its initial value moved off the diagonal (a learned covariance
    starts at I / L, where every label is apart; the later steps couple them), so that a
    solver accepting only label-separable steps is not chosen for a driver whose steps are not.
    """
    from .solvers.alternating import AlternatingSolver

    relation = problem.relation
    if relation.learned and not callable(getattr(problem.regularizer, "with_relation", None)):
        raise CapabilityError(
            f"the {type(relation).__name__} relation is learned through regularizer.with_relation, which "
            f"{type(problem.regularizer).__name__} does not provide (a label covariance regulariser does)"
        )
    held = np.asarray(relation.initial(problem.n_labels), dtype=np.float64)
    if relation.learned and held.shape[0] > 1:
        L = held.shape[0]
        smallest = float(np.linalg.eigvalsh(held)[0])
        # J - I has eigenvalues -1 and L - 1: the shift keeps the matrix positive definite.
        held = held + 0.5 * smallest / L * (np.ones((L, L)) - np.eye(L))
    return AlternatingSolver.step_problem(problem, held)


def build_solver(name: str, problem: Problem, settings: Mapping, inner=AUTO, optional: Mapping = ()) -> SolverChoice:
    """Build the solver registered as ``name`` for ``problem``.

    Parameters
    ----------
    name : str
        The registered solver name.
    problem : Problem
        The problem it is for (a driver's ``inner="auto"`` is chosen on its model step).
    settings : mapping
        Settings the solver is built with (it must take them all).
    inner : str or Solver, default="auto"
        For a driver, its model-step solver by name, as an object, or ``"auto"``.
    optional : mapping, default=()
        Settings given only when the solver takes them.

    Returns
    -------
    SolverChoice
        The built solver with its name, the problem and the inner solver's name.

    Raises
    ------
    ValueError
        If ``inner`` is given to a solver that takes no model-step solver.
    CapabilityError
        If ``inner="auto"`` finds no model-step solver for the problem.
    """
    params = dict(settings)
    params.update((key, value) for key, value in dict(optional).items() if key in component_parameters("solver", name))
    inner_name = None
    if has_inner(name):
        if isinstance(inner, Solver):
            params["inner"], inner_name = inner, type(inner).__name__
        elif inner == AUTO:
            choice = select_solver(_step_problem(problem), exclude_drivers=True, feed=False)
            params["inner"], inner_name = choice.solver, choice.name
        else:
            params["inner"], inner_name = make_component("solver", inner), inner
    elif not (isinstance(inner, str) and inner == AUTO):
        raise ValueError(
            f"inner={inner!r} names a model-step solver, but solver {name!r} has none; "
            f"solvers that take one: {', '.join(n for n in solver_names() if has_inner(n)) or 'none'}"
        )
    return SolverChoice(make_component("solver", name, **params), name, problem, inner_name)


def solver_names() -> list[str]:
    """Every registered solver's name, sorted."""
    return [spec.name for spec in list_components("solver")]


def select_solver(
    problem: Problem,
    settings: Mapping | None = None,
    *,
    optional: Mapping | None = None,
    inner=AUTO,
    exclude_drivers: bool = False,
    feed: bool = True,
) -> SolverChoice:
    """Choose the first solver of :func:`solver_order` that solves ``problem`` with every part it names.

    Parameters
    ----------
    problem : Problem
        The problem to solve.
    settings : mapping, optional
        Settings the solver must take (the user's ``tol``, ``max_iter``, ``solver_params``):
        solvers that do not take them all are passed over, never given less than was asked.
    optional : mapping, optional
        Settings given to the solvers that take them (``n_jobs``: solvers without label threads
        have nothing to split).
    inner : str or Solver, default "auto"
        The model-step solver of a driver (a solver with an ``inner`` parameter); by name, as an
        object, or ``"auto"`` (this rule, on the model step's problem).  Anything but ``"auto"``
        restricts the choice to drivers.
    exclude_drivers : bool, default False
        Leave the drivers out (the choice of a driver's own model-step solver).
    feed : bool, default True
        When no solver takes the problem as it is and its relation can ``feed`` a generic solver,
        try the fed problem too.

    Returns
    -------
    SolverChoice
        The chosen solver, its name, the problem it solves (``fed`` when the relation fed it)
        and a driver's inner solver name.

    Raises
    ------
    CapabilityError
        No registered solver solves the composition; the message gives each candidate's reason.
    """
    settings = dict(settings or {})
    optional = dict(optional or {})
    wants_driver = not (isinstance(inner, str) and inner == AUTO)
    reasons: dict[str, str] = {}
    problems = [(problem, False)]
    can_feed = feed and callable(getattr(problem.relation, "feed", None))
    feedable = False
    for candidate_problem, fed in problems:
        for name in solver_order():
            if (exclude_drivers and has_inner(name)) or (wants_driver and not has_inner(name)):
                continue
            if not _accepts(name, settings):
                reasons.setdefault(name, f"takes no {', '.join(sorted(set(settings) - component_parameters('solver', name)))}")
                continue
            try:
                choice = build_solver(name, candidate_problem, settings, inner, optional)
            except CapabilityError as exc:  # a driver with no model-step solver for these parts
                reasons[name] = str(exc)
                continue
            try:
                choice.solver.check(candidate_problem)
            except CapabilityError as exc:
                reasons[name] = str(exc)
                feedable = feedable or (can_feed and not fed and _takes_unfed(choice.solver, candidate_problem))
                continue
            return attrs.evolve(choice, fed=fed)
        # The feed (LIEML's enhancement: a low-rank completion) is computed only when some solver
        # refused the problem for the relation alone.
        if can_feed and not fed and feedable:
            problems.append((feed_problem(problem), True))
    listing = "; ".join(f"{name}: {reason}" for name, reason in reasons.items()) or "no solver is registered for auto"
    error = CapabilityError(f"no registered solver solves this composition ({_describe(problem)}): {listing}")
    error.reasons = reasons
    raise error


def unfed(problem: Problem) -> Problem:
    """``problem`` with its fixed relation replaced by independent labels: what a solver must take
    for a fed problem to be worth computing."""
    from .relations import Independent

    return attrs.evolve(problem, relation=Independent())


def _takes_unfed(solver, problem: Problem) -> bool:
    try:
        solver.check(unfed(problem))
    except CapabilityError:
        return False
    return True


def feed_problem(problem: Problem) -> Problem:
    """Compute ``problem.relation.feed(problem)``, held to its contract: the same rows, kernel and shape.

    Parameters
    ----------
    problem : Problem
        A problem whose relation has ``feed``.

    Returns
    -------
    Problem
        The fed problem a generic solver solves instead.

    Raises
    ------
    TypeError
        If ``feed`` returns something other than a Problem, or changes the rows, the kernel or
        the target shape.
    """
    fed = problem.relation.feed(problem)
    if not isinstance(fed, Problem):
        raise TypeError(f"{type(problem.relation).__name__}.feed must return a Problem, got {type(fed).__name__}")
    if fed.X is not problem.X or fed.kernel is not problem.kernel or np.shape(fed.Y) != np.shape(problem.Y):
        raise TypeError(
            f"{type(problem.relation).__name__}.feed must keep the problem's rows, kernel and target shape "
            "(prediction uses the fitted model on new rows as usual)"
        )
    return fed


def fed_fit(fit, problem: Problem):
    """The :class:`~multilabel_core.base.Fit` of a fed ``problem``, with the feed's own work certified in it.

    A fed problem's relation may list ``feed_steps``, the certificates of what ``feed`` solved
    before the model step (LIEML's label enhancement: T1 by FPC).  They come first in ``steps``,
    the certificate is converged only when they all are too (its statistics say which was not),
    and ``solution.relation_state.fed_relation`` keeps the fed relation (its record of the feed).
    """
    relation = problem.relation
    before = tuple(getattr(relation, "feed_steps", ()))
    solution = attrs.evolve(
        fit.solution, relation_state=attrs.evolve(fit.solution.relation_state, fed_relation=relation)
    )
    if not before:
        return attrs.evolve(fit, solution=solution)
    fed_converged = all(bool(c.converged) for c in before)
    statistics = dict(fit.certificate.statistics) | {
        "feed_converged": fed_converged,
        "feed_relative_gaps": [float(c.relative_gap) for c in before],
    }
    certificate = attrs.evolve(
        fit.certificate, converged=bool(fit.certificate.converged and fed_converged), statistics=statistics
    )
    return attrs.evolve(
        fit, solution=solution, certificate=certificate, steps=before + tuple(fit.steps)
    )


def feed_if_unread(solver: Solver, problem: Problem) -> tuple[Problem, bool]:
    """Give the problem ``solver`` should solve: ``problem`` itself, or the relation's fed problem.

    The fed problem is chosen when ``solver`` does not read the relation's state and the
    relation can feed a generic solver.  A part the solver would ignore and cannot be fed
    around is left for ``solver.check`` to refuse (:meth:`~multilabel_core.base.Solver.check`),
    which every caller runs on the result.

    Parameters
    ----------
    solver : Solver
        The solver that will solve.
    problem : Problem
        The composed problem.

    Returns
    -------
    problem : Problem
        What the solver should solve.
    fed : bool
        Whether it is the fed problem.

    Raises
    ------
    CapabilityError
        If the solver cannot take the problem's other parts (checked before the costly feed).
    """
    unread = unread_state(solver, problem)
    if unread and [role for role, *_ in unread] == ["relation"] and callable(getattr(problem.relation, "feed", None)):
        # A solver that cannot take the other parts is refused for them before the (costly) feed.
        solver.check(unfed(problem))
        fed = feed_problem(problem)
        if not unread_state(solver, fed):
            return fed, True
    # Anything still unread is the solver's check to refuse (the callers run it on what this returns).
    return problem, False


def _describe(problem: Problem) -> str:
    return ", ".join(f"{role}={type(getattr(problem, role)).__name__}" for role in ("loss", "regularizer", "relation", "kernel"))


# -- the table of docs/components.md ------------------------------------------------------

#: Parameters the table gives the components that have none by default (LowRank's rank k).
TABLE_PARAMS = {("regularizer", "low_rank"): {"rank": 2}}


def _table_data(n_samples: int = 24, n_features: int = 5, n_labels: int = 3):
    """A small fixed data set on which the table's problems are built (checks only: nothing is solved)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n_samples, n_features))
    Y = (X[:, :n_labels] + 0.5 * rng.standard_normal((n_samples, n_labels)) > 0).astype(np.int8)
    Y[0], Y[1] = 1, 0  # every label takes both values
    return X, Y


def auto_table(kernels=("linear", "rbf")) -> list[dict]:
    """Tabulate what ``solver="auto"`` picks for every registered (loss, regularizer, relation) and kernel.

    One record per (loss, regularizer, relation): the names, and per kernel the chosen solver
    (``"alternating(inner=smo)"`` for a driver, ``" (fed)"`` when the relation fed a generic
    solver) or ``"none"`` with the most telling refusal (:func:`telling_reason`).  The problems
    are built as :class:`~multilabel_core.ComposedEstimator` builds them, on a small fixed data
    set; only the solvers' checks run.

    Parameters
    ----------
    kernels : tuple of str, default=("linear", "rbf")
        The registered kernel names, one column each.

    Returns
    -------
    list of dict
        One record per (loss, regularizer, relation): ``"loss"``, ``"regularizer"``,
        ``"relation"`` and, per kernel name, the choice or ``"none: <reason>"``.
    """
    from .estimator import ComposedEstimator

    X, Y = _table_data()
    names = {kind: [spec.name for spec in list_components(kind)] for kind in ("loss", "regularizer", "relation")}
    records = []
    for loss, regularizer, relation in itertools.product(names["loss"], names["regularizer"], names["relation"]):
        record = {"loss": loss, "regularizer": regularizer, "relation": relation}
        for kernel in kernels:
            estimator = ComposedEstimator(
                loss=loss, regularizer=regularizer, relation=relation, kernel=kernel,
                regularizer_params=TABLE_PARAMS.get(("regularizer", regularizer)),
            )  # fmt: skip
            try:
                choice = estimator.choose_solver(X, Y)
            except (CapabilityError, ValueError) as exc:
                record[kernel] = "none: " + telling_reason(exc, make_component("relation", relation))
            else:
                label = choice.name if choice.inner is None else f"{choice.name}(inner={choice.inner})"
                record[kernel] = label + (" (fed)" if choice.fed else "")
        records.append(record)
    return records


def telling_reason(exc: Exception, relation=None) -> str:
    """Pick the refusal that says most about why no solver fits, for a table cell.

    The solvers that would read what the relation contributes (its ``state``; for a learned
    relation, its update: the drivers) are the ones whose refusal matters; otherwise a candidate
    that got past the capability checks (a part it would ignore) says more than one that stopped
    at a missing capability.  Without per-candidate reasons, the message itself.

    Parameters
    ----------
    exc : Exception
        The refusal; a :class:`CapabilityError` from :func:`select_solver` carries ``reasons``
        (solver name -> reason).
    relation : LabelRelation or None, default=None
        The composition's relation, whose ``state`` says which solvers' refusals matter.

    Returns
    -------
    str
        ``"<solver>: <reason>"`` shortened to one clause, or the shortened message.
    """
    reasons = getattr(exc, "reasons", None)
    if not reasons:
        return _short(str(exc))
    state = tuple(getattr(relation, "state", ()))
    if relation is not None and getattr(relation, "learned", False):
        state = ("update",) + state
    # The core's own solvers first among those that would read the relation: their refusal names the
    # generic capability (a family's driver names its family's parts).
    core = {spec.name for spec in list_components("solver") if spec.plugin == "multilabel_core"}
    relevant = sorted(
        ((name, reason) for name, reason in reasons.items() if state and _reads(name, state)),
        key=lambda item: item[0] not in core,
    )
    later = [(name, reason) for name, reason in reasons.items() if " requires " not in reason]
    name, reason = (relevant or later or list(reasons.items()))[0]
    return f"{name}: {_short(reason)}"


def _reads(name: str, state: tuple[str, ...]) -> bool:
    """Whether the solver registered as ``name`` (built with its defaults) reads every one of ``state``."""
    try:
        solver = make_component("solver", name)
    except (TypeError, ValueError):
        return False
    read = {n for role in ("relation",) for n in (*solver.requires.get(role, ()), *getattr(solver, "consumes", {}).get(role, ()))}
    return set(state) <= read


def _short(reason: str) -> str:
    """A refusal without its advice and its kernel-matrix note (the table's cells stay one clause)."""
    if reason.startswith("no registered solver solves this composition"):
        return "no registered solver takes its model steps with these parts"
    for cut in (" (the ", ": compose it", ", through which", "; choose a solver", ": pass it", " (a label covariance"):
        reason = reason.split(cut)[0]
    return reason.replace("|", "\\|")


def auto_table_markdown(kernels=("linear", "rbf")) -> str:
    """Render :func:`auto_table` as the Markdown table of docs/components.md.

    Parameters
    ----------
    kernels : tuple of str, default=("linear", "rbf")
        The registered kernel names, one column each.

    Returns
    -------
    str
        The table, one line per (loss, regularizer, relation).
    """
    lines = [
        "| loss | regularizer | relation | " + " | ".join(f"`{k}` kernel" for k in kernels) + " |",
        "| --- | --- | --- | " + " | ".join("---" for _ in kernels) + " |",
    ]
    for record in auto_table(kernels):
        cells = [f"`{record[role]}`" for role in ("loss", "regularizer", "relation")]
        cells += [record[kernel] for kernel in kernels]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
