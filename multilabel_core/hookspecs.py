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

    See :class:`multilabel_core.registry.MethodSpec` for the fields.
    """


@hookspec
def register_components(register):
    """Register parts: call ``register(ComponentSpec(kind, name, factory))``.

    ``kind`` is one of "loss", "regularizer", "relation", "kernel", "solver";
    ``factory(**params)`` builds the component (usually the attrs class itself).
    """


@hookspec
def register_datasets(register):
    """Register downloadable datasets: call ``register(DatasetSpec(name, files, ...))``."""


@hookspec
def register_trusted_types(register):
    """Declare classes that fitted estimators hold: call ``register(cls)`` once per class.

    :func:`multilabel_core.load_model` rebuilds only classes on its list of trusted types
    (:func:`multilabel_core.persistence.trusted_types`); registered methods' estimators and
    registered components are on it already, so declare only the other classes a fitted model
    keeps (a threshold model, a result record).  Declaring a class means: setting its instances'
    attributes from a model file is harmless.
    """
