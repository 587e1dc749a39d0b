"""The composition matrix: every combination of registered components, by name, fitted or refused.

A composition is a :class:`~multilabel_core.ComposedEstimator` whose parts are given by their
registered names.  Each one must end in exactly one of two ways:

- **fitted**, certified (every certificate of the fit converged), with every part that is not
  its role's default changing the decision values: swapping it for the default (``squared_hinge``,
  ``frobenius``, ``independent``, ``linear``) gives another model, unless the two compositions
  are one problem by construction (:func:`declared_no_op`);
- **refused** before any work with a :class:`~multilabel_core.base.CapabilityError` or
  ValueError whose message names a part of the composition (its registered name or its class).

Anything else is a failure the matrix counts: a part the fit ignored (``"ignored"``), a fit
whose certificate says it did not converge (``"uncertified"``), another exception (``"raw"``),
a refusal that names no part (``"unnamed"``), or a fit over the time limit (``"hang"``).
New components are covered the day they are registered: the matrix reads the registry.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import signal
import threading
import time
import warnings

import attrs
import numpy as np

from ..base import CapabilityError
from ..plugins import list_components

__all__ = ["DEFAULT_PARTS", "OUTCOMES", "CompositionOutcome", "composition_matrix", "declared_no_op", "summarize"]

#: Each role's default: a part equal to it is not asked to change the model.
DEFAULT_PARTS = {"loss": "squared_hinge", "regularizer": "frobenius", "relation": "independent", "kernel": "linear"}

#: The outcomes, the first two the only acceptable ones.
OUTCOMES = ("fitted", "refused", "ignored", "uncertified", "unnamed", "raw", "hang")

ROLES = ("loss", "regularizer", "relation", "solver", "kernel")


@attrs.frozen
class CompositionOutcome:
    """One composition's end: its parts by name, the outcome, and the detail.

    Parameters
    ----------
    parts : tuple
        The parts' names, in the order of the roles (loss, regularizer, relation, solver,
        kernel).
    outcome : str
        One of :data:`OUTCOMES`.
    detail : str, default=""
        The error, or the role that was ignored.
    seconds : float, default=0.0
        How long the fit took.
    """

    parts: tuple
    outcome: str
    detail: str = ""
    seconds: float = 0.0


class _Timeout(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: float | None):
    """SIGALRM after ``seconds`` where it can be set (the main thread of a POSIX process); else no limit."""
    usable = seconds is not None and hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def expire(signum, frame):
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _part_names(role: str, name: str) -> set[str]:
    """The names a refusal may use for one part: its registered name, its factory's name, and the
    class the factory builds (a driver factory's model-step solver too)."""
    from ..plugins import make_component

    names = {name}
    if name == "auto":
        return names
    names.add(getattr(_factory(role, name), "__name__", name))
    try:
        built = make_component(role, name)
    except (TypeError, ValueError):
        return names  # needs parameters: its registered and factory names stand for it
    names.add(type(built).__name__)
    inner = getattr(built, "inner", None)
    if inner is not None:
        names.add(type(inner).__name__)
    return names


def _factory(role: str, name: str):
    return next(spec.factory for spec in list_components(role) if spec.name == name)


def declared_no_op(estimator, default_estimator) -> bool:
    """Decide whether two fitted compositions solved one problem by construction.

    A part that differs by name but defines the same problem on these data (a label covariance
    regulariser held at Omega = I is the Frobenius norm) may give the same decision values without
    being ignored: the two fits' regularisers then have the same ``label_gram`` and the same value
    on the fitted weights, and their losses the same value on the training scores.

    Parameters
    ----------
    estimator : ComposedEstimator
        A fitted composition.
    default_estimator : ComposedEstimator
        The fitted composition with the default parts it is compared with.

    Returns
    -------
    bool
        True when both used the same solver class and every other part is equal (a
        regulariser may differ if its ``label_gram`` agrees on these labels).
    """
    a, b = estimator.parts_, default_estimator.parts_
    if type(a["solver"]) is not type(b["solver"]):
        return False
    for role in ("regularizer", "loss", "relation", "kernel"):
        if type(a[role]) is type(b[role]) and a[role] == b[role]:
            continue
        if role == "regularizer":
            gram = getattr(a[role], "label_gram", None), getattr(b[role], "label_gram", None)
            L = estimator.n_labels_
            if not all(callable(g) for g in gram) or not np.allclose(gram[0](L), gram[1](L)):
                return False
        else:
            return False
    return True


def composition_matrix(
    X,
    Y,
    *,
    kernels=("linear", "rbf"),
    solvers=None,
    component_params=None,
    time_limit: float | None = 60.0,
    include_auto: bool = True,
) -> list[CompositionOutcome]:
    """Fit every combination of the registered losses, regularisers, relations, solvers and ``kernels`` on (X, Y).

    Parameters
    ----------
    X, Y : array_like
        Training data (small: every combination is fitted or refused on it).
    kernels : tuple of str, default=("linear", "rbf")
        Kernel names to cross with.
    solvers : list of str or None, default=None
        Solver names (None: every registered solver, plus ``"auto"`` when ``include_auto``).
    component_params : mapping, optional
        ``(role, name) -> params`` for components with parameters that have no default (LowRank's
        ``rank``): passed as ``<role>_params``.  A component left out is named without them, and must
        then be refused with a ValueError naming the parameter.
    time_limit : float or None
        Seconds one fit may take before it counts as a hang (POSIX main thread only).
    include_auto : bool, default=True
        Whether ``solver="auto"`` is among the default solvers.

    Returns
    -------
    list of CompositionOutcome
        One outcome per combination.
    """
    from ..estimator import ComposedEstimator

    component_params = dict(component_params or {})
    names = {kind: [spec.name for spec in list_components(kind)] for kind in ("loss", "regularizer", "relation")}
    names["kernel"] = list(kernels)
    names["solver"] = list(solvers) if solvers is not None else (
        [spec.name for spec in list_components("solver")] + (["auto"] if include_auto else [])
    )
    cache: dict[tuple, tuple] = {}
    known_names: dict[tuple[str, str], set[str]] = {}

    def part_names(role: str, name: str) -> set[str]:
        # Built once per part for the whole matrix, not once per refused composition.
        if (role, name) not in known_names:
            known_names[role, name] = _part_names(role, name)
        return known_names[role, name]

    def run(combo):
        if combo in cache:
            return cache[combo]
        parts = dict(zip(ROLES, combo))
        params = {
            f"{role}_params": dict(component_params[role, name])
            for role, name in parts.items()
            if (role, name) in component_params
        }
        estimator = ComposedEstimator(**parts, **params)
        start = time.perf_counter()
        try:
            with _time_limit(time_limit), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                estimator.fit(X, Y)
                scores = estimator.decision_function(X)
        except _Timeout:
            result = ("hang", f"over {time_limit} s", None, None)
        except (CapabilityError, ValueError) as exc:
            message = str(exc)
            named = any(name in message for role_name in parts.items() for name in part_names(*role_name))
            result = ("refused" if named else "unnamed", f"{type(exc).__name__}: {message}", None, None)
        except Exception as exc:  # noqa: BLE001 -- a raw exception is what the matrix exists to count
            result = ("raw", f"{type(exc).__name__}: {exc}", None, None)
        else:
            certificates = estimator.step_certificates_
            if not all(c.converged for c in certificates) or not np.all(np.isfinite(scores)):
                result = ("uncertified", f"certificate {estimator.certificate_}", scores, estimator)
            else:
                result = ("fitted", "", scores, estimator)
        cache[combo] = result + (time.perf_counter() - start,)
        return cache[combo]

    outcomes = []
    for combo in itertools.product(*(names[role] for role in ROLES)):
        outcome, detail, scores, estimator, seconds = run(combo)
        if outcome == "fitted":
            for index, role in enumerate(ROLES):
                if role == "solver" or combo[index] == DEFAULT_PARTS[role]:
                    continue
                swapped = list(combo)
                swapped[index] = DEFAULT_PARTS[role]
                other, _, other_scores, other_estimator, _ = run(tuple(swapped))
                if (
                    other == "fitted"
                    and other_scores.shape == scores.shape
                    and np.array_equal(other_scores, scores)
                    and not declared_no_op(estimator, other_estimator)
                ):
                    outcome, detail = "ignored", f"the {role} {combo[index]!r} did not change the decision values"
                    break
        outcomes.append(CompositionOutcome(combo, outcome, detail, seconds))
    return outcomes


def summarize(outcomes) -> dict:
    """Count the outcomes and list the failures' details.

    Parameters
    ----------
    outcomes : iterable of CompositionOutcome
        What :func:`composition_matrix` returned.

    Returns
    -------
    dict
        ``"counts"`` by outcome (every name of :data:`OUTCOMES`, zeros included),
        ``"total"``, ``"failures"`` (parts, outcome and the first 300 characters of the
        detail of each outcome other than fitted and refused) and ``"seconds"``.
    """
    counts = collections.Counter(o.outcome for o in outcomes)
    failures = [o for o in outcomes if o.outcome not in ("fitted", "refused")]
    return {
        "counts": {name: counts.get(name, 0) for name in OUTCOMES},
        "total": len(outcomes),
        "failures": [(o.parts, o.outcome, o.detail[:300]) for o in failures],
        "seconds": float(sum(o.seconds for o in outcomes)),
    }
