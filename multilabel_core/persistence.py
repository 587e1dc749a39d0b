"""Saving fitted estimators to disk and loading them back (joblib).

A model file is a joblib pickle of one dict::

    {"format": "multilabel_core.model", "multilabel_core": <version that wrote it>,
     "method": <registered method name, or None>, "estimator": <the estimator>}

The header lets :func:`load_model` refuse files that are not model files and warn when
the file was written by another version of multilabel_core, whose estimators may hold
different attributes.  Like every pickle, a model file can run code when loaded: load
only files you trust.
"""

from __future__ import annotations

import os
import warnings

import joblib

from . import __version__
from .plugins import list_methods

__all__ = ["FORMAT", "ModelVersionWarning", "load_model", "save_model"]

FORMAT = "multilabel_core.model"


class ModelVersionWarning(UserWarning):
    """A model file was written by a different version of multilabel_core."""


def save_model(estimator, path, *, method: str | None = None) -> str:
    """Write ``estimator`` (usually fitted) to ``path``; return the path as a string.

    Any picklable estimator can be saved (a Pipeline ending in a method included).
    ``method`` is the method name recorded in the header; by default, the name under
    which ``estimator``'s class is registered, or None when it is not registered.
    """
    path = os.fspath(path)
    if method is None:
        method = next((spec.name for spec in list_methods() if spec.estimator is type(estimator)), None)
    header = {"format": FORMAT, "multilabel_core": __version__, "method": method}
    joblib.dump({**header, "estimator": estimator}, path)
    return path


def load_model(path):
    """The estimator saved at ``path`` by :func:`save_model`.

    ValueError when the file is missing or not a model file (or refers to code that is
    not installed, such as a plugin that has been removed); a
    :class:`ModelVersionWarning` when it was written by another multilabel_core version.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such model file")
    try:
        content = joblib.load(path)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{path}: the model refers to code that is not installed ({exc})") from exc
    except Exception as exc:  # whatever unpickling raises on a file that is not a pickle
        raise ValueError(f"{path} is not a multilabel_core model file ({type(exc).__name__}: {exc})") from exc
    if not isinstance(content, dict) or content.get("format") != FORMAT or "estimator" not in content:
        raise ValueError(f"{path} is not a multilabel_core model file (no {FORMAT!r} header)")
    if content.get("multilabel_core") != __version__:
        warnings.warn(
            f"{path} was written by multilabel_core {content.get('multilabel_core')} "
            f"(method {content.get('method')!r}) and is loaded by {__version__}; refit it if predictions look wrong",
            ModelVersionWarning,
            stacklevel=2,
        )
    return content["estimator"]
