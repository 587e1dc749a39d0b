"""What a plugin registers: methods, components and datasets.

Plugins hand these records to the ``register`` callback their hooks receive
(:mod:`multilabel_core.hookspecs`); the plugin manager (:mod:`multilabel_core.plugins`)
fills in ``plugin`` with the registering plugin's name.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import attrs

COMPONENT_KINDS = ("loss", "regularizer", "relation", "kernel", "solver")

#: The value of ``MethodSpec.parts["solver"]`` for a method that solves its problem with its own code
#: (a closed form, or another library) instead of a registered solver: honest, and accepted by the
#: conformance check, which otherwise requires every part to be a registered component.
OWN_SOLVER = "own"


def _lower_name(instance, attribute, value):
    if not value or value != value.lower() or not value.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"{attribute.name} must be a non-empty lower-case identifier, got {value!r}")


@attrs.frozen
class MethodSpec:
    """A registered method.

    Attributes
    ----------
    name : lower-case name used by :func:`multilabel_core.make_method` and the CLI.
    estimator : the scikit-learn compatible estimator class.
    citation : the paper the method comes from (one line).
    parts : the parts it composes, role -> component name
        (e.g. ``{"loss": "squared_hinge", "regularizer": "frobenius", ...}``); ``"solver": "own"``
        (:data:`OWN_SOLVER`) for a method that brings its own solver.
    param_grid : default hyper-parameter grid for the experiment runner.
    description : one line for ``mlcore methods``.
    plugin : name of the plugin that registered it (set by the plugin manager).
    """

    name: str = attrs.field(validator=_lower_name)
    estimator: type = attrs.field(validator=attrs.validators.instance_of(type))
    citation: str = attrs.field(validator=attrs.validators.instance_of(str))
    parts: Mapping[str, str] = attrs.field(factory=dict, converter=dict)
    param_grid: Mapping[str, list] = attrs.field(factory=dict, converter=dict)
    description: str = ""
    plugin: str | None = None


@attrs.frozen
class ComponentSpec:
    """A registered component: ``factory(**params)`` builds it."""

    kind: str = attrs.field(validator=attrs.validators.in_(COMPONENT_KINDS))
    name: str = attrs.field(validator=_lower_name)
    factory: Callable[..., Any] = attrs.field(validator=attrs.validators.is_callable())
    description: str = ""
    plugin: str | None = None


@attrs.frozen
class DatasetSpec:
    """A dataset :func:`multilabel_core.datasets.fetch_dataset` can download.

    ``files`` maps each file name to ``(url, sha256)``; ``format`` is "mulan"
    (``NAME.arff`` + ``NAME.xml``), "meka" or "libsvm".  ``n_labels`` is needed by the
    LibSVM format only.
    """

    name: str = attrs.field(validator=_lower_name)
    files: Mapping[str, tuple[str, str]] = attrs.field(converter=dict)
    format: str = attrs.field(default="mulan", validator=attrs.validators.in_(("mulan", "meka", "libsvm")))
    citation: str = ""
    n_labels: int | None = None
    plugin: str | None = None
