"""The public engine kit: a plugin's own dual, built outside the package on ``cimport multilabel_core.solvers.kit``.

The kit (``multilabel_core/solvers/kit.pxd`` and :mod:`multilabel_core.solvers.kit`) is what a family with a new
dual builds on.  The build test compiles, in a temporary directory and a separate interpreter, a third-party
module with a variant of the engine (the per-label hinge dual, written against the kit only), the way a plugin's
own ``setup.py`` would: Cython must find ``kit.pxd`` (and the declarations it re-exports) where the installed
package is, with no include path pointing into this checkout.  The variant's solution must agree with the core's
``linear_svm_cd`` on the same dual: both primals are 1-strongly convex in w, so each point lies within
``sqrt(2 gap)`` of the optimum, and the two within the sum of those radii (plus rounding).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import multilabel_core
from multilabel_core.solvers import linear_svm_cd
from multilabel_core.solvers.kit import as_rows, check_signs, index_array

VARIANT = '''
# cython: language_level=3
import numpy as np
from multilabel_core.solvers.kit cimport DualCoordinates, Rows
from multilabel_core.solvers.kit import as_rows, check_signs, solve_dual


cdef class HingeDual(DualCoordinates):
    """min 1/2 ||w||^2 - sum alpha over 0 <= alpha <= C, w = sum alpha_i y_i x_i: one label."""
    cdef Rows rows
    cdef const double[::1] y
    cdef double[::1] w
    cdef double C

    def __init__(self, Rows rows not None, const double[::1] y, double C):
        if y.shape[0] != rows.n_rows:
            raise ValueError("y needs one sign per row")
        self.rows, self.y, self.C = rows, y, C
        self.alpha = np.zeros(rows.n_rows)
        self.w = np.zeros(rows.dimension)

    cdef double gradient(self, Py_ssize_t i) noexcept nogil:
        return self.y[i] * self.rows.dot(i, &self.w[0]) - 1.0

    cdef double curvature(self, Py_ssize_t i) noexcept nogil:
        return self.rows.squared_norm(i)

    cdef double lower(self, Py_ssize_t i) noexcept nogil:
        return 0.0

    cdef double upper(self, Py_ssize_t i) noexcept nogil:
        return self.C

    cdef void update(self, Py_ssize_t i, double delta) noexcept nogil:
        self.rows.axpy(i, delta * self.y[i], &self.w[0])

    cdef double objective(self) noexcept nogil:
        cdef double value = 0.0
        cdef Py_ssize_t j
        for j in range(self.w.shape[0]):
            value += 0.5 * self.w[j] * self.w[j]
        for j in range(self.alpha.shape[0]):
            value -= self.alpha[j]
        return value


def solve(X, Y, double C, double tol):
    """w, alpha and the engine's report for the first label of Y."""
    signs = check_signs(Y, X.shape[0])
    problem = HingeDual(as_rows(X, 0.0), np.ascontiguousarray(signs[:, 0]), C)
    run = solve_dual(problem, tol=tol, max_iter=100000, shrinking=True, seed=0)
    return np.asarray(problem.w), np.asarray(problem.alpha), run
'''

SETUP = '''
import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

setup(name="kit_plugin", ext_modules=cythonize(
    [Extension("kit_plugin._hinge", ["kit_plugin/_hinge.pyx"], include_dirs=[numpy.get_include()])],
    compiler_directives={"language_level": 3, "boundscheck": False, "wraparound": False}, quiet=True))
'''

RUN = '''
import json, sys
import numpy as np
from kit_plugin._hinge import solve

X = np.array(json.loads(sys.argv[1])); Y = np.array(json.loads(sys.argv[2]))
w, alpha, run = solve(X, Y, 1.0, 1e-10)
print(json.dumps({"w": w.tolist(), "alpha": alpha.tolist(), "converged": run["converged"]}))
'''


def _installed_root() -> Path:
    """The directory holding the imported ``multilabel_core`` (the checkout in development, site-packages in CI)."""
    return Path(multilabel_core.__file__).resolve().parents[1]


def _primal_dual(X, y, C, w, alpha):
    primal = 0.5 * w @ w + C * np.maximum(0.0, 1.0 - y * (X @ w)).sum()
    dual = alpha.sum() - 0.5 * w @ w
    return primal, dual


def test_a_plugin_builds_its_own_dual_on_the_installed_kit(tmp_path):
    pytest.importorskip("Cython")
    package = tmp_path / "kit_plugin"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_hinge.pyx").write_text(textwrap.dedent(VARIANT))
    (tmp_path / "setup.py").write_text(textwrap.dedent(SETUP))
    # Only the installed package's own directory on the path: Cython finds kit.pxd through sys.path,
    # as it would for a third-party plugin built against an installed wheel.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(_installed_root())])}
    build = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tmp_path, env=env,
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    Y = np.where(X[:, [0]] + 0.5 * rng.standard_normal((40, 1)) > 0, 1.0, -1.0)
    run = subprocess.run([sys.executable, "-c", RUN, json.dumps(X.tolist()), json.dumps(Y.tolist())], cwd=tmp_path,
                         env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.splitlines()[-1])
    w, alpha = np.array(result["w"]), np.array(result["alpha"])
    assert result["converged"]
    assert np.all((alpha >= 0.0) & (alpha <= 1.0))

    y = Y[:, 0]
    primal, dual = _primal_dual(X, y, 1.0, w, alpha)
    core = linear_svm_cd(X, Y, C=1.0, loss="hinge", fit_intercept=False, tol=1e-10)
    gap_plugin = max(primal - dual, 0.0)
    gap_core = max(core.certificate.primal - core.certificate.dual, 0.0)
    # 1-strong convexity: ||w - w*|| <= sqrt(2 gap) for each; the rest is rounding of the two objectives.
    rounding = 1e-12 * (abs(primal) + abs(core.certificate.primal) + 1.0)
    radius = np.sqrt(2.0 * (gap_plugin + rounding)) + np.sqrt(2.0 * (gap_core + rounding))
    assert np.linalg.norm(w - core.solution.coef[:, 0]) <= radius
    assert gap_plugin <= 1e-6 * max(1.0, abs(primal))


def test_as_rows_gives_the_engines_row_access():
    X = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]])
    dense, sparse = as_rows(X, 1.0), as_rows(sp.coo_matrix(X), 1.0)
    for rows in (dense, sparse):
        assert (rows.n_rows, rows.n_columns, rows.dimension, rows.bias) == (2, 3, 4, 1.0)
    assert type(dense).__name__ == "DenseRows" and type(sparse).__name__ == "SparseRows"
    assert as_rows(X, 0.0).dimension == 3


def test_check_signs_and_index_array_refuse_by_name():
    assert check_signs([[1, -1], [-1, 1]], 2).dtype == np.float64
    with pytest.raises(ValueError, match="Y must hold the signs -1 and \\+1 only"):
        check_signs([[0, 1]], 1)
    copy = index_array(np.array([3, 1], dtype=np.int32), "pair_row")
    assert copy.dtype == np.intp and not copy.flags.writeable
    with pytest.raises(ValueError, match="pair_row must be a 1-D integer array"):
        index_array(np.array([1.0, 2.0]), "pair_row")
    with pytest.raises(ValueError, match="pair_row holds values beyond the range of int32"):
        index_array(np.array([2**40]), "pair_row", dtype=np.int32)
    with pytest.raises(ValueError, match="pair_row holds values beyond"):
        index_array(np.array([2**64 - 1], dtype=np.uint64), "pair_row")
