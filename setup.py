"""Only the Cython extensions; everything else is declared in pyproject.toml."""

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

DIRECTIVES = {"language_level": 3, "boundscheck": False, "wraparound": False, "cdivision": True}


def extension(name, source):
    return Extension(
        name,
        [source],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )


setup(
    ext_modules=cythonize(
        [extension("multilabel_core._ranking", "multilabel_core/_ranking.pyx")],
        compiler_directives=DIRECTIVES,
    )
)
