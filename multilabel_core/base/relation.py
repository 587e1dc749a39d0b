"""The :class:`LabelRelation` interface: the label-side state of a method."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class LabelRelation(ABC):
    """Base class of a label relation, e.g. the label covariance Omega of MLRL.

    Required capabilities
    ---------------------
    initial(n_labels) -> ndarray (L, L)
        The relation before any fit (MLRL: I / m).
    update(gram) -> ndarray (L, L)
        The relation given ``gram = W^T W`` (L, L), the closed-form step of the
        alternating methods.  Working from the Gram matrix lets kernel methods update
        without forming ``W`` (MLRL section 2.2).
    """

    #: False for fixed relations (Omega = I): alternating solvers then stop after one step.
    learned: bool = True

    @abstractmethod
    def initial(self, n_labels: int) -> np.ndarray:
        """See the class docstring."""

    @abstractmethod
    def update(self, gram: np.ndarray) -> np.ndarray:
        """See the class docstring."""
