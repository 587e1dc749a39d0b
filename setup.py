"""Only the Cython extensions; everything else is declared in pyproject.toml."""

from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

DIRECTIVES = {"language_level": 3, "boundscheck": False, "wraparound": False, "cdivision": True}


def extension(source: Path) -> Extension:
    """One extension per .pyx file, named after its path (multilabel_core/solvers/_smo.pyx -> multilabel_core.solvers._smo)."""
    return Extension(
        ".".join(source.with_suffix("").parts),
        [str(source)],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )


setup(
    ext_modules=cythonize(
        [extension(source) for source in sorted(Path("multilabel_core").rglob("*.pyx"))],
        compiler_directives=DIRECTIVES,
    )
)
