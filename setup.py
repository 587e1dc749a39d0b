"""Only the Cython extensions; everything else is declared in pyproject.toml.

The core's extensions live under ``multilabel_core/``; a bundled plugin family's own engine
(``plugins/<family>/_name.pyx``) installs as ``multilabel_core_plugins.<family>._name``, because
pyproject.toml maps the package ``multilabel_core_plugins`` to the folder ``plugins``.  A plugin's
``.pyx`` cimports the core's public engine kit (``multilabel_core/solvers/kit.pxd``), found through
the include path.
"""

import os
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DIRECTIVES = {"language_level": 3, "boundscheck": False, "wraparound": False, "cdivision": True}
# Independent extensions of 1.5-2.2 MB of C each: translating and compiling them on every core
# roughly halves a fresh install on two cores (pip gives no way to pass --parallel through).
JOBS = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
ROOT = Path(__file__).resolve().parent
#: Source folder -> the package it installs as (pyproject.toml's package-dir).
PACKAGE_DIRS = {"multilabel_core": "multilabel_core", "plugins": "multilabel_core_plugins"}


class ParallelBuildExt(build_ext):
    """``build_ext`` compiling the extensions concurrently unless ``--parallel`` says otherwise."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None and JOBS > 1:
            self.parallel = JOBS


def module_name(source: Path) -> str:
    """The dotted module name of a .pyx path relative to the root.

    multilabel_core/solvers/_smo.pyx -> multilabel_core.solvers._smo, and
    plugins/prml/_cd_svmplus.pyx -> multilabel_core_plugins.prml._cd_svmplus.
    """
    top, *rest = source.with_suffix("").parts
    return ".".join([PACKAGE_DIRS[top], *rest])


def extension(source: Path) -> Extension:
    """One extension per .pyx file, named after its installed module (:func:`module_name`)."""
    return Extension(
        module_name(source),
        [str(source)],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )


def sources() -> list[Path]:
    """Every .pyx of the core and of the bundled plugins (their tests and examples have none)."""
    found = []
    for folder in PACKAGE_DIRS:
        found += sorted(Path(folder).rglob("*.pyx"))
    return found


setup(
    ext_modules=cythonize(
        [extension(source) for source in sources()],
        compiler_directives=DIRECTIVES,
        # The core's .pxd files (the engine kit) for a plugin's ``cimport multilabel_core.solvers.kit``:
        # the source root, not an installed copy, so a build never mixes two versions.
        include_path=[str(ROOT)],
        nthreads=JOBS,
    ),
    cmdclass={"build_ext": ParallelBuildExt},
)
