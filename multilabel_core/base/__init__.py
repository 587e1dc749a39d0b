"""The interfaces a method is composed of.

Each base class is small: its methods are *capabilities*.  A solver declares the
capabilities it needs (:attr:`Solver.requires`) and checks them before it runs, so a
composition that cannot work fails at once with an error naming the missing method.
"""

from .kernel import Kernel
from .loss import Loss
from .regularizer import Regularizer
from .relation import LabelRelation
from .solver import (
    PART_ROLES,
    CapabilityError,
    Fit,
    Problem,
    RelationState,
    Solution,
    Solver,
    WarmState,
    undeclared_state,
    unread_state,
    warm_state_of,
)
from .threshold import Threshold

__all__ = [
    "PART_ROLES",
    "CapabilityError",
    "Fit",
    "Kernel",
    "LabelRelation",
    "Loss",
    "Problem",
    "Regularizer",
    "RelationState",
    "Solution",
    "Solver",
    "Threshold",
    "WarmState",
    "undeclared_state",
    "unread_state",
    "warm_state_of",
]
