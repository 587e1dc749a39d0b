"""The bundled method families, one package per paper family.

Installed as ``multilabel_core_plugins`` and registered through the
``multilabel_core.plugins`` entry-point group, exactly like third-party plugins.
"""
