"""The plugin manager and the registries built from it.

Plugins are found the way pytest finds its own: the core's stock components are a
plugin module (:mod:`multilabel_core._builtin`, registered first under the name
``multilabel_core``), then every entry point of the group ``multilabel_core.plugins``
is loaded and registered under its entry-point name.  The bundled families in
``plugins/`` and third-party distributions declare that same entry point, so they
take exactly the same path.

Each hook of :mod:`multilabel_core.hookspecs` receives a ``register`` callback.  The
registries (methods, components, datasets) are not cached: every lookup calls the
hooks again, so a plugin registered by hand with
``get_plugin_manager().register(module, name=...)`` is visible at once.  Calling each
hook implementation ourselves (rather than the hook as a whole) is what lets every
record carry the name of the plugin that registered it, so a clash can name both.

Failure modes, as documented in docs/plugin-guide.md:

- two plugins registering the same method name, component ``(kind, name)`` or dataset
  name, or two entry points with one name -> :class:`PluginError` naming both;
- a plugin that fails to load (its import raises, or its hooks do not match the
  specs), or whose hook raises -> a :class:`PluginWarning` naming it, and the other
  plugins still load;
- ``MULTILABEL_CORE_DISABLE_PLUGIN_AUTOLOAD`` set to any non-empty value -> no entry
  point is loaded (only the core's stock components are registered).
"""

from __future__ import annotations

import difflib
import importlib.metadata
import inspect
import os
import warnings
from typing import Callable, Hashable

import attrs
import pluggy

from . import COMPILED_EXTENSIONS, _builtin, hookspecs
from .exceptions import PluginError, PluginWarning
from .registry import COMPONENT_KINDS, ComponentSpec, DatasetSpec, MethodSpec

ENTRY_POINT_GROUP = "multilabel_core.plugins"
DISABLE_AUTOLOAD_ENV = "MULTILABEL_CORE_DISABLE_PLUGIN_AUTOLOAD"
CORE_PLUGIN_NAME = "multilabel_core"
_CORE_EXTENSIONS = frozenset(f"multilabel_core.{name}" for name in COMPILED_EXTENSIONS)

__all__ = [
    "CORE_PLUGIN_NAME",
    "DISABLE_AUTOLOAD_ENV",
    "ENTRY_POINT_GROUP",
    "PluginError",
    "PluginWarning",
    "component_parameters",
    "get_method",
    "get_plugin_manager",
    "list_components",
    "list_datasets",
    "list_methods",
    "make_component",
    "make_method",
    "reset_plugin_manager",
]


_manager: pluggy.PluginManager | None = None


def get_plugin_manager() -> pluggy.PluginManager:
    """Return the process-wide plugin manager, built on first use.

    Returns
    -------
    pluggy.PluginManager
        The manager holding the core's and the installed plugins' hook implementations.
    """
    global _manager
    if _manager is None:
        _manager = _build_manager()
    return _manager


def reset_plugin_manager() -> None:
    """Forget the plugin manager; the next use rebuilds it (rereads entry points and the environment)."""
    global _manager
    _manager = None


def _build_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    manager.register(_builtin, name=CORE_PLUGIN_NAME)
    if not os.environ.get(DISABLE_AUTOLOAD_ENV):
        _register_entry_points(manager)
    return manager


def _register_entry_points(manager: pluggy.PluginManager) -> None:
    origins = {CORE_PLUGIN_NAME: "the core's stock components (multilabel_core._builtin)"}
    for entry_point in _unique_entry_points():
        origin = _describe(entry_point)
        if entry_point.name in origins:
            raise PluginError(
                f"two plugins are named {entry_point.name!r}: {origins[entry_point.name]} and {origin}"
            )
        try:
            # load() imports the module; register() checks its hooks against the specs
            manager.register(entry_point.load(), name=entry_point.name)
        except ImportError as exc:
            if exc.name in _CORE_EXTENSIONS:  # the core is broken, not this plugin: no plugin would work
                raise ImportError(
                    f"multilabel_core's compiled extension {exc.name} cannot be imported ({exc}); "
                    f"rebuild multilabel_core (`pip install -e .` in a checkout, else reinstall it)"
                ) from exc
            _warn_skipped(origin, exc)
            continue
        except Exception as exc:  # a broken plugin must not take the others down
            _warn_skipped(origin, exc)
            continue
        origins[entry_point.name] = origin


def _warn_skipped(origin: str, exc: Exception) -> None:
    warnings.warn(
        f"multilabel_core plugin {origin} failed to load and was skipped: {type(exc).__name__}: {exc}",
        PluginWarning,
    )


def _unique_entry_points() -> list[importlib.metadata.EntryPoint]:
    """The group's entry points, each (name, value) once.

    One distribution can be visible twice (an editable install beside a regular one,
    or the same folder twice on ``sys.path``); loading it twice would be a false clash.
    """
    seen = set()
    unique = []
    for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if (entry_point.name, entry_point.value) not in seen:
            seen.add((entry_point.name, entry_point.value))
            unique.append(entry_point)
    return unique


def _describe(entry_point: importlib.metadata.EntryPoint) -> str:
    dist = getattr(entry_point, "dist", None)
    source = f"distribution {dist.name!r} {dist.version}" if dist is not None else "an unknown distribution"
    return f"{entry_point.name!r} ({entry_point.value} from {source})"


# -- registries -------------------------------------------------------------------


def _collect(hook_name: str, record_type: type, key: Callable[[object], Hashable], what: str) -> dict:
    """Call every implementation of one hook; return the records by ``key``, clashes refused."""
    records: dict = {}
    for impl in getattr(get_plugin_manager().hook, hook_name).get_hookimpls():
        for record in call_hookimpl(impl, hook_name, record_type):
            k = key(record)
            if k in records:
                raise PluginError(f"{what} {k!r} is registered by {_owners(records[k].plugin, record.plugin)}")
            records[k] = record
    return records


def _owners(first: str, second: str) -> str:
    return f"plugin {first!r} twice" if first == second else f"both plugin {first!r} and plugin {second!r}"


def call_hookimpl(impl, hook_name: str, record_type: type) -> list:
    """One plugin's records for one hook, each stamped with the plugin's name (classes as they are)."""
    received = []

    def register(record):
        if not isinstance(record, record_type):
            raise PluginError(
                f"plugin {impl.plugin_name!r}: register() in {hook_name} expects a "
                f"{'class' if record_type is type else record_type.__name__}, got {type(record).__name__} {record!r}"
            )
        received.append(record if record_type is type else attrs.evolve(record, plugin=impl.plugin_name))

    arguments = {"register": register}
    try:
        impl.function(*(arguments[name] for name in impl.argnames))
    except PluginError:
        raise
    except Exception as exc:  # a broken plugin must not take the others down
        warnings.warn(
            f"multilabel_core plugin {impl.plugin_name!r} failed in {hook_name} and was skipped: "
            f"{type(exc).__name__}: {exc}",
            PluginWarning,
        )
        return []
    return received


def _methods() -> dict[str, MethodSpec]:
    return _collect("register_methods", MethodSpec, lambda spec: spec.name, "method")


def _components() -> dict[tuple[str, str], ComponentSpec]:
    return _collect("register_components", ComponentSpec, lambda spec: (spec.kind, spec.name), "component")


def _datasets() -> dict[str, DatasetSpec]:
    return _collect("register_datasets", DatasetSpec, lambda spec: spec.name, "dataset")


def list_methods() -> list[MethodSpec]:
    """List every registered method, sorted by name.

    Returns
    -------
    list of MethodSpec
        The registrations, sorted by name.
    """
    return sorted(_methods().values(), key=lambda spec: spec.name)


def get_method(name: str) -> MethodSpec:
    """Return the registration of method ``name``.

    Parameters
    ----------
    name : str
        A registered method's name.

    Returns
    -------
    MethodSpec
        Its registration.

    Raises
    ------
    ValueError
        When ``name`` is not a string or no method of that name is registered (with the closest
        registered name as a suggestion).
    """
    if not isinstance(name, str):
        # A MethodSpec is not hashable (its parts are dicts): the look-up would raise a bare TypeError.
        hint = f"; for a MethodSpec pass its name, {name.name!r}" if isinstance(name, MethodSpec) else ""
        raise ValueError(f"name must be a method name (a str), got {type(name).__name__} {_shown(name)}{hint}")
    methods = _methods()
    if name not in methods:
        raise _unknown("method", name, methods)
    return methods[name]


def make_method(name: str | MethodSpec, *, preprocess: str | None = None, **params):
    """Build a new, unfitted estimator of method ``name`` with the given hyper-parameters.

    Unknown parameter names are refused with the list of valid ones, before the estimator is
    built (scikit-learn estimators validate values in ``fit`` only).  A mistyped method or
    parameter name is refused with the closest registered one, case ignored ("Did you mean 'C'?").

    Parameters
    ----------
    name : str or MethodSpec
        A registered method's name, or a :class:`~multilabel_core.registry.MethodSpec` (one of
        :func:`list_methods`, or a record of one's own that is not registered): its ``estimator``
        is built.  Anything else is a ValueError naming ``name``.
    preprocess : {"standardize", "maxabs", "l2_rows"} or None, default=None
        Wraps the method in :class:`~multilabel_core.preprocessed.Preprocessed`: the scaler is
        fitted on the training rows and kept with the model.  None fits the method on X as given,
        the one default of every entry point (the estimator classes, ``mlcore fit``, ``evaluate``
        and ``compare``; the estimators page, "One scaling rule", says why); max-margin methods
        want features on comparable scales, so scale raw data one way or the other
        (:func:`~multilabel_core.preprocessed.badly_scaled` tells).
    **params
        The estimator's hyper-parameters.

    Returns
    -------
    MultiLabelEstimator
        The estimator, or a :class:`~multilabel_core.preprocessed.Preprocessed` wrapping it when
        ``preprocess`` is given.

    Raises
    ------
    ValueError
        For a ``name`` that is neither a string nor a MethodSpec, an unknown method or parameter
        name, or an unknown ``preprocess``.
    """
    if not isinstance(name, (str, MethodSpec)):
        got = f"{type(name).__name__} {_shown(name)}"
        raise ValueError(f"name must be a method name (a str) or a MethodSpec, got {got}")
    spec = name if isinstance(name, MethodSpec) else get_method(name)
    _check_params(f"method {spec.name!r}", spec.estimator, params)
    estimator = spec.estimator(**params)
    if preprocess is None:
        return estimator
    from .experiments.preprocessing import check_preprocess
    from .preprocessed import Preprocessed

    check_preprocess(preprocess)
    return Preprocessed(estimator, preprocess=preprocess)


def component_parameters(kind: str, name: str) -> frozenset[str]:
    """Return the keyword parameters the component registered as ``(kind, name)`` accepts.

    What a composing estimator asks before passing an optional setting (a solver's ``n_jobs``)
    that not every component of the kind has.

    Parameters
    ----------
    kind : str
        One of :data:`~multilabel_core.registry.COMPONENT_KINDS`.
    name : str
        The registered component's name.

    Returns
    -------
    frozenset of str
        The names of the factory's parameters that can be passed by keyword.

    Raises
    ------
    ValueError
        For an unknown kind or component, with the known names.
    """
    _check_kind(kind)
    components = _components()
    if (kind, name) not in components:
        known = {spec.name for spec in components.values() if spec.kind == kind}
        raise _unknown(f"{kind} component", name, known)
    parameters = inspect.signature(components[kind, name].factory).parameters.values()
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return frozenset(p.name for p in parameters if p.kind in keyword)


def list_components(kind: str | None = None) -> list[ComponentSpec]:
    """List the registered components, all of them or those of one ``kind``, sorted by (kind, name).

    Parameters
    ----------
    kind : str or None, default=None
        One of :data:`~multilabel_core.registry.COMPONENT_KINDS`; None lists every kind.

    Returns
    -------
    list of ComponentSpec
        The registrations, sorted by (kind, name).

    Raises
    ------
    ValueError
        For an unknown kind.
    """
    if kind is not None:
        _check_kind(kind)
    specs = [spec for spec in _components().values() if kind is None or spec.kind == kind]
    return sorted(specs, key=lambda spec: (spec.kind, spec.name))


def make_component(kind: str, name: str, **params):
    """Build the component registered as ``(kind, name)``, e.g. ``make_component("loss", "hinge")``.

    Parameters
    ----------
    kind : str
        One of :data:`~multilabel_core.registry.COMPONENT_KINDS`.
    name : str
        The registered component's name.
    **params
        Keyword arguments of the component's factory; unknown names are refused before it is
        called.

    Returns
    -------
    object
        ``factory(**params)``: the new component.

    Raises
    ------
    ValueError
        For an unknown kind, component or parameter name (with the closest known one).
    """
    _check_kind(kind)
    components = _components()
    if (kind, name) not in components:
        known = {spec.name for spec in components.values() if spec.kind == kind}
        raise _unknown(f"{kind} component", name, known)
    factory = components[kind, name].factory
    _check_params(f"{kind} {name!r}", factory, params)
    return factory(**params)


def list_datasets() -> list[DatasetSpec]:
    """List every registered downloadable dataset, sorted by name.

    Returns
    -------
    list of DatasetSpec
        The registrations, sorted by name.
    """
    return sorted(_datasets().values(), key=lambda spec: spec.name)


# -- errors -----------------------------------------------------------------------


def _shown(value, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width] + "..."


def _closest(name, known) -> str | None:
    """The known name a user most likely meant by ``name``, or None.

    Case is ignored: a name that differs only in case (``bR``, ``c`` for ``C``) is the answer;
    otherwise the closest by :func:`difflib.get_close_matches` on the lower-cased names
    (``max_iters`` -> ``max_iter``, ``mlknnn`` -> ``mlknn``).
    """
    text = str(name)
    by_lower: dict[str, str] = {}
    for candidate in sorted(map(str, known)):
        by_lower.setdefault(candidate.lower(), candidate)
    if text.lower() in by_lower and by_lower[text.lower()] != text:
        return by_lower[text.lower()]
    close = difflib.get_close_matches(text.lower(), [lower for lower in by_lower if by_lower[lower] != text], n=1)
    return by_lower[close[0]] if close else None


def did_you_mean(name, known) -> str:
    """`` Did you mean 'x'?`` for the closest known name (:func:`_closest`), or ``""``."""
    close = _closest(name, known)
    return f" Did you mean {close!r}?" if close is not None else ""


def _unknown(what: str, name: str, known) -> ValueError:
    known = sorted(known)
    listing = ", ".join(known) if known else "none"
    return ValueError(f"unknown {what} {name!r}.{did_you_mean(name, known)} Known: {listing}")


def _check_kind(kind: str) -> None:
    if kind not in COMPONENT_KINDS:
        raise _unknown("component kind", kind, COMPONENT_KINDS)


def _check_params(what: str, factory: Callable, params: dict) -> None:
    """Refuse parameter names ``factory`` does not accept (any name passes if it takes ``**kwargs``)."""
    signature = inspect.signature(factory)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()):
        return
    valid = sorted(
        p.name
        for p in signature.parameters.values()
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    )
    unknown = sorted(set(params) - set(valid))
    if unknown:
        if len(unknown) == 1:
            hint = did_you_mean(unknown[0], valid)
        else:
            pairs = [(name, _closest(name, valid)) for name in unknown]
            pairs = "; ".join(f"{close!r} for {name!r}" for name, close in pairs if close is not None)
            hint = f" Did you mean {pairs}?" if pairs else ""
        raise ValueError(
            f"{what} has no parameter {', '.join(map(repr, unknown))}.{hint} "
            f"Valid parameters: {', '.join(valid) if valid else 'none'}"
        )
    required = [
        p.name
        for p in signature.parameters.values()
        if p.default is inspect.Parameter.empty
        and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        and p.name not in params
    ]
    if required:
        kind = what.split()[0]
        example = ", ".join(f"{name!r}: ..." for name in required)
        raise ValueError(
            f"{what} needs {', '.join(required)}, which has no default: pass it "
            f"({kind}_params={{{example}}} in ComposedEstimator, or make_component(..., {required[0]}=...)), "
            f"or give a {kind} object"
        )
