"""The :class:`Solver` interface and the :class:`Problem` it solves."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import attrs
import numpy as np

from ..certificate import Certificate
from .kernel import Kernel
from .loss import Loss
from .regularizer import Regularizer
from .relation import LabelRelation


class CapabilityError(TypeError):
    """A solver was given a part that lacks a method the solver needs."""


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
        return self.Y.shape[0]

    @property
    def n_labels(self) -> int:
        return self.Y.shape[1]


@attrs.frozen(eq=False)
class Solution:
    """What a solver returns beside its certificate.

    ``coef`` is the (d, L) primal W for feature solvers, or None for kernel solvers,
    which return dual variables ``dual_coef`` (n, L) instead; ``intercept`` is (L,).
    ``relation`` is the final label relation (L, L) for alternating solvers.  ``dual``
    holds the solver's own dual variables when they differ from ``dual_coef`` (SMO:
    alpha, while ``dual_coef = (alpha * Y) M``); a warm start of that solver continues
    from them exactly, without recovering them from ``dual_coef``.
    """

    coef: np.ndarray | None
    intercept: np.ndarray
    dual_coef: np.ndarray | None = None
    relation: np.ndarray | None = None
    dual: np.ndarray | None = None


class Solver(ABC):
    """Base class of a solver.

    ``requires`` maps a part's role in :class:`Problem` ("loss", "regularizer",
    "relation", "kernel") to the names of the capabilities the solver calls on it.
    Method names must be callables of the part; other names (e.g. ``"smooth"``,
    ``"linear"``) must be true attributes.  :meth:`check` raises
    :class:`CapabilityError` naming the first one missing, before any numerical work.
    """

    requires: ClassVar[dict[str, tuple[str, ...]]] = {}

    def check(self, problem: Problem) -> None:
        for role, names in self.requires.items():
            part = getattr(problem, role)
            for name in names:
                attr = getattr(part, name, None)
                if attr is None or attr is False:
                    raise CapabilityError(
                        f"{type(self).__name__} requires {role}.{name}, which "
                        f"{type(part).__name__} does not provide"
                    )

    @abstractmethod
    def solve(self, problem: Problem, warm_start: Solution | None = None) -> tuple[Solution, Certificate]:
        """Solve ``problem`` (from ``warm_start`` when given); return the solution and its certificate."""
