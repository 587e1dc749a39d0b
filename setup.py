"""Only the Cython extensions; everything else is declared in pyproject.toml."""

import os
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DIRECTIVES = {"language_level": 3, "boundscheck": False, "wraparound": False, "cdivision": True}
# Five independent extensions of 1.5-2.2 MB of C each: translating and compiling them on every core
# roughly halves a fresh install on two cores (pip gives no way to pass --parallel through).
JOBS = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


class ParallelBuildExt(build_ext):
    """``build_ext`` compiling the extensions concurrently unless ``--parallel`` says otherwise."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None and JOBS > 1:
            self.parallel = JOBS


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
        nthreads=JOBS,
    ),
    cmdclass={"build_ext": ParallelBuildExt},
)
