"""What a plugin registers: methods, components and datasets.

Plugins hand these records to the ``register`` callback their hooks receive
(:mod:`multilabel_core.hookspecs`); the plugin manager (:mod:`multilabel_core.plugins`)
fills in ``plugin`` with the registering plugin's name.
"""

from __future__ import annotations

import collections.abc
import math
import numbers
import re
from typing import Any, Callable, Mapping

import attrs

COMPONENT_KINDS = ("loss", "regularizer", "relation", "kernel", "solver", "threshold")

#: The value of ``MethodSpec.parts["solver"]`` for a method that solves its problem with its own code
#: (a closed form, or another library) instead of a registered solver: honest, and accepted by the
#: conformance check, which otherwise requires every part to be a registered component.
OWN_SOLVER = "own"


def _lower_name(instance, attribute, value):
    if not value or value != value.lower() or not value.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"{attribute.name} must be a non-empty lower-case identifier, got {value!r}")


@attrs.frozen
class MethodSpec:
    """Describe a registered method.

    Parameters
    ----------
    name : str
        Lower-case name used by :func:`multilabel_core.make_method` and the CLI.
    estimator : type
        The scikit-learn compatible estimator class.
    citation : str
        The paper the method comes from (one line).
    parts : mapping of str to str, optional
        The parts it composes, role -> component name
        (e.g. ``{"loss": "squared_hinge", "regularizer": "frobenius", ...}``); ``"solver": "own"``
        (:data:`OWN_SOLVER`) for a method that brings its own solver.  Empty by default.
    param_grid : mapping of str to list, optional
        Default hyper-parameter grid for the experiment runner.  Empty by default.
    description : str, default=""
        One line for ``mlcore methods``.
    plugin : str or None, default=None
        Name of the plugin that registered it (set by the plugin manager).

    Raises
    ------
    ValueError
        If ``name`` is not a lower-case name.
    TypeError
        If ``estimator`` is not a class or ``citation`` not a string.
    """

    name: str = attrs.field(validator=_lower_name)
    estimator: type = attrs.field(validator=attrs.validators.instance_of(type))
    citation: str = attrs.field(validator=attrs.validators.instance_of(str))
    parts: Mapping[str, str] = attrs.field(factory=dict, converter=dict)
    param_grid: Mapping[str, list] = attrs.field(factory=dict, converter=dict)
    description: str = ""
    plugin: str | None = None


def _auto_order(instance, attribute, value):
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{attribute.name} must be a finite number or None, got {value!r}")
    if instance.kind != "solver":
        raise ValueError(f"{attribute.name} orders solvers for solver='auto'; a {instance.kind} has none")


@attrs.frozen
class ComponentSpec:
    """Describe a registered component: ``factory(**params)`` builds it.

    Parameters
    ----------
    kind : str
        One of :data:`COMPONENT_KINDS` ("loss", "regularizer", "relation", "kernel", "solver", "threshold").
    name : str
        Lower-case name the component is made by (:func:`multilabel_core.make_component`).
    factory : callable
        ``factory(**params)`` returns the component (usually the attrs class itself).
    description : str, default=""
        One line for listings.
    plugin : str or None, default=None
        Name of the plugin that registered it (set by the plugin manager).
    auto_order : float or None, default=None
        Solvers only, keyword-only: where ``solver="auto"`` tries this solver, lower first
        (:func:`multilabel_core.composition.select_solver`); ``None`` keeps it out of the automatic
        choice (it is then used only when named).  The core's order puts the fastest first for
        what each accepts: ``cd`` 10, ``smo`` 20, ``irwls`` 30, ``lbfgs`` 40, ``alternating`` 50.
    """

    kind: str = attrs.field(validator=attrs.validators.in_(COMPONENT_KINDS))
    name: str = attrs.field(validator=_lower_name)
    factory: Callable[..., Any] = attrs.field(validator=attrs.validators.is_callable())
    description: str = ""
    plugin: str | None = None
    auto_order: float | None = attrs.field(default=None, kw_only=True, validator=_auto_order)


_IDENTIFIER = re.compile(r"[a-z0-9_-]+")


def _optional_count(instance, attribute, value):
    """None, or a positive integer (not a bool)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1):
        raise ValueError(f"{attribute.name} must be a positive integer or None, got {value!r}")


def _optional_int(value):
    """Integral values (numpy's too) as int; anything else unchanged, for the validator to judge."""
    return int(value) if isinstance(value, numbers.Integral) and not isinstance(value, bool) else value


def _optional_float(value):
    return float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else value


def _optional_cardinality(instance, attribute, value):
    if value is not None and (not isinstance(value, float) or not math.isfinite(value) or value < 0):
        raise ValueError(f"{attribute.name} must be a finite number >= 0 or None, got {value!r}")


def _optional_bool(instance, attribute, value):
    if value is not None and not isinstance(value, bool):
        raise ValueError(f"{attribute.name} must be True, False or None, got {value!r}")


def _optional_name(instance, attribute, value):
    if value is not None:
        if not isinstance(value, str):
            raise ValueError(f"{attribute.name} must be a dataset name (str) or None, got {value!r}")
        _lower_name(instance, attribute, value)


def _mapping_as_dict(value):
    """A mapping as a plain dict; anything else unchanged, for the validator to judge."""
    return dict(value) if isinstance(value, collections.abc.Mapping) else value


def _split_names(instance, attribute, value):
    """Role -> dataset name, both lower-case identifiers."""
    if not isinstance(value, dict):
        raise ValueError(f"{attribute.name} must be a mapping role -> dataset name, got {value!r}")
    for role, name in value.items():
        for text in (role, name):
            if not isinstance(text, str) or not text or text != text.lower() or not _IDENTIFIER.fullmatch(text):
                raise ValueError(
                    f"{attribute.name} maps a role to a dataset name, both lower-case identifiers; "
                    f"got {role!r}: {name!r}"
                )


@attrs.frozen
class DatasetSpec:
    """Describe a dataset :func:`multilabel_core.datasets.fetch_dataset` can download.

    The fields after ``plugin`` describe the data, for listings
    (:func:`multilabel_core.datasets.known_datasets`, ``mlcore datasets``) and checks; they are
    optional and keyword-only, so records made before they existed stay valid.  Every field is
    checked when the record is made: a value of the wrong kind is a ValueError naming the field.

    Parameters
    ----------
    name : str
        Lower-case identifier, used by ``fetch_dataset(name)`` and ``load_dataset(name)``.
    files : mapping of str to tuple of (str, str)
        File name (the name it is cached under) -> ``(url, sha256)``.
    format : {"mulan", "meka", "libsvm"}, default="mulan"
        "mulan" (``NAME.arff`` + ``NAME.xml``), "meka" or "libsvm".
    citation : str, default=""
        Where the data comes from (one line).
    n_labels : int or None, default=None
        Number of labels L.  The LibSVM reader needs it (a file cannot show that its last
        labels are never relevant); the ARFF readers take it from the file.
    plugin : str or None, default=None
        Name of the plugin that registered it (set by the plugin manager).
    n_samples : int or None, default=None
        Number of examples n.
    n_features : int or None, default=None
        Width d of ``X`` as ``fetch_dataset`` returns it: nominal attributes one-hot
        encoded, a ``{0,1}`` one as one column (flags: 19 attributes, 46 columns).  Given to the
        LibSVM reader like ``n_labels``.
    label_cardinality : float or None, default=None
        LCard, the mean number of relevant labels per example (at most ``n_labels``).
    sparse : bool or None, default=None
        Whether the file stores sparse rows (``X`` then comes back CSR by default).
    splits : mapping of str to str, optional
        The registered datasets that hold this one's standard split, role -> name, e.g.
        ``{"train": "emotions-train", "test": "emotions-test"}``.  Empty by default.
    split_of : str or None, default=None
        For such a part, the name of the whole dataset it is a part of (a part has no
        ``splits`` of its own).
    """

    name: str = attrs.field(validator=_lower_name)
    files: Mapping[str, tuple[str, str]] = attrs.field(converter=dict)
    format: str = attrs.field(default="mulan", validator=attrs.validators.in_(("mulan", "meka", "libsvm")))
    citation: str = ""
    n_labels: int | None = attrs.field(default=None, converter=_optional_int, validator=_optional_count)
    plugin: str | None = None
    n_samples: int | None = attrs.field(default=None, kw_only=True, converter=_optional_int, validator=_optional_count)
    n_features: int | None = attrs.field(default=None, kw_only=True, converter=_optional_int, validator=_optional_count)
    label_cardinality: float | None = attrs.field(
        default=None, kw_only=True, converter=_optional_float, validator=_optional_cardinality
    )
    sparse: bool | None = attrs.field(default=None, kw_only=True, validator=_optional_bool)
    splits: Mapping[str, str] = attrs.field(
        factory=dict, kw_only=True, converter=_mapping_as_dict, validator=_split_names
    )
    split_of: str | None = attrs.field(default=None, kw_only=True, validator=_optional_name)

    def __attrs_post_init__(self):
        if self.label_cardinality is not None and self.n_labels is not None and self.label_cardinality > self.n_labels:
            raise ValueError(
                f"dataset {self.name!r}: label_cardinality {self.label_cardinality} exceeds n_labels {self.n_labels}"
            )
        if self.name in self.splits.values() or self.split_of == self.name:
            raise ValueError(f"dataset {self.name!r} cannot be a split of itself (splits / split_of)")
        if self.splits and self.split_of is not None:
            raise ValueError(
                f"dataset {self.name!r} is a part of {self.split_of!r}; only a whole dataset has splits"
            )
