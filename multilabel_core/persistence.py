"""Saving fitted estimators to disk and loading them back, without running code from the file.

A model file (suffix :data:`MODEL_SUFFIX`, ``.mlcore``) is a zip archive of two members:

``manifest.json``
    ``{"format": "multilabel_core.model", "format_version": 1, "multilabel_core": <version
    that wrote it>, "method": <registered method name, or null>, "estimator": <module.Class>,
    "params": <the estimator's get_params(deep=False), for people reading the file>,
    "skops": <version of skops that wrote the payload>, "data": <the name of the training data, or
    null>}``.  ``data`` is optional (files written before it existed have none; a reader that does
    not know it ignores it): ``mlcore predict`` reads it (:func:`model_manifest`) to warn when it
    scores the rows the model was fitted on.
``estimator.skops``
    the estimator in skops' format (:func:`skops.io.dumps`): a tree of plain data, arrays in
    ``.npy`` (no pickle) and the names of the classes to rebuild.

:func:`load_model` reads the manifest first and refuses (ValueError naming the file and the
problem) anything that is not a model file of a format version it knows before it looks at the
payload.  It then lists the classes the payload names (:func:`skops.io.get_untrusted_types`,
which reads names and builds nothing) and refuses the file unless every one is trusted:
:func:`trusted_types` is the explicit list -- every registered method's estimator class, every
registered component class, and the classes plugins declare through the
``register_trusted_types`` hook (the core declares its Certificate, Solution and Fit there),
on top of the numpy, scipy and scikit-learn types that skops trusts by default.  Only then is the
estimator rebuilt (:func:`skops.io.load`): instances of trusted classes get their attributes
set, no constructor or reducer named by the file is called.

What the file holds is checked against what it claims, each refusal one ValueError:

* **Its size, before anything is inflated.**  The archive's end record and central directory
  are read first (at most two members, a directory of at most 64 KiB); a member may inflate to
  at most ``max_bytes`` (:data:`MAX_PAYLOAD_BYTES`) and to at most :data:`MAX_INFLATION_RATIO`
  times its compressed size (any ratio up to 1 MiB).  The declared sizes are not trusted: the
  payload is inflated in 1 MiB steps into one buffer of the declared size, and a member that
  inflates past it is refused, so memory never exceeds the bound the file's real compressed
  size allows.  The payload (itself a zip, as skops writes it) must be tiled by its members,
  all stored and all named by the schema: no padding, no member the model does not read.
* **Its labels.**  The manifest's ``estimator`` must name the payload's root class (read from
  the payload's schema, before anything is built), and its ``method`` a registered method whose
  estimator class is that class, a subclass of it, or a base it was composed from.
* **Its state.**  Every multi-label estimator in the rebuilt object has exactly its class's
  constructor parameters (which its own ``_validate_params`` accepts) and its fitted attributes
  are checked against the state its class declares (:func:`declared_state`): type, dtype, and a
  shape consistent with ``n_features_in_`` (d), ``n_labels_`` (L) and the other attributes.

Pickle (joblib) files can run any code while they are read, so they are written only on request
(``save_model(..., format="joblib")``) and read only with ``load_model(..., trusted=True)``; a
pickle given to :func:`load_model` without it is refused from its first bytes, never unpickled.
"""

from __future__ import annotations

import functools
import inspect
import io
import json
import math
import mmap
import numbers
import os
import pickle
import re
import struct
import types
import uuid
import warnings
import zipfile
from importlib.metadata import version as _distribution_version
from typing import Iterable

import attrs
import numpy as np
import scipy.sparse as sp

from . import __version__
from .exceptions import ModelVersionWarning
from .plugins import call_hookimpl, get_method, get_plugin_manager, list_components, list_methods
from .validation import check_byte_cap

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MAX_INFLATION_RATIO",
    "MAX_PAYLOAD_BYTES",
    "MODEL_SUFFIX",
    "ModelVersionWarning",
    "declared_state",
    "load_model",
    "model_manifest",
    "save_model",
    "trusted_types",
]

FORMAT = "multilabel_core.model"
#: The version of the archive layout and manifest; a file of a higher version is refused.
FORMAT_VERSION = 1
MODEL_SUFFIX = ".mlcore"
FORMATS = ("mlcore", "joblib")

_MANIFEST = "manifest.json"
_PAYLOAD = "estimator.skops"
# A manifest is a few hundred bytes; the cap keeps a hostile archive from making us inflate
# gigabytes before the format check.
_MANIFEST_MAX_BYTES = 1 << 16
#: Default cap on the decompressed size of a model file's payload, in bytes (8 GiB, overridable
#: with ``load_model(..., max_bytes=...)`` or the environment variable MULTILABEL_CORE_MODEL_MAX_BYTES).
MAX_PAYLOAD_BYTES = 8 << 30
#: Default cap on how many times its compressed size a member of a model file may inflate to
#: (overridable with ``load_model(..., max_ratio=...)`` or the environment variable
#: MULTILABEL_CORE_MODEL_MAX_RATIO).  Deflate reaches about 1030:1 on a run of zeros, so a small
#: file could otherwise ask for a thousand times its size in memory before any other check;
#: arrays of a fitted model deflate by a few percent to a few times (a mostly-zero one more).
#: ``save_model`` stores a payload uncompressed rather than write a file above the ratio.
MAX_INFLATION_RATIO = 100
# Below this inflated size the ratio is not checked: a megabyte is harmless whatever it came from.
_RATIO_FLOOR = 1 << 20
# Two members take about 150 bytes of central directory; zipfile reads the whole directory
# into memory and builds an object per record, so its size is checked first.
_DIRECTORY_MAX_BYTES = 1 << 16
_CHUNK = 1 << 20
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
# What joblib writes: a raw pickle (protocol 2 to 5 starts with PROTO), or one compressed by
# zlib, gzip, bz2, xz, lzma or lz4.
_PICKLE_MAGIC = (
    b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05", b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda",
    b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"]\x00\x00", b"\x04\x22\x4d\x18",
)  # fmt: skip
# The zip format's fixed-size records (PKWARE APPNOTE 4.3): end of central directory, its
# zip64 locator and record, a local file header, a central directory header.
_END = struct.Struct("<4s4H2LH")
_END64_LOCATOR = struct.Struct("<4sLQL")
_END64 = struct.Struct("<4sQ2H2L4Q")
_LOCAL = struct.Struct("<4s5H3L2H")


class _TooLarge(Exception):
    pass


# -- the list of trusted types ----------------------------------------------------


def _type_name(cls: type) -> str:
    # skops names a class by pickle's module lookup and the bare class name; so must we.
    return f"{pickle.whichmodule(cls, cls.__name__)}.{cls.__name__}"


def _declared_types() -> list[type]:
    """Every class declared through the ``register_trusted_types`` hook, plugin by plugin."""
    hook = get_plugin_manager().hook.register_trusted_types
    return [cls for impl in hook.get_hookimpls() for cls in call_hookimpl(impl, "register_trusted_types", type)]


# A model fitted on sparse rows keeps them (X_fit_) as CSR or CSC.  skops writes them with
# scipy's save_npz (no pickle) but trusts only the abstract sparse base classes by name; the
# .npz inside the payload is bounded like the payload itself before scipy reads it.
_SPARSE_TYPES = [sp.csr_matrix, sp.csc_matrix] + [getattr(sp, name) for name in ("csr_array", "csc_array") if hasattr(sp, name)]


def _calibration_types() -> list[type]:
    # The calibration wrapper and its per-label maps: core classes that no plugin registers.
    from .calibration import CalibratedMultiLabel, IsotonicCalibration, SigmoidCalibration

    return [CalibratedMultiLabel, IsotonicCalibration, SigmoidCalibration]


def trusted_types() -> list[str]:
    """List the classes a model file may name, as sorted ``module.Class`` strings.

    Every registered method's estimator class, every registered component that is a class,
    every class declared through the ``register_trusted_types`` hook, scipy's CSR and CSC
    matrices and arrays (the training rows of a model fitted on sparse data; their structure
    is checked when loaded), and :class:`~multilabel_core.calibration.CalibratedMultiLabel`
    with its per-label maps (their fields are checked by their own validators when loaded).  skops adds its own
    defaults when loading (numpy and scipy arrays and ufuncs, scikit-learn's estimators, Python's
    builtin containers); those are not listed here.

    Returns
    -------
    list of str
        The trusted classes' ``module.Class`` names, sorted.
    """
    classes = [spec.estimator for spec in list_methods()]
    classes += [spec.factory for spec in list_components() if isinstance(spec.factory, type)]
    classes += _declared_types()
    classes += _SPARSE_TYPES
    classes += _calibration_types()
    return sorted({_type_name(cls) for cls in classes})


def _names(types: Iterable) -> list[str]:
    names = []
    for item in types:
        if isinstance(item, str):
            names.append(item)
        elif isinstance(item, type):
            names.append(_type_name(item))
        else:
            raise ValueError(f"trusted_types must hold classes or 'module.Class' strings, got {item!r}")
    return names


# -- the declared state of a fitted estimator ---------------------------------------
#
# A declaration maps a fitted attribute to what it holds, in a small language:
#
#   float[n, L]            a dense array: dtype class, then one term per axis
#   sparse float[n, d]     a CSR or CSC matrix (structure checked in full)
#   int[k] in [0, d)       an integer array whose values index an axis of length d
#   int>=1 as d            a Python or numpy integer, bound to a symbol
#   float | bool | str | dict | None | any
#   tuple[*, L]            a tuple of integers
#   list[Certificate, L]   a list, each item of the given spec, optionally of a given length
#   Certificate            an instance of a class with that name in its MRO
#   A | B                  either
#
# dtype classes: float (float32 or float64), int (any integer), bool, str (an object array of
# strings), or an exact native dtype (float64, float32, int64, int32, int8).  A term is *, a
# number, a symbol (d and L come from n_features_in_ and n_labels_; any other is bound by the
# first attribute that uses it and must agree everywhere after), an attribute holding an
# integer (``n_neighbors_``), either with ``+ k``.  A leading ``?`` marks an attribute a fitted
# estimator may lack.

_DTYPES = {
    "float": lambda dtype: dtype in (np.dtype(np.float64), np.dtype(np.float32)),
    "int": lambda dtype: dtype.kind in "iu" and dtype.isnative,
    "bool": lambda dtype: dtype == np.dtype(bool),
    "str": lambda dtype: dtype == np.dtype(object),
    **{name: (lambda dtype, exact=np.dtype(name): dtype == exact) for name in ("float64", "float32", "int64", "int32", "int8")},
}
_SCALARS = ("int", "float", "bool", "str", "dict", "None", "any")
_TOKEN = re.compile(r"\s*(>=|[\[\](),|+*]|-?\d+|[A-Za-z_][A-Za-z0-9_.]*)")


@attrs.frozen
class _Term:
    """One axis (or length): ``*``, a number, or a symbol / integer attribute plus an offset."""

    name: str | None
    offset: int = 0

    def __str__(self):
        if self.name is None:
            return "*" if self.offset < 0 else str(self.offset)
        return self.name if not self.offset else f"{self.name}+{self.offset}"


@attrs.frozen
class _Spec:
    kind: str  # a scalar name, "array", "tuple", "list", "class" or "either"
    dtype: str | None = None
    sparse: bool = False
    terms: tuple = ()
    bounds: tuple | None = None  # (low, high) terms of an index array
    low: int | None = None  # of an int scalar
    bind: str | None = None  # the symbol an int scalar binds
    item: _Spec | None = None
    options: tuple = ()
    name: str | None = None  # of a class


class _Parser:
    def __init__(self, text: str):
        self.text, self.tokens, position = text, [], 0
        while position < len(text):
            match = _TOKEN.match(text, position)
            if match is None:
                if text[position:].strip():
                    raise ValueError(f"cannot read {text[position:]!r} in the state declaration {text!r}")
                break
            self.tokens.append(match.group(1))
            position = match.end()
        self.at = 0

    def peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected=None):
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise ValueError(f"the state declaration {self.text!r} has {token!r} where {expected or 'more'} was expected")
        self.at += 1
        return token

    def spec(self) -> _Spec:
        options = [self.option()]
        while self.peek() == "|":
            self.take("|")
            options.append(self.option())
        return options[0] if len(options) == 1 else _Spec("either", options=tuple(options))

    def option(self) -> _Spec:
        token = self.take()
        sparse = token == "sparse"
        if sparse:
            token = self.take()
        if token in _DTYPES and self.peek() == "[":
            terms = self.terms("]")
            bounds = None
            if self.peek() == "in":
                self.take("in")
                self.take("[")
                low = self.term()
                self.take(",")
                high = self.term()
                self.take(")")
                bounds = (low, high)
            return _Spec("array", dtype=token, sparse=sparse, terms=terms, bounds=bounds)
        if sparse:
            raise ValueError(f"the state declaration {self.text!r} has 'sparse' before {token!r}, not an array")
        if token == "tuple":
            return _Spec("tuple", terms=self.terms("]"))
        if token == "list":
            self.take("[")
            item = self.spec()
            length = None
            if self.peek() == ",":
                self.take(",")
                length = self.term()
            self.take("]")
            return _Spec("list", item=item, terms=() if length is None else (length,))
        if token == "int":
            low = bind = None
            if self.peek() == ">=":
                self.take(">=")
                low = int(self.take())
            if self.peek() == "as":
                self.take("as")
                bind = self.take()
            return _Spec("int", low=low, bind=bind)
        if token in _SCALARS:
            return _Spec(token)
        if not token[0].isalpha():
            raise ValueError(f"the state declaration {self.text!r} has {token!r} where a type was expected")
        return _Spec("class", name=token)

    def terms(self, close: str) -> tuple:
        self.take("[")
        terms = [self.term()]
        while self.peek() == ",":
            self.take(",")
            terms.append(self.term())
        self.take(close)
        return tuple(terms)

    def term(self) -> _Term:
        token = self.take()
        if token == "*":
            return _Term(None, -1)
        if token.lstrip("-").isdigit():
            return _Term(None, int(token))
        offset = 0
        if self.peek() == "+":
            self.take("+")
            offset = int(self.take())
        return _Term(token, offset)


@functools.lru_cache(maxsize=None)
def _parse(text: str) -> _Spec:
    """The parsed declaration; ValueError naming the text when it does not parse."""
    parser = _Parser(text)
    spec = parser.spec()
    if parser.peek() is not None:
        raise ValueError(f"the state declaration {text!r} has {parser.peek()!r} after its end")
    return spec


_CERTIFICATES = "Certificate | list[Certificate | None]"
_HISTORY = "list[float] | float[*]"

#: The state the core's estimators and the bundled plugins' declare, by ``module.Class``
#: (merged along the MRO, the subclass's entry winning).  A class of any other plugin declares
#: its own in a ``fitted_state`` class attribute of the same form (:func:`declared_state`).
_STATE: dict[str, dict[str, str]] = {
    "multilabel_core.estimator.MultiLabelEstimator": {
        # d and L first: every other shape is read against them.
        "n_features_in_": "int>=1 as d",
        # L is the number of labels the method learned (fitted_labels_): the others were constant on
        # the training rows (constant_labels_); a file without fitted_labels_ learned all n_labels_.
        "n_labels_": "int>=1",
        "?fitted_labels_": "int[L] in [0, n_labels_)",
        "?constant_labels_": "dict",
        "?constant_scores_": "dict",
        "classes_": "int[2] in [0, 2)",
        "?feature_names_in_": "str[d]",
        "?threshold_": "Threshold",
        "?certificate_": _CERTIFICATES,
        "?n_iter_": "int>=0",
    },
    "multilabel_core.estimator.ComposedEstimator": {
        "?coef_": "float[d, L]",
        "?dual_coef_": "float[n, L]",
        "?X_fit_": "float[n, d] | sparse float[n, d]",
        "?kernel_": "Kernel",
        "intercept_": "float[L]",
        "step_certificates_": "list[Certificate | None]",
        "certificate_": _CERTIFICATES,
        "n_iter_": "int>=0",
        "objective_history_": _HISTORY,
        "?joint_gap_history_": "list[float]",
        "parts_": "dict",
        "solution_": "Solution",
        "_problem_C_": "float",
        "_problem_shape_": "tuple[*, L]",
        "?label_covariance_": "float[L, L]",
        "?label_correlation_": "float[L, L]",
        "solver_name_": "str",
        "fed_": "bool",
    },
    "multilabel_core.preprocessed.Preprocessed": {
        "estimator_": "MultiLabelEstimator",
        "scaler_": "any",
    },
    "multilabel_core.calibration.CalibratedMultiLabel": {
        "estimator_": "MultiLabelEstimator",
        "calibrators_": "list[SigmoidCalibration | IsotonicCalibration, L]",
        "calibration_rows_": "int[L]",
        "n_splits_": "int>=1",
    },
    # -- the bundled plugins (their own files could carry these as ``fitted_state``) --
    "multilabel_core_plugins.mlrl.estimators._PaperScaled": {"alpha_": "float[*, L]"},
    "multilabel_core_plugins.mlrl.estimators.SSMLRL": {"n_unlabeled_": "int>=0"},
    "multilabel_core_plugins.ranking.estimators._LabelRanking": {
        "objective_history_": _HISTORY,
        "?subsets_": "bool[t, d]",
        "?subset_weights_": "float[t]",
        "?feature_weights_": "float[d]",
        "?selected_features_": "int[*] in [0, d)",
        "?bound_history_": "float[*, 2] | float[0]",
    },
    "multilabel_core_plugins.concept_network.estimator.ConceptNetwork": {
        "concept_graph_": "ConceptGraph",
        "basis_": "EigenBasis",
        "learned_kernels_": "LearnedKernels",
        "site_coef_": "float[L, m]",
        "edge_coef_": "float[*, m]",  # one row per edge of concept_graph_
        "dual_": "float[n, L]",
    },
    "multilabel_core_plugins.lieml.estimator.LIEML": {
        "enhancement_": "LabelEnhancement",
        "enhanced_labels_": "float[*, L]",
        "rank_": "int>=0",
    },
    "multilabel_core_plugins.prml.estimators._Privileged": {
        "dictionary_": "float[k, d]",
        "dictionary_intercept_": "float[k]",
        "label_weights_": "float[k, L]",
        "privileged_weights_": "float[L, L] | None",
        "privileged_intercept_": "float[L] | None",
        "privileged_pool_": "bool[L, L] | None",
        "w_step_certificates_": "list[Certificate | None]",
        "d_step_certificates_": "list[Certificate | None]",
        "block_objective_history_": "float[*]",
    },
    "multilabel_core_plugins.baselines.mlknn.MLkNN": {
        "n_neighbors_": "int>=1",
        "X_fit_": "float[n, d] | sparse float[n, d]",
        "Y_fit_": "int8[n, L]",
        "prior_": "float64[L]",
        "relevant_counts_": "int[L, n_neighbors_+1]",
        "irrelevant_counts_": "int[L, n_neighbors_+1]",
        "likelihood_relevant_": "float64[L, n_neighbors_+1]",
        "likelihood_irrelevant_": "float64[L, n_neighbors_+1]",
    },
    "multilabel_core_plugins.baselines.ovr._OneVsRest": {
        "estimators_": "list[any, L]",
        "certificate_": "Certificate",
        "n_iter_": "int>=0",
    },
    "multilabel_core_plugins.baselines.chain.ClassifierChains": {
        "chains_": "list[ClassifierChain]",
        "certificate_": "Certificate",
        "n_iter_": "int>=0",
    },
    "multilabel_core_plugins.baselines.ensembles._Ensemble": {"n_iter_": "int>=0"},
    "multilabel_core_plugins.baselines.ensembles.LabelPowerset": {"powerset_": "Powerset", "n_classes_": "int>=1"},
    "multilabel_core_plugins.baselines.ensembles.RAkEL": {
        "subsets_": "list[int[*] in [0, L)]",
        "powersets_": "list[Powerset]",
        "votes_per_label_": "int[L]",
    },
    "multilabel_core_plugins.baselines.ensembles.EnsembleClassifierChains": {
        "chains_": "list[ClassifierChain]",
        "samples_": "list[int[*]]",
    },
}

#: For each class (and its subclasses), the groups of attributes one of which a fitted
#: estimator must hold in full: what it predicts with.
_PREDICTS_WITH: dict[str, tuple[tuple[str, ...], ...]] = {
    "multilabel_core.estimator.ComposedEstimator": (("coef_",), ("dual_coef_", "X_fit_", "kernel_")),
}


def declared_state(cls: type) -> dict[str, str]:
    """Return the fitted state ``cls`` declares: attribute name -> declaration, checked by :func:`load_model`.

    Merged along the MRO, base classes first (a subclass's entry replaces its base's): the
    core's declarations for :class:`~multilabel_core.MultiLabelEstimator` and
    :class:`~multilabel_core.ComposedEstimator`, the bundled plugins', and a ``fitted_state``
    dict a class may define itself -- the way a plugin declares its estimator's own attributes::

        class MyMethod(ComposedEstimator):
            fitted_state = {"scales_": "float[L]", "support_": "int[*] in [0, n)", "?extra_": "float[d, L] | None"}

    A declaration is a dtype and one term per axis for an array (``float[n, L]``; ``sparse``
    before it for a CSR/CSC matrix; ``in [0, d)`` after it for indices), or ``int>=1``,
    ``float``, ``bool``, ``str``, ``dict``, ``None``, ``any``, ``tuple[*, L]``,
    ``list[Certificate, L]``, a class name (an instance of a class of that name), or several
    joined by ``|``.  A term is ``*``, a number, ``d`` (``n_features_in_``), ``L``
    (``n_labels_``), an attribute holding an integer (``n_neighbors_+1``), or any other name,
    bound by the first attribute that uses it and held to the same value everywhere after.
    A leading ``?`` marks an attribute a fitted estimator may lack.  Attributes a class does
    not declare are checked only for what holds everywhere (valid sparse structure, attrs
    validators, no attribute hiding a method).  ``cls`` is the estimator class asked about.

    Returns
    -------
    dict of str to str
        Attribute name (without the ``?``) -> its declaration text.

    Raises
    ------
    ValueError
        Naming the class, when a declaration does not parse.
    """
    return {name: text for name, (text, _required, _spec) in _state_of(cls).items()}


@functools.lru_cache(maxsize=None)
def _state_of(cls: type) -> dict[str, tuple[str, bool, _Spec]]:
    merged: dict[str, tuple[str, bool, _Spec]] = {}
    for base in reversed(cls.__mro__):
        for source in (_STATE.get(_type_name(base), {}), vars(base).get("fitted_state") or {}):
            if not isinstance(source, dict):
                raise ValueError(f"{base.__name__}.fitted_state must be a dict of attribute name -> declaration, got {type(source).__name__}")
            for key, text in source.items():
                if not isinstance(key, str) or not isinstance(text, str):
                    raise ValueError(f"{base.__name__}.fitted_state: {key!r}: {text!r} is not a name and a declaration string")
                try:
                    spec = _parse(text)
                except ValueError as exc:
                    raise ValueError(f"{base.__name__}: fitted attribute {key.lstrip('?')}: {exc}") from None
                merged[key.lstrip("?")] = (text, not key.startswith("?"), spec)
    return merged


def _predicts_with(cls: type) -> tuple[tuple[str, ...], ...]:
    for base in cls.__mro__:
        if _type_name(base) in _PREDICTS_WITH:
            return _PREDICTS_WITH[_type_name(base)]
    return ()


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"{'an' if str(value.dtype)[0] in 'aeiou' else 'a'} {value.dtype} array of shape {value.shape}"
    if sp.issparse(value):
        return f"a {value.format} {value.dtype} matrix of shape {value.shape}"
    if value is None:
        return "None"
    if isinstance(value, str):
        return f"a str ({value[:24]!r}{'...' if len(value) > 24 else ''})"
    if isinstance(value, (bool, numbers.Number, np.bool_)):
        return f"the {type(value).__name__} {value!r}"
    if isinstance(value, (list, tuple, dict)):
        return f"a {type(value).__name__} of {len(value)} item(s)"
    return f"a {type(value).__name__}"


class _Context:
    """What a check of one estimator's state knows: the estimator and the symbols bound so far."""

    def __init__(self, estimator, symbols=None):
        self.estimator, self.symbols = estimator, dict(symbols or {})

    def copy(self) -> _Context:
        return _Context(self.estimator, self.symbols)

    def value(self, term: _Term) -> int | None:
        """The term's value when it is known (a number, a bound symbol, an integer attribute), else None."""
        if term.name is None:
            return None if term.offset < 0 else term.offset
        if term.name in self.symbols:
            return self.symbols[term.name][0] + term.offset
        if term.name.endswith("_"):
            held = vars(self.estimator).get(term.name)
            if isinstance(held, numbers.Integral) and not isinstance(held, (bool, np.bool_)):
                return int(held) + term.offset
        return None

    def unify(self, term: _Term, actual: int, source: str) -> bool:
        """Whether ``actual`` is what the term says; an unbound symbol is bound to it."""
        if term.name is None and term.offset < 0:
            return True
        expected = self.value(term)
        if expected is not None:
            return actual == expected
        if term.name is None or term.name.endswith("_") or actual - term.offset < 0:
            return False  # an integer attribute that is missing or not an integer
        self.symbols[term.name] = (actual - term.offset, source)
        return True

    def explain(self, spec: _Spec) -> str:
        """The symbols ``spec`` reads, with their values and where they came from."""
        names = []
        for term in _terms_of(spec):
            if term.name is not None and term.name not in names:
                names.append(term.name)
        known = []
        for name in names:
            if name in self.symbols:
                value, source = self.symbols[name]
                known.append(f"{name} = {value} from {source}")
            elif name.endswith("_") and self.value(_Term(name)) is not None:
                known.append(f"{name} = {self.value(_Term(name))}")
        return f" ({', '.join(known)})" if known else ""


def _terms_of(spec: _Spec):
    yield from spec.terms
    if spec.bounds:
        yield from spec.bounds
    if spec.item is not None:
        yield from _terms_of(spec.item)
    for option in spec.options:
        yield from _terms_of(option)


def _mismatch(spec: _Spec, value, context: _Context, source: str) -> str | None:
    """None when ``value`` is what ``spec`` declares (binding its new symbols), else what is wrong."""
    kind = spec.kind
    if kind == "either":
        reasons = []
        for option in spec.options:
            trial = context.copy()
            reason = _mismatch(option, value, trial, source)
            if reason is None:
                context.symbols = trial.symbols
                return None
            reasons.append((option.kind, reason))
        # The reason of the option of the value's own kind says most (a list's bad item, an array's bad axis).
        own = "list" if isinstance(value, list) else "array" if isinstance(value, np.ndarray) or sp.issparse(value) else None
        return next((reason for option_kind, reason in reasons if option_kind == own), _describe(value))
    if kind == "any" or (kind == "None" and value is None):
        return None
    if kind == "array":
        return _array_mismatch(spec, value, context, source)
    if kind == "int":
        if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)):
            return _describe(value)
        if spec.low is not None and value < spec.low:
            return f"{_describe(value)}, below {spec.low}"
        if spec.bind is not None and not context.unify(_Term(spec.bind), int(value), source):
            return _describe(value)
        return None
    if kind == "float":
        return None if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)) else _describe(value)
    if kind == "bool":
        return None if isinstance(value, (bool, np.bool_)) else _describe(value)
    if kind in ("str", "dict"):
        return None if isinstance(value, {"str": str, "dict": dict}[kind]) else _describe(value)
    if kind == "tuple":
        if not isinstance(value, tuple) or len(value) != len(spec.terms):
            return _describe(value)
        for item, term in zip(value, spec.terms):
            if not isinstance(item, numbers.Integral) or isinstance(item, (bool, np.bool_)) or not context.unify(term, int(item), source):
                return f"the tuple {value!r}"
        return None
    if kind == "list":
        if not isinstance(value, list):
            return _describe(value)
        if spec.terms and not context.unify(spec.terms[0], len(value), source):
            return _describe(value)
        for index, item in enumerate(value):
            problem = _mismatch(spec.item, item, context, f"{source}[{index}]")
            if problem is not None:
                return f"a list whose item {index} is {problem}"
        return None
    if kind == "class":
        return None if any(spec.name in (base.__name__, _type_name(base)) for base in type(value).__mro__) else _describe(value)
    return _describe(value)


def _array_mismatch(spec: _Spec, value, context: _Context, source: str) -> str | None:
    if spec.sparse:
        if not (sp.issparse(value) and value.format in ("csr", "csc")):
            return _describe(value)
    elif type(value) is not np.ndarray:
        return _describe(value)
    if not _DTYPES[spec.dtype](value.dtype):
        return _describe(value)
    if spec.dtype == "str" and not all(isinstance(item, str) for item in value.flat):
        return f"{_describe(value)} holding something other than strings"
    if value.ndim != len(spec.terms):
        return _describe(value)
    for term, length in zip(spec.terms, value.shape):
        if not context.unify(term, int(length), source):
            return _describe(value)
    if spec.bounds and value.size:
        low, high = (context.value(term) for term in spec.bounds)
        if (low is not None and value.min() < low) or (high is not None and value.max() >= high):
            return f"{_describe(value)} with values from {value.min()} to {value.max()}, outside [{low}, {high})"
    return None


def _parameter_names(cls: type) -> list[str]:
    init = vars(cls).get("__init__", cls.__init__)
    if init is object.__init__ or not callable(init):
        return []
    kinds = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return [p.name for p in inspect.signature(init).parameters.values() if p.name != "self" and p.kind not in kinds]


def _estimator_problem(where: str, estimator) -> str | None:
    """What is wrong with one multi-label estimator's parameters and declared state, or None."""
    cls = type(estimator)
    state = vars(estimator)
    label = f"the {cls.__name__}" + (f" at {where}" if where else "")
    parameters = _parameter_names(cls)
    missing = [name for name in parameters if name not in state]
    if missing:
        return f"{label} lacks its parameter(s) {', '.join(missing)}: the payload does not hold a {cls.__name__}"
    # A preset keeps its bases' parameters too (a ComposedEstimator's parts), set by their __init__.
    known = {name for base in cls.__mro__ for name in _parameter_names(base)}
    foreign = [name for name in state if name not in known and not name.endswith("_")]
    if foreign:
        return (
            f"{label} holds {', '.join(map(repr, foreign[:5]))}, neither parameters of {cls.__name__} nor fitted "
            f"attributes: the payload does not hold a {cls.__name__}"
        )
    try:
        estimator._validate_params()
    except Exception as exc:  # whatever the class's own parameter check raises
        return f"{label} has parameters its class refuses ({type(exc).__name__}: {_one_line(exc)})"
    if not any(name.endswith("_") for name in state):
        return None  # saved before fit: no state to check
    context = _Context(estimator)
    declared = _state_of(cls)
    n_labels, constant = state.get("n_labels_"), state.get("constant_labels_")
    if isinstance(n_labels, numbers.Integral) and not isinstance(n_labels, (bool, np.bool_)):
        # L, the labels the method learned: n_labels_ less those constant on the training rows.
        held = len(constant) if isinstance(constant, dict) else 0
        context.symbols["L"] = (int(n_labels) - held, "n_labels_" + (" less constant_labels_" if held else ""))
    learned = not (isinstance(state.get("fitted_labels_"), np.ndarray) and state["fitted_labels_"].size == 0)
    if not learned:
        # Every label was constant: nothing was fitted, so only the base's state is there.
        from .estimator import MultiLabelEstimator

        declared = _state_of(MultiLabelEstimator)
    for name, (text, required, spec) in declared.items():
        if name not in state:
            if required:
                return f"{label} lacks the fitted attribute {name} ({text}) that {cls.__name__} declares"
            continue
        problem = _mismatch(spec, state[name], context, name)
        if problem is not None:
            return (
                f"the fitted attribute {where}{'.' if where else ''}{name} of {label} is {problem}, "
                f"not {text}{context.explain(spec)}"
            )
    split = _label_split_problem(state)
    if split is not None:
        name, problem = split
        return f"the fitted attribute {where}{'.' if where else ''}{name} of {label} {problem}"
    groups = _predicts_with(cls) if learned else ()
    if groups and not any(all(name in state for name in group) for group in groups):
        wanted = " or ".join("(" + ", ".join(group) + ")" for group in groups)
        return f"{label} is fitted but holds none of the attribute groups it predicts with: {wanted}"
    return None


def _label_split_problem(state) -> tuple[str, str] | None:
    """``(attribute, what is wrong)`` with how ``fitted_labels_``, ``constant_labels_`` and ``constant_scores_``
    split the labels, or None: together the learned and the constant labels are each label once, a
    constant label's value is 0 or 1 and its score finite and of the sign of its value (predict agrees)."""
    fitted, constant, scores = (state.get(name) for name in ("fitted_labels_", "constant_labels_", "constant_scores_"))
    if fitted is None and constant is None and scores is None:
        return None  # saved before labels could be constant: every label learned
    for name, value, kind in (("fitted_labels_", fitted, np.ndarray), ("constant_labels_", constant, dict),
                              ("constant_scores_", scores, dict)):  # fmt: skip
        if not isinstance(value, kind):
            return name, "is missing beside the others of fitted_labels_, constant_labels_ and constant_scores_"
    keys = list(constant)
    if not all(isinstance(key, numbers.Integral) and not isinstance(key, (bool, np.bool_)) for key in keys):
        return "constant_labels_", "is not keyed by label indices"
    if set(keys) != set(scores):
        return "constant_scores_", "is not keyed by the label indices of constant_labels_"
    n_labels = int(state["n_labels_"])
    labels = np.concatenate([fitted.astype(np.int64), np.asarray(keys, dtype=np.int64)])
    if labels.size != n_labels or not np.array_equal(np.sort(labels), np.arange(n_labels)):
        return "constant_labels_", f"and fitted_labels_ do not split the n_labels_ = {n_labels} labels, each once"
    for key in keys:
        value, score = constant[key], scores[key]
        if isinstance(value, (bool, np.bool_)) or value not in (0, 1):
            return "constant_labels_", f"gives label {key} the value {value!r}, not 0 or 1"
        if isinstance(score, (bool, np.bool_)) or not isinstance(score, numbers.Real) or not math.isfinite(score):
            return "constant_scores_", f"gives label {key} the score {score!r}, not a finite float"
        if (score > 0) != bool(value):
            return "constant_scores_", f"gives label {key} of value {value} a score of the other sign ({score!r})"
    return None


# Non-data descriptors an instance attribute of the same name would hide.
_METHODS = (types.FunctionType, classmethod, staticmethod, types.BuiltinFunctionType, types.MethodDescriptorType,
            types.WrapperDescriptorType)  # fmt: skip


def _state_problem(root) -> str | None:
    """What is wrong with a rebuilt (or about to be saved) object, or None.

    Every multi-label estimator anywhere in it is checked against its class's parameters
    and declared state; everywhere, sparse matrices must be well formed, attrs instances must
    pass their validators, and no instance attribute may hide a method of its class.
    """
    from .estimator import MultiLabelEstimator

    pending, seen = [("", root)], set()
    while pending:
        where, item = pending.pop()
        if item is None or isinstance(item, (str, bytes, numbers.Number, np.bool_, type)) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, MultiLabelEstimator):
            problem = _estimator_problem(where, item)
            if problem is not None:
                return problem
        if sp.issparse(item):
            problem = _sparse_problem(item)
            if problem is not None:
                return f"the sparse matrix at {where or 'the root'} is malformed ({problem})"
            continue
        if isinstance(item, np.ndarray):
            if item.dtype == object:
                pending.extend((f"{where}.flat[{k}]", value) for k, value in enumerate(item.flat))
            continue
        prefix = f"{where}." if where else ""
        if isinstance(item, (list, tuple, set, frozenset)):
            pending.extend((f"{where}[{k}]", value) for k, value in enumerate(item))
        elif isinstance(item, dict):
            pending.extend((f"{where}[{key!r}]", value) for key, value in item.items())
        elif attrs.has(type(item)):
            try:
                attrs.validate(item)
            except Exception as exc:  # the class's own validators, on values the file set
                return f"the {type(item).__name__} at {where or 'the root'} fails its own checks ({type(exc).__name__}: {_one_line(exc)})"
            pending.extend((f"{prefix}{field.name}", getattr(item, field.name)) for field in attrs.fields(type(item)))
        elif isinstance(getattr(item, "__dict__", None), dict) and not isinstance(item, (types.ModuleType, types.FunctionType)):
            for name, value in vars(item).items():
                if isinstance(inspect.getattr_static(type(item), name, None), _METHODS):
                    return f"the {type(item).__name__} at {where or 'the root'} sets {name!r}, which would hide its class's method"
                pending.append((f"{prefix}{name}", value))
    return None


def _sparse_problem(matrix) -> str | None:
    try:
        if matrix.format in ("csr", "csc", "bsr"):
            matrix.check_format(full_check=True)
        elif matrix.format == "coo":
            rows, cols = matrix.shape
            if matrix.nnz and (matrix.row.min() < 0 or matrix.row.max() >= rows or matrix.col.min() < 0 or matrix.col.max() >= cols):
                return "an index outside its shape"
    except Exception as exc:  # scipy's own checks of the index arrays
        return f"{type(exc).__name__}: {_one_line(exc)}"
    return None


# -- saving -----------------------------------------------------------------------


def save_model(
    estimator, path, *, method: str | None = None, format: str = "mlcore", trusted_types=(), data: str | None = None
) -> str:
    """Write ``estimator`` (usually fitted) to ``path``.

    ``format="mlcore"`` (the default) writes the archive described in the module docstring,
    which :func:`load_model` reads without running code from it.  The estimator may hold only
    classes that :func:`load_model` will trust (:func:`trusted_types` plus ``trusted_types``),
    and only state that :func:`load_model` accepts (its parameters and its declared fitted
    attributes, :func:`declared_state`); anything else is a ValueError naming the classes or the
    attribute, raised before anything is written, since the file could not be loaded back.  A
    Pipeline ending in a method is fine: skops trusts scikit-learn's estimators.  The payload is
    deflated, or stored when deflating would pass :data:`MAX_INFLATION_RATIO` (a mostly-zero
    model), so that every file written loads under the default caps.

    Parameters
    ----------
    estimator : estimator
        The model to write.
    path : str or path-like
        Where to write it (through a temporary file, so a crash leaves no half model); the suffix
        is up to you (:data:`MODEL_SUFFIX` by convention).
    method : str or None, default=None
        The method name recorded in the file; None: the name under which ``estimator``'s class is
        registered, or None when it is not registered.  A given name must be registered, and its
        estimator class must be the estimator's class, a base of it, or a subclass of it (a
        ComposedEstimator of a method's parts may carry that method's name).
    format : {"mlcore", "joblib"}, default="mlcore"
        "joblib" writes a joblib pickle of ``{"format", "multilabel_core", "method", "data",
        "estimator"}`` instead: any picklable object, but loading it can run arbitrary code, so
        :func:`load_model` reads it only with ``trusted=True``.
    trusted_types : sequence of type or str, default=()
        Classes (or ``module.Class`` strings) trusted beyond :func:`trusted_types`; pass the same
        to :func:`load_model`.
    data : str or None, default=None
        The name of the data the model was fitted on (a dataset name such as ``"scene-train"``),
        recorded in the manifest for :func:`model_manifest`; None records nothing known.

    Returns
    -------
    str
        The path written, as a string.

    Raises
    ------
    ValueError
        For an unknown ``format``, a ``method`` that is not registered or does not fit the
        estimator, a ``data`` that is not a string, or an estimator :func:`load_model` would refuse.
    """
    path = os.fspath(path)
    if data is not None and not isinstance(data, str):
        raise ValueError(f"data must be the training data's name (a str) or None, got {type(data).__name__} {data!r}")
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(map(repr, FORMATS))}, got {format!r}")
    if method is None:
        method = next((spec.name for spec in list_methods() if spec.estimator is type(estimator)), None)
    elif not isinstance(method, str):
        raise ValueError(f"method must be a registered method name or None, got {method!r}")
    else:
        problem = _method_problem(method, estimator)
        if problem is not None:
            raise ValueError(f"{path}: not written: {problem}")
    if format == "joblib":
        import joblib

        header = {"format": FORMAT, "multilabel_core": __version__, "method": method, "data": data}
        _write_atomically(path, lambda handle: joblib.dump({**header, "estimator": estimator}, handle))
        return path

    import skops.io

    problem = _state_problem(estimator)
    if problem is not None:
        raise ValueError(f"{path}: not written: {problem}")
    try:
        payload = skops.io.dumps(estimator)
    except Exception as exc:  # skops refuses objects it cannot describe without pickle
        raise ValueError(
            f"{path}: {type(estimator).__name__} cannot be saved in the mlcore format "
            f"({type(exc).__name__}: {_one_line(exc)}); save_model(..., format='joblib') writes a pickle instead"
        ) from exc
    untrusted = sorted(set(skops.io.get_untrusted_types(data=payload)) - set(_trusted_names(trusted_types)))
    if untrusted:
        raise ValueError(
            f"{path}: not written: {type(estimator).__name__} holds classes that load_model does not trust: "
            f"{', '.join(untrusted)}. A plugin declares its classes through the register_trusted_types hook; "
            f"or pass them as trusted_types= to save_model and load_model"
        )
    try:
        check_payload(path, payload, MAX_PAYLOAD_BYTES, MAX_INFLATION_RATIO)
    except ValueError as exc:
        raise ValueError(f"{path}: not written: load_model would refuse it: {str(exc).removeprefix(f'{path}: ')}") from None
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "multilabel_core": __version__,
        "method": method,
        "estimator": _type_name(type(estimator)),
        "params": _json_params(estimator),
        "skops": _distribution_version("skops"),
        "data": data,
    }

    def write(handle):
        for compression in (zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED):
            handle.seek(0)
            handle.truncate()
            with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
                # The manifest first: a reader can check it before it touches the payload.
                archive.writestr(_MANIFEST, json.dumps(manifest, indent=2, sort_keys=True))
                archive.writestr(_PAYLOAD, payload, compress_type=compression)
                written = archive.getinfo(_PAYLOAD)
            if ratio_allows(written.file_size, written.compress_size, MAX_INFLATION_RATIO):
                return

    _write_atomically(path, write)
    return path


def _write_atomically(path: str, write) -> None:
    """Write through a temporary file in the same folder, so a crash never leaves half a model at ``path``."""
    # open(..., "xb") rather than mkstemp: the file gets the permissions the umask gives any new file
    temporary = f"{path}.{os.getpid()}.{uuid.uuid4().hex[:8]}.part"
    try:
        with open(temporary, "xb") as stream:
            write(stream)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _json_params(estimator) -> dict:
    """``get_params(deep=False)`` with every value JSON can hold as itself, the others as their repr."""
    get_params = getattr(estimator, "get_params", None)
    if get_params is None:
        return {}
    params = {}
    for name, value in get_params(deep=False).items():
        try:
            json.dumps(value, allow_nan=False)
            params[name] = value
        except (TypeError, ValueError):
            params[name] = repr(value)
    return params


def _method_problem(method: str, estimator) -> str | None:
    """Why ``estimator`` is not a model of the registered ``method``, or None.

    It is one when its class -- or, for a Pipeline, its last step's, or for a wrapper with an
    ``estimator`` parameter (Preprocessed), the wrapped one's -- is the method's estimator
    class, a subclass of it, or one of its bases (a ComposedEstimator given the method's parts).
    """
    try:
        registered = get_method(method).estimator
    except ValueError as exc:
        return f"method {method!r} is not registered by any installed plugin ({_one_line(exc)})"
    candidates, item = [], estimator
    for _ in range(8):  # a Pipeline in a wrapper in a Pipeline is as deep as it gets
        candidates.append(type(item))
        inner = getattr(item, "steps", None)
        if isinstance(inner, list) and inner and isinstance(inner[-1], tuple) and len(inner[-1]) == 2:
            item = inner[-1][1]
        elif "estimator" in vars(item) if hasattr(item, "__dict__") else False:
            item = vars(item).get("estimator_", vars(item)["estimator"])
        else:
            break
    if any(issubclass(cls, registered) or (issubclass(registered, cls) and cls.__module__.startswith("multilabel_core"))
           for cls in candidates):  # fmt: skip
        return None
    return (
        f"method {method!r} is a {_type_name(registered)}, but the estimator is a "
        f"{' holding a '.join(_type_name(cls) for cls in candidates)}, not one of that method"
    )


# -- loading ----------------------------------------------------------------------


def load_model(path, *, trusted: bool = False, trusted_types=(), max_bytes: int | None = None, max_ratio: float | None = None):
    """Load the estimator saved at ``path`` by :func:`save_model`.

    Parameters
    ----------
    path : str or path-like
        The model file.
    trusted : bool, default=False
        Whether the file comes from a source you trust: a joblib/pickle file (written with
        ``format="joblib"``) is then unpickled, which can run any code the file contains, and
        the classes of an mlcore file are not checked against the list (its state still is).
        Without it a pickle is refused from its first bytes, never unpickled.
    trusted_types : sequence of type or str, default=()
        Classes (or ``module.Class`` strings) trusted beyond :func:`trusted_types`.
    max_bytes : int or None, default=None
        Cap on the decompressed size of the estimator payload (None: :data:`MAX_PAYLOAD_BYTES`,
        or the environment variable MULTILABEL_CORE_MODEL_MAX_BYTES).
    max_ratio : float or None, default=None
        How many times its compressed size a member may inflate to (None:
        :data:`MAX_INFLATION_RATIO`, or MULTILABEL_CORE_MODEL_MAX_RATIO; members up to 1 MiB are
        exempt).  A member over either cap is refused with a ValueError before it is inflated,
        and one that inflates past its declared size while being read is refused then.

    Returns
    -------
    estimator
        The rebuilt estimator, its parameters and fitted state checked.

    Raises
    ------
    ValueError
        Naming the file and the problem, when the file is missing, empty, not a zip archive, a
        truncated or corrupt archive, has no or a broken manifest, is of another format or of a
        newer format version, names a method no installed plugin registers or one its payload is
        not a model of, names another class than its payload holds, holds a class that is not
        trusted (:func:`trusted_types` plus ``trusted_types``), or holds an estimator whose
        parameters or fitted state are not what its class declares (:func:`declared_state`).

    Warns
    -----
    ModelVersionWarning
        When the file was written by another multilabel_core version.

    Notes
    -----
    The payload is held once, in a buffer of its declared size; loading peaks at about three
    times the payload (the buffer, skops' reading of the arrays, the rebuilt estimator).
    """
    path = os.fspath(path)
    max_bytes = payload_cap(max_bytes)
    max_ratio = ratio_cap(max_ratio)
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such model file")
    size = os.path.getsize(path)
    # Only the first bytes and the last decide the kind of file: nothing more is read before
    # the checks, so a huge file costs no memory.
    with open(path, "rb") as stream:
        head = stream.read(8)
        if size:
            stream.seek(-1, os.SEEK_END)
        last = stream.read(1)
    if head and any(magic.startswith(head) for magic in _ZIP_MAGIC):
        raise ValueError(f"{path} is not a multilabel_core model file (truncated or corrupt zip archive: {size} bytes)")
    if not head.startswith(_ZIP_MAGIC):
        if trusted:
            return _load_pickle(path)
        if head.startswith(_PICKLE_MAGIC) or last == b".":  # pickle's STOP opcode ends every pickle
            raise ValueError(
                f"{path} is a pickle (joblib) file, not an mlcore model file: loading it could run any code "
                f"it contains, so it was not read; load it only if you trust its source, with "
                f"load_model(path, trusted=True) or mlcore predict --trust, and save it again as an mlcore file"
            )
        what = "empty" if not head else "not a zip archive"
        raise ValueError(f"{path} is not a multilabel_core model file ({what})")
    if size > max_bytes + _MANIFEST_MAX_BYTES + _CHUNK:  # a member is never much larger compressed than inflated
        raise _too_large(path, "the file", max_bytes, size)
    manifest, payload = read_archive(path, size, max_bytes, max_ratio)
    try:
        schema = check_payload(path, payload, max_bytes, max_ratio)
        estimator = _rebuild(path, manifest, payload, schema, trusted, trusted_types)
    finally:
        release_buffer(payload)
    written_by = "" if manifest["multilabel_core"] == __version__ else f" (written by multilabel_core {manifest['multilabel_core']})"
    if manifest["method"] is not None:
        problem = _method_problem(manifest["method"], estimator)
        if problem is not None:
            raise ValueError(f"{path}: {_MANIFEST} names {problem}{written_by}")
    problem = _state_problem(estimator)
    if problem is not None:
        raise ValueError(f"{path}: refused: {problem}{written_by}")
    _require_estimator(path, estimator)
    if manifest["multilabel_core"] != __version__:
        _warn_version(path, manifest["multilabel_core"], manifest["method"])
    return estimator


def payload_cap(max_bytes) -> int:
    return check_byte_cap(max_bytes, "MULTILABEL_CORE_MODEL_MAX_BYTES", MAX_PAYLOAD_BYTES)


def ratio_cap(max_ratio) -> float:
    """``max_ratio``, else the environment variable, else :data:`MAX_INFLATION_RATIO`; a number of at least 1."""
    name = "max_ratio"
    if max_ratio is None:
        text = os.environ.get("MULTILABEL_CORE_MODEL_MAX_RATIO", "")
        if not text.strip():
            return float(MAX_INFLATION_RATIO)
        name, max_ratio = "$MULTILABEL_CORE_MODEL_MAX_RATIO", text
        try:
            max_ratio = float(text)
        except ValueError:
            pass
    if isinstance(max_ratio, bool) or not isinstance(max_ratio, numbers.Real) or not math.isfinite(max_ratio) or max_ratio < 1:
        raise ValueError(f"{name} must be a finite number of at least 1 (inflated bytes per compressed byte), got {max_ratio!r}")
    return float(max_ratio)


def ratio_allows(inflated: int, compressed: int, ratio: float) -> bool:
    return inflated <= _RATIO_FLOOR or inflated <= ratio * compressed


def zip_directory(read_at, size: int) -> tuple[int, int, int, int, int] | None:
    """(entries, directory offset, directory size, end record offset, archive end) of a zip, or None.

    Found as zipfile finds it (the end record without a comment at the very end, else the last
    signature in the last 64 KiB, and a zip64 record right before it), so that the sizes
    checked here are the ones zipfile then reads.  ``read_at(offset, length)`` reads bytes.
    """
    if size < _END.size:
        return None
    span = min(size, _END.size + 0xFFFF)
    tail = read_at(size - span, span)
    at = span - _END.size
    if not (tail[at : at + 4] == b"PK\x05\x06" and tail[-2:] == b"\x00\x00"):
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or at + _END.size > len(tail):
            return None
    *_, entries, directory_size, directory_offset, comment = _END.unpack_from(tail, at)
    end = size - span + at
    if end >= _END64_LOCATOR.size + _END64.size:
        locator = read_at(end - _END64_LOCATOR.size, _END64_LOCATOR.size)
        if locator[:4] == b"PK\x06\x07":
            record = read_at(end - _END64_LOCATOR.size - _END64.size, _END64.size)
            if record[:4] != b"PK\x06\x06":
                return None
            *_, entries, directory_size, directory_offset = _END64.unpack(record)
    return entries, directory_offset, directory_size, end, end + _END.size + comment


def read_archive(path: str, size: int, max_bytes: int, max_ratio: float, payload: bool = True) -> tuple[dict, object]:
    """The checked manifest and the payload inflated into one buffer (None without ``payload``); ValueError
    for anything else."""
    corrupt = f"{path} is not a multilabel_core model file (truncated or corrupt zip archive"
    with open(path, "rb") as stream:

        def read_at(offset, length):
            stream.seek(offset)
            return stream.read(length)

        directory = zip_directory(read_at, size)
    if directory is None:
        raise ValueError(f"{corrupt}: no end of central directory record)")
    entries, _, directory_size, _, _ = directory
    if entries > 2 or directory_size > _DIRECTORY_MAX_BYTES:
        raise ValueError(
            f"{path} is not a multilabel_core model file (the archive lists {entries} member(s) in {directory_size} "
            f"bytes of directory; a model file holds {_MANIFEST} and {_PAYLOAD})"
        )
    try:
        archive = zipfile.ZipFile(path)
        names = archive.namelist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise ValueError(f"{corrupt}: {_one_line(exc)})") from exc
    with archive:
        if len(set(names)) != len(names) or not set(names) <= {_MANIFEST, _PAYLOAD}:
            raise ValueError(
                f"{path} is not a multilabel_core model file (its members are {', '.join(repr(name[:40]) for name in names)}; "
                f"a model file holds {_MANIFEST} and {_PAYLOAD}, once each)"
            )
        if _MANIFEST not in names:
            raise ValueError(f"{path} is not a multilabel_core model file (the archive has no {_MANIFEST})")
        buffer = _inflate(path, archive, _MANIFEST, _MANIFEST_MAX_BYTES, max_ratio)
        raw = bytes(buffer)
        release_buffer(buffer)
        try:
            manifest = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as exc:  # undecodable, not JSON, or nested too deep
            raise ValueError(f"{path}: {_MANIFEST} is not valid JSON ({_one_line(exc)})") from exc
        manifest = _check_manifest(path, manifest)
        if _PAYLOAD not in names:
            raise ValueError(f"{path}: the archive has no {_PAYLOAD} (the estimator)")
        return manifest, (_inflate(path, archive, _PAYLOAD, max_bytes, max_ratio) if payload else None)


def model_manifest(path) -> dict:
    """Read the manifest of the mlcore model file at ``path`` (module docstring), checked, without reading the estimator.

    The archive's layout and the manifest's fields get the checks :func:`load_model` makes first;
    the payload is neither inflated nor rebuilt (:func:`load_model` checks it).

    Parameters
    ----------
    path : str or path-like
        An mlcore model file (not a joblib pickle).

    Returns
    -------
    dict
        The manifest's fields (format, format version, multilabel_core version, method,
        estimator class, parameters, skops version); ``"data"`` is the name of the training data
        when the writer recorded it, else None (files written before the field existed).

    Raises
    ------
    ValueError
        For a missing file, a pickle (its header is read only by unpickling it) or anything
        :func:`load_model` refuses at the manifest.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such model file")
    with open(path, "rb") as stream:
        head = stream.read(8)
    if not head.startswith(_ZIP_MAGIC):
        raise ValueError(f"{path} is not an mlcore model file: only an mlcore archive has a manifest to read")
    manifest, _ = read_archive(path, os.path.getsize(path), payload_cap(None), ratio_cap(None), payload=False)
    return {**manifest, "data": manifest.get("data")}


def _inflate(path: str, archive: zipfile.ZipFile, name: str, cap: int, ratio: float):
    """The member inflated into one buffer of its declared size, refused before inflating when
    that size passes ``cap`` or ``ratio`` times the compressed size, and while inflating when
    the member yields more (or fewer) bytes than it declares.

    The buffer is an anonymous memory map (a bytearray when empty): its pages are committed as
    they are written, and it reads like a file, so skops can open the payload in place.
    """
    info = archive.getinfo(name)
    declared, packed = info.file_size, info.compress_size
    if declared > cap:
        raise _too_large(path, name, cap, declared)
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ValueError(f"{path}: {name} is compressed with method {info.compress_type}; a model file's members are stored or deflated")
    if not ratio_allows(declared, packed, ratio):
        raise ValueError(
            f"{path}: {name} declares {declared} bytes inflated from {packed} compressed, "
            f"{declared / max(packed, 1):.0f} times; a model file's member may inflate to at most {ratio:g} times its "
            f"compressed size (over 1 MiB): a zip bomb, or a file to load with load_model(..., max_ratio=...) or "
            f"MULTILABEL_CORE_MODEL_MAX_RATIO if you trust it"
        )
    buffer = mmap.mmap(-1, declared) if declared else bytearray()
    filled = 0
    try:
        with archive.open(info) as member:
            while chunk := member.read(_CHUNK):
                if filled + len(chunk) > declared:
                    raise _TooLarge(filled + len(chunk))
                buffer[filled : filled + len(chunk)] = chunk
                filled += len(chunk)
    except _TooLarge as exc:
        release_buffer(buffer)
        raise ValueError(f"{path}: {name} inflates past the {declared} bytes it declares ({exc.args[0]} or more); refused") from None
    except Exception as exc:  # zlib.error (a cut or corrupt stream), BadZipFile (CRC), EOFError, OSError
        release_buffer(buffer)
        raise ValueError(f"{path}: {name} cannot be read from the archive ({type(exc).__name__}: {_one_line(exc)})") from exc
    if filled != declared:
        release_buffer(buffer)
        raise ValueError(f"{path}: {name} inflates to {filled} bytes, not the {declared} it declares")
    return buffer


class _View(io.RawIOBase):
    """A read-only, seekable file over ``data[start:end]`` (the inflated payload, or a member of
    it), reading slices without copying the whole."""

    def __init__(self, data, start: int = 0, end: int | None = None):
        super().__init__()
        self._data, self._start, self._position = data, start, 0
        self._size = (len(data) if end is None else end) - start

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._position, os.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise OSError(f"seek to {base + offset}, before the start")
        self._position = base + offset
        return self._position

    def read(self, size: int | None = -1) -> bytes:
        end = self._size if size is None or size < 0 else min(self._size, self._position + size)
        chunk = bytes(self._data[self._start + self._position : self._start + end]) if end > self._position else b""
        self._position = max(self._position, end)
        return chunk

    def readinto(self, target) -> int:
        chunk = self.read(len(target))
        target[: len(chunk)] = chunk
        return len(chunk)

    def read_at(self, offset: int, length: int) -> bytes:
        self.seek(offset)
        return self.read(length)


def release_buffer(buffer) -> None:
    if isinstance(buffer, mmap.mmap):
        try:
            buffer.close()
        except BufferError:  # something still views it; the collector frees it with the last view
            pass


def _too_large(path: str, what: str, cap: int, size: int) -> ValueError:
    if what == _MANIFEST:
        return ValueError(f"{path}: {_MANIFEST} holds {size} bytes or more; a manifest is at most {cap}")
    return ValueError(
        f"{path}: {what} holds more than {cap} bytes ({size} or more), the cap on a model file's payload; "
        f"raise it with load_model(..., max_bytes=...) or MULTILABEL_CORE_MODEL_MAX_BYTES if you trust the file"
    )


def check_payload(path: str, payload, cap: int, ratio: float) -> dict:
    """The payload's schema, once the payload is known to be a skops archive and nothing else.

    skops' reader reads its members whole: ``schema.json`` and one ``.npy`` member per array
    node, and a schema may name one member many times.  skops writes its members uncompressed,
    one after the other, every one named by the schema; requiring that bounds ``schema.json``
    by the payload's size, leaves no room for padding the model does not use (so the payload is
    the model's own size), and the arrays are bounded by summing the member sizes over every
    reference in the schema.
    """
    corrupt = f"{path}: the estimator payload is corrupt"
    size = len(payload)
    directory = zip_directory(lambda offset, length: payload[offset : offset + length], size)
    if directory is None:
        raise ValueError(f"{corrupt} (not a zip archive: no end of central directory record)")
    _, directory_offset, directory_size, end, archive_end = directory
    try:
        with zipfile.ZipFile(_View(payload)) as inner:
            infos = inner.infolist()
            names = [info.filename for info in infos]
            packed = [info.filename for info in infos if info.compress_type != zipfile.ZIP_STORED]
            if packed:
                raise ValueError(f"{path}: the estimator payload has compressed members ({', '.join(packed[:3])}); skops writes none")
            if len(set(names)) != len(names):
                raise ValueError(f"{corrupt} (a member name appears twice)")
            if "schema.json" not in names:
                raise ValueError(f"{corrupt} (no schema.json)")
            places = _check_tiling(path, payload, infos, directory_offset, directory_size, end, archive_end, size)
            schema = json.loads(inner.read("schema.json"))
    except ValueError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, RecursionError, UnicodeDecodeError, struct.error) as exc:
        raise ValueError(f"{corrupt} ({type(exc).__name__}: {_one_line(exc)})") from exc
    if not isinstance(schema, dict):
        raise ValueError(f"{corrupt} (its schema is a {type(schema).__name__}, not an object)")
    sizes = {info.filename: info.file_size for info in infos}
    total, named, pending = 0, {"schema.json"}, [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            member = node.get("file")
            if isinstance(member, str) and member in sizes:
                named.add(member)
                total += sizes[member]
                if node.get("__loader__") == "SparseMatrixNode":
                    # scipy's load_npz inflates the arrays of a compressed .npz whole.
                    total += _npz_size(path, member, _View(payload, *places[member]), max(cap - total, 0), ratio)
                if total > cap:
                    raise _too_large(path, "the estimator's arrays", cap, total)
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    unused = [name for name in names if name not in named]
    if unused:
        raise ValueError(
            f"{path}: the estimator payload holds {len(unused)} member(s) its schema never names "
            f"({', '.join(map(repr, unused[:3]))}, {sum(sizes[name] for name in unused)} bytes): padding, refused"
        )
    return schema


def _check_tiling(path, payload, infos, directory_offset, directory_size, end, archive_end, size) -> dict:
    """Each member's (start, end) of data, once the members, then the central directory, then the
    end records are found to fill the payload with no byte in between."""
    padding = f"{path}: the estimator payload holds padding, refused:"
    position, places = 0, {}
    for info in sorted(infos, key=lambda info: info.header_offset):
        if info.header_offset != position:
            what = "belong to no member" if info.header_offset > position else f"are also read by {info.filename!r}"
            raise ValueError(f"{padding} the bytes from offset {min(position, info.header_offset)} {what}")
        header = _LOCAL.unpack(payload[position : position + _LOCAL.size])
        if header[0] != b"PK\x03\x04":
            raise ValueError(f"{path}: the estimator payload is corrupt (no local header for {info.filename!r})")
        start = position + _LOCAL.size + header[-2] + header[-1]
        places[info.filename] = (start, start + info.compress_size)
        position = start + info.compress_size
        if info.flag_bits & 0x08:  # a data descriptor follows the data, with or without its signature
            signed = payload[position : position + 4] == b"PK\x07\x08"
            position += (4 if signed else 0) + (20 if max(info.file_size, info.compress_size) > 0xFFFFFFFF else 12)
    records = end - directory_offset - directory_size  # the zip64 end record and its locator, when present
    if position != directory_offset:
        raise ValueError(f"{padding} {directory_offset - position} bytes between the last member and the directory")
    if records not in (0, _END64.size + _END64_LOCATOR.size) or archive_end != size:
        raise ValueError(f"{padding} {size - archive_end + records} bytes around the end record")
    return places


def _npz_size(path: str, member: str, npz: _View, cap: int, ratio: float) -> int:
    """The bytes a sparse matrix's .npz member inflates to, checked as the archive's own members are."""
    corrupt = f"{path}: the estimator payload's {member} is not a sparse matrix file"
    directory = zip_directory(npz.read_at, npz.seek(0, os.SEEK_END))
    if directory is None:
        raise ValueError(f"{corrupt} (no zip end record)")
    if directory[0] > 16 or directory[2] > _DIRECTORY_MAX_BYTES:
        raise ValueError(f"{corrupt} (it lists {directory[0]} arrays in {directory[2]} bytes of directory)")
    total = 0
    try:
        with zipfile.ZipFile(npz) as arrays:
            for info in arrays.infolist():
                if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                    raise ValueError(f"{corrupt} ({info.filename!r} is compressed with method {info.compress_type})")
                if not ratio_allows(info.file_size, info.compress_size, ratio):
                    raise ValueError(
                        f"{path}: {member}/{info.filename} declares {info.file_size} bytes inflated from "
                        f"{info.compress_size}, more than {ratio:g} times: refused"
                    )
                total += info.file_size
                if total > cap:
                    raise _too_large(path, f"{member}", cap, total)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise ValueError(f"{corrupt} ({type(exc).__name__}: {_one_line(exc)})") from exc
    return total


def _require_estimator(path: str, estimator) -> None:
    if not all(callable(getattr(estimator, name, None)) for name in ("predict", "decision_function")):
        raise ValueError(f"{path}: the file holds a {type(estimator).__name__}, not an estimator with predict and decision_function")


def _check_manifest(path: str, manifest) -> dict:
    """The manifest's fields, checked in order: format name, format version, then the rest."""
    if not isinstance(manifest, dict):
        raise ValueError(f"{path}: {_MANIFEST} holds a {type(manifest).__name__}, not a JSON object")
    if manifest.get("format") != FORMAT:
        raise ValueError(
            f"{path} is not a multilabel_core model file ({_MANIFEST} names format {manifest.get('format')!r}, "
            f"not {FORMAT!r})"
        )
    file_version = manifest.get("format_version")
    if not isinstance(file_version, int) or isinstance(file_version, bool) or file_version < 1:
        raise ValueError(f"{path}: {_MANIFEST} has format_version {file_version!r}, not a positive integer")
    if file_version > FORMAT_VERSION:
        raise ValueError(
            f"{path} is in model format version {file_version} (written by multilabel_core "
            f"{manifest.get('multilabel_core')}); multilabel_core {__version__} reads versions up to "
            f"{FORMAT_VERSION}: upgrade multilabel_core to load it"
        )
    for field, kinds in (("multilabel_core", (str,)), ("method", (str, type(None))), ("estimator", (str,))):
        if not isinstance(manifest.get(field), kinds):
            raise ValueError(f"{path}: {_MANIFEST} field {field!r} is {manifest.get(field)!r}")
    if not isinstance(manifest.get("data"), (str, type(None))):  # optional: absent in files written before it
        raise ValueError(f"{path}: {_MANIFEST} field 'data' is {manifest.get('data')!r}, not a name or null")
    if manifest["method"] is not None:
        try:
            get_method(manifest["method"])
        except ValueError as exc:
            raise ValueError(
                f"{path}: the model is of method {manifest['method']!r}, which no installed plugin registers "
                f"(is the plugin that provides it installed?): {_one_line(exc)}"
            ) from exc
    return manifest


def _rebuild(path: str, manifest: dict, payload, schema: dict, trusted: bool, extra) -> object:
    import skops.io

    written_by = "" if manifest["multilabel_core"] == __version__ else f"; written by multilabel_core {manifest['multilabel_core']}"
    try:
        named = skops.io.get_untrusted_types(file=_View(payload))
    except Exception as exc:  # whatever a corrupt payload makes skops' reader raise
        raise ValueError(f"{path}: the estimator payload is corrupt ({type(exc).__name__}: {_one_line(exc)})") from exc
    allowed = set(_trusted_names(extra))
    untrusted = sorted(set(named) - allowed)
    if untrusted and not trusted:
        raise ValueError(
            f"{path}: refused: the model names classes that are not trusted: {', '.join(untrusted)} "
            f"(trusted: registered methods and components and the classes plugins declare; is the plugin that "
            f"provides them installed? pass trusted=True, or mlcore predict --trust, only for a file you trust){written_by}"
        )
    # The root's class, as the schema names it, before anything is built.
    root = f"{schema.get('__module__')}.{schema.get('__class__')}"
    if root != manifest["estimator"]:
        raise ValueError(f"{path}: {_MANIFEST} names estimator {manifest['estimator']} but the payload holds a {root}")
    try:
        estimator = skops.io.load(_View(payload), trusted=sorted(allowed | set(named)) if trusted else sorted(allowed))
    except Exception as exc:  # a missing module, a class without the saved attributes, bad arrays
        raise ValueError(f"{path}: the estimator cannot be rebuilt ({type(exc).__name__}: {_one_line(exc)}){written_by}") from exc
    if _type_name(type(estimator)) != manifest["estimator"]:
        raise ValueError(
            f"{path}: {_MANIFEST} names estimator {manifest['estimator']} but the payload holds a "
            f"{_type_name(type(estimator))}"
        )
    return estimator


def _trusted_names(extra) -> list[str]:
    if isinstance(extra, (str, type)):
        extra = [extra]
    return trusted_types() + _names(extra)


def _load_pickle(path: str):
    """The pre-skops format (and any ``format="joblib"`` file): unpickled, so only on ``trusted=True``."""
    import joblib

    try:
        content = joblib.load(path)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{path}: the model refers to code that is not installed ({_one_line(exc)})") from exc
    except Exception as exc:  # whatever unpickling raises on a file that is not a pickle
        raise ValueError(f"{path} is not a multilabel_core model file ({type(exc).__name__}: {_one_line(exc)})") from exc
    if not isinstance(content, dict) or content.get("format") != FORMAT or "estimator" not in content:
        raise ValueError(f"{path} is not a multilabel_core model file (no {FORMAT!r} header)")
    _require_estimator(path, content["estimator"])
    if content.get("multilabel_core") != __version__:
        _warn_version(path, content.get("multilabel_core"), content.get("method"))
    return content["estimator"]


def _warn_version(path: str, written: str, method) -> None:
    warnings.warn(
        f"{path} was written by multilabel_core {written} (method {method!r}) and is loaded by {__version__}; "
        f"refit it if predictions look wrong",
        ModelVersionWarning,
        stacklevel=3,
    )


def _one_line(exc) -> str:
    return " ".join(str(exc).split())
