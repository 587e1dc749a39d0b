"""The public testing kit: hypothesis strategies and checks for solvers, plugins and components.

``check_component`` (:mod:`multilabel_core.testing.components`) is importable from here; the
other checks live in their modules (:mod:`~multilabel_core.testing.checks`,
:mod:`~multilabel_core.testing.fuzz`, ...).
"""

__all__ = ["check_component"]


def __getattr__(name):
    # Imported on first use: the kit's modules need hypothesis (the ``test`` extra), and importing
    # one submodule, e.g. ``multilabel_core.testing.rounding``, should not pay for the others.
    if name == "check_component":
        from .components import check_component

        return check_component
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
