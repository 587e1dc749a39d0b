"""The warnings and errors of multilabel_core, in one leaf module.

Every public warning and exception class of the core is defined here, and this module imports
nothing of the package, so any module can import them at its top without an import cycle (the
solvers, the certificates and the validation helpers all warn with :class:`ConvergenceWarning`;
before this module it lived beside the solvers and the others reached it lazily).  The classes
are also importable from where they were first defined (``multilabel_core.solvers``,
``multilabel_core.estimator``, ``multilabel_core.base``, ``multilabel_core.plugins``, ...).

With scikit-learn installed, :class:`ConvergenceWarning` and :class:`NotFittedError` subclass
scikit-learn's classes of the same names, so filters and ``except`` clauses written for
scikit-learn catch ours too; without it they fall back to the built-in bases.
"""

from __future__ import annotations

import warnings

try:
    from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning
    from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

    _CONVERGENCE_BASES: tuple[type, ...] = (_SklearnConvergenceWarning,)
    _NOT_FITTED_BASES: tuple[type, ...] = (_SklearnNotFittedError,)
except ImportError:  # scikit-learn is optional
    _CONVERGENCE_BASES = (UserWarning,)
    _NOT_FITTED_BASES = (ValueError, AttributeError)

__all__ = [
    "CapabilityError",
    "ConfigMismatchError",
    "ConstantLabelWarning",
    "ConvergenceWarning",
    "DataFormatError",
    "DuplicateRecordsWarning",
    "FeatureScaleWarning",
    "ModelVersionWarning",
    "NotFittedError",
    "PluginError",
    "PluginWarning",
    "SearchError",
    "StoreLockedError",
    "ThresholdWarning",
    "warn_not_converged",
]


# -- fitting ----------------------------------------------------------------------------------


class ConvergenceWarning(*_CONVERGENCE_BASES):
    """A solver stopped (iteration limit, failed line search) before meeting its tolerance.

    A subclass of :class:`sklearn.exceptions.ConvergenceWarning` when scikit-learn is
    installed, so filters written for scikit-learn catch it too.
    """


def warn_not_converged(solver: str, reason: str) -> None:
    """Warn with :class:`ConvergenceWarning` that ``solver`` stopped short, for ``reason``, and what to try.

    Parameters
    ----------
    solver : str
        The solver's name, as the message shows it.
    reason : str
        Why it stopped, e.g. ``"1000 iterations"``.
    """
    warnings.warn(
        f"{solver} did not converge: {reason}. Increase max_iter, loosen tol, or scale the features.",
        ConvergenceWarning,
        stacklevel=3,
    )


class NotFittedError(*_NOT_FITTED_BASES):
    """A method that needs a fitted estimator was called before ``fit``.

    A ValueError and an AttributeError, and a subclass of
    :class:`sklearn.exceptions.NotFittedError` when scikit-learn is installed.
    """


class CapabilityError(TypeError):
    """A solver was given a part that lacks a method the solver needs, or a part it would ignore."""


class ConstantLabelWarning(UserWarning):
    """Some label columns take one value on the training rows: predicted at that value, not learned.

    Issued once per ``fit``, with the number of such labels and their indices (and names when
    Y was a data frame); the fitted ``constant_labels_`` holds them.
    """


class FeatureScaleWarning(UserWarning):
    """Features are fitted as given although their scales lie far apart.

    :func:`multilabel_core.preprocessed.badly_scaled` decides it; the commands issue it.
    """


class ThresholdWarning(UserWarning):
    """Some out-of-fold scores could not be computed (a label constant in an inner fold's training rows)."""


# -- plugins ----------------------------------------------------------------------------------


class PluginError(ValueError):
    """Plugins contradict each other (a name claimed twice) or break the register contract."""


class PluginWarning(UserWarning):
    """A plugin could not be used (it failed to import, or one of its hooks raised)."""


# -- data and model files -----------------------------------------------------------------------


class DataFormatError(ValueError):
    """A malformed data file; the message reads ``PATH, line N: REASON``.

    ``path``, ``line`` (1-based, or None when the problem is the file as a whole) and
    ``reason`` are kept as attributes for programs that want them separately.

    Parameters
    ----------
    path : str or path-like
        The file.
    line : int or None
        The 1-based line, or None when the problem is the file as a whole.
    reason : str
        What is wrong.
    """

    def __init__(self, path, line: int | None, reason: str):
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = self.path if line is None else f"{self.path}, line {line}"
        super().__init__(f"{where}: {reason}")


class ModelVersionWarning(UserWarning):
    """A model file was written by a different version of multilabel_core."""


# -- experiments ------------------------------------------------------------------------------


class SearchError(RuntimeError):
    """No grid point could be fitted and scored in the inner search.

    ``entries`` is the search record (every point with its error), kept for the results.

    Parameters
    ----------
    message : str
        The error's message.
    entries : list of dict
        The search record, one entry per grid point.
    """

    def __init__(self, message: str, entries: list[dict]):
        super().__init__(message)
        self.entries = entries


class ConfigMismatchError(ValueError):
    """A store folder holds a run with another configuration."""


class StoreLockedError(OSError):
    """Another run holds the store folder's lock; the message names it (pid, host, start time, command)."""


class DuplicateRecordsWarning(UserWarning):
    """A store held more than one record of one (method, dataset, split); the first of each was kept."""
