"""The warning a solver issues when it stops before its stopping rule is met."""

from __future__ import annotations

import warnings

try:
    from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning
except ImportError:  # scikit-learn is optional
    _SklearnConvergenceWarning = UserWarning


class ConvergenceWarning(_SklearnConvergenceWarning):
    """A solver stopped (iteration limit, failed line search) before meeting its tolerance.

    A subclass of :class:`sklearn.exceptions.ConvergenceWarning` when scikit-learn is
    installed, so filters written for scikit-learn catch it too.
    """


def warn_not_converged(solver: str, reason: str) -> None:
    warnings.warn(
        f"{solver} did not converge: {reason}. Increase max_iter, loosen tol, or scale the features.",
        ConvergenceWarning,
        stacklevel=3,
    )
