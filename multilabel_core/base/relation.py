"""The :class:`LabelRelation` interface: the label-side state of a method."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class LabelRelation(ABC):
    """Base class of a label relation, e.g. the label covariance Omega of MLRL.

    Methods
    -------
    initial(n_labels)
        Required.  The ``(L, L)`` relation before any fit (MLRL: I / m).
    update(gram)
        Required.  The ``(L, L)`` relation given ``gram = W^T W`` (L, L), the closed-form
        step of the alternating methods.  Working from the Gram matrix lets kernel methods
        update without forming ``W`` (Zhang & Yeung, *Multi-Label Relationship Learning*,
        section 2.2).
    feed(problem)
        Optional.  The :class:`Problem` a generic solver solves instead, for a fixed relation that acts before
        the model step (LIEML's label enhancement: the enhanced labels as the targets).  Same
        rows and kernel (prediction is the fitted model's as usual); the returned problem's
        relation is what the solver then sees (usually :class:`Independent`).  A composing
        estimator feeds the problem only when the chosen solver does not read the relation's
        ``state`` itself.
    """

    #: False for fixed relations (Omega = I): alternating solvers then stop after one step.
    learned: bool = True
    #: The capabilities through which this relation's own information reaches a model (the concept
    #: network's co-occurrence graph: ``("graph",)``).  A solver must read each of them (list it in its
    #: ``requires`` or ``consumes``) or refuse the relation; ``()`` for Omega = I, which every
    #: per-label solver realises by solving the labels apart.
    state: tuple[str, ...] = ()

    @abstractmethod
    def initial(self, n_labels: int) -> np.ndarray:
        """Give the label relation an alternating fit starts from.

        Parameters
        ----------
        n_labels : int
            L, the number of labels.

        Returns
        -------
        ndarray of shape (L, L)
            The starting relation (e.g. Omega = I / L for a learned covariance).
        """

    @abstractmethod
    def update(self, gram: np.ndarray) -> np.ndarray:
        """Compute the relation that minimises the objective for the current weights.

        Parameters
        ----------
        gram : ndarray of shape (L, L)
            W^T W (or its kernel form) of the weights the model step just solved for.

        Returns
        -------
        ndarray of shape (L, L)
            The relation of the next step: for a learned covariance the closed form
            (W^T W)^(1/2) / tr((W^T W)^(1/2)) of Zhang & Yeung, *Multi-Label Relationship
            Learning* (section 2.2, problem 11).
        """
