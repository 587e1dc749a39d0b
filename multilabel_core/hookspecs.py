"""Hook specifications: everything a plugin can provide.

A plugin is a module (or object) with functions decorated by
:data:`multilabel_core.hookimpl` whose names match the specs below.  Each hook
receives a ``register`` callback and calls it once per thing it provides, in the
style of pytest and llm.  The bundled families in ``plugins/`` and the core's stock
components use exactly these hooks; docs/plugin-guide.md documents each signature
(a test checks that every spec here is documented there).
"""

from __future__ import annotations

import pluggy

PROJECT = "multilabel_core"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_methods(register):
    """Register estimators: call ``register(MethodSpec(...))`` once per method.

    Parameters
    ----------
    register : callable
        ``register(spec)`` takes one :class:`multilabel_core.registry.MethodSpec` (see it for the
        fields) and adds it to the registry.
    """


@hookspec
def register_components(register):
    """Register parts: call ``register(ComponentSpec(kind, name, factory))``.

    Parameters
    ----------
    register : callable
        ``register(spec)`` takes one :class:`multilabel_core.registry.ComponentSpec`.  Its ``kind``
        is one of "loss", "regularizer", "relation", "kernel", "solver", "threshold";
        ``factory(**params)`` builds the component (usually the attrs class itself).
    """


@hookspec
def register_datasets(register):
    """Register downloadable datasets: call ``register(DatasetSpec(name, files, ...))``.

    Parameters
    ----------
    register : callable
        ``register(spec)`` takes one :class:`multilabel_core.registry.DatasetSpec`, which
        :func:`multilabel_core.datasets.fetch_dataset` can then download by name.
    """


@hookspec
def register_trusted_types(register):
    """Declare classes that fitted estimators hold: call ``register(cls)`` once per class.

    :func:`multilabel_core.load_model` rebuilds only classes on its list of trusted types
    (:func:`multilabel_core.persistence.trusted_types`); registered methods' estimators and
    registered components are on it already, so declare only the other classes a fitted model
    keeps (a threshold model, a result record).  Declaring a class means: setting its instances'
    attributes from a model file is harmless.

    Parameters
    ----------
    register : callable
        ``register(cls)`` takes one class and adds it to the trusted types.
    """
