"""The testing kit is itself mutation-tested: it must catch every kind of planted bug.

A small third-party plugin (tests/kit_mutation/plugin.py: a per-label L2-SVM by proximal
gradient, its own regulariser with a prox and its own solver with a Fenchel duality gap,
registered through ``MethodSpec``/``ComponentSpec`` hooks as docs/plugin-guide.md says) passes
every entry point of the kit -- ``check_method``, ``check_solver``, ``check_component`` and the
fuzz matrix's ``run_case``.  Each kind of bug in tests/kit_mutation/mutants.py is a minimal
variant of it (one overridden method), and :data:`CAUGHT` says which entry points must catch
it and what their message says: the check's name, the quantity and the tolerance.  Every
registered method passing ``check_method`` is asserted in tests/test_testing_kit_claims.py
(``test_every_registered_method_passes_the_new_checks``), not repeated here.

docs/testing.md ("The kit's own mutation suite") tabulates :data:`CAUGHT`; run the suite with
``pytest tests/test_kit_mutation.py``.
"""

from __future__ import annotations

import importlib.util
import pathlib
import re
import sys
import types
import warnings

import numpy as np
import pytest

import multilabel_core
from multilabel_core import MethodSpec, make_component
from multilabel_core.base import Problem, Regularizer, Solution
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.plugins import get_plugin_manager
from multilabel_core.testing import check_component
from multilabel_core.testing.checks import check_method, check_solver
from multilabel_core.testing.fuzz import method_cases, run_case

HERE = pathlib.Path(__file__).parent / "kit_mutation"


def _load(name: str, path: pathlib.Path) -> types.ModuleType:
    """A module loaded by path (the test tree is not a package; mutants.py imports the plugin by this name)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


plugin = _load("kit_mutation_plugin", HERE / "plugin.py")
mutants = _load("kit_mutation_mutants", HERE / "mutants.py")


def method_name(kind: str) -> str:
    """The name the fixture registers the planted ``kind`` under."""
    return f"kit_bug_{list(mutants.KINDS).index(kind)}"


@pytest.fixture
def registered():
    """The plugin, its trusted mutant parts and one method per planted kind, registered for one test."""
    methods = types.ModuleType("kit_mutation_methods")

    def register_methods(register):
        for kind, (estimator, _) in mutants.KINDS.items():
            register(MethodSpec(name=method_name(kind), estimator=estimator, citation=plugin.CITATION,
                                parts=plugin.KitSVM.PARTS))

    methods.register_methods = multilabel_core.hookimpl(register_methods)
    manager = get_plugin_manager()
    for module, name in ((plugin, "kit_mutation"), (mutants, "kit_mutation_mutants"), (methods, "kit_mutation_methods")):
        manager.register(module, name=name)
    yield
    for name in ("kit_mutation", "kit_mutation_mutants", "kit_mutation_methods"):
        manager.unregister(name=name)


# -- the kit's entry points, as a plugin author calls them -------------------------------------


def problems():
    """Small per-label L2-SVM problems ``(X, Y signs, C)`` for check_solver."""
    found = []
    for seed, (n, d, labels, C) in enumerate([(30, 4, 2, 1.0), (40, 6, 3, 0.1), (25, 3, 2, 10.0)]):
        data = make_correlated_multilabel(n_samples=n, n_features=d, n_labels=labels, random_state=seed)
        found.append((np.asarray(data.X, dtype=np.float64), np.where(data.Y > 0, 1.0, -1.0), C))
    return found


def design(X):
    return np.hstack([X, np.ones((X.shape[0], 1))])


def dual_gradient(problem, alpha):
    """Gradient of the L2-SVM dual ``1/2 a^T (Q + I / (2C)) a - e^T a``, Q = (y y^T) .* (A A^T), per label."""
    X, S, C = problem
    A = design(X)
    return S * (A @ (A.T @ (alpha * S))) + alpha / (2 * C) - 1.0


def solver_harness(solver_class=plugin.ProximalGradient, regularizer_class=plugin.HalfSquaredNorm):
    """``solve(problem, *, random_state, warm_start) -> (alpha, certificate)``: the plugin's solver seen as a dual solver.

    Its dual variables are the solver's own dual point at the returned weights; a warm start
    from a returned ``alpha`` is the Solution that solve returned (what ComposedEstimator passes
    on a warm refit), any other ``alpha`` the weights ``V = A^T (alpha * y)`` it determines (the
    gradient of the conjugate of 1/2 ||V||^2).  The solver runs at ``tol=1e-13``, a relative gap
    near the rounding of its objectives, so that the dual point is optimal to within KKT_TOL.
    """
    returned = {}

    def solve(problem, *, random_state, warm_start=None):
        X, S, C = problem
        parts = {role: make_component(role, name) for role, name in
                 (("loss", "squared_hinge"), ("relation", "independent"), ("kernel", "linear"))}
        task = Problem(X, S, parts["loss"], regularizer_class(), parts["relation"], parts["kernel"], C=C)
        start = None
        if warm_start is not None:
            V = design(X).T @ (warm_start * S)
            start = returned.get(np.asarray(warm_start).tobytes(), Solution(coef=V[:-1], intercept=V[-1]))
        solver = solver_class(tol=1e-13, max_iter=5000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a planted bug's ConvergenceWarning: the certificate says it too
            fit = solver.solve(task, warm_start=start)
        V = np.vstack([fit.solution.coef, fit.solution.intercept[None, :]])
        alpha = S * solver.dual_point(task, design(X) @ V)  # the solver's U, sign-multiplied
        returned[alpha.tobytes()] = fit.solution
        return alpha, fit.certificate

    return solve


#: Largest KKT residual of the clean solver's dual point on :func:`problems` at tol=1e-13, with a
#: margin: the dual point is a function of the primal iterate, which a relative gap of 1e-13 pins
#: to within sqrt(2e-13 P) (the primal is 1-strongly convex), and the dual gradient amplifies
#: that by ||A||^3 C; measured largest 2.3e-6.
KKT_TOL = 1e-4


def run_check_solver(solve):
    check_solver(solve, problems(), gradient=dual_gradient, upper=lambda p: np.full(p[1].shape, np.inf),
                 equality=False, kkt_tol=KKT_TOL, gap_tol=1e-9)


#: The fuzz cases run on each planted kind, in this process (run_case): dense, sparse and
#: Fortran-ordered layouts of the fuzz matrix's problem.
FUZZ_CASES = ("X float32", "X CSR", "X and Y Fortran order")


def fuzz(name):
    cases = [case for case in method_cases(name) if case.name in FUZZ_CASES]
    assert len(cases) == len(FUZZ_CASES)
    return [run_case(name, case) for case in cases]


# -- the clean plugin passes ---------------------------------------------------------------------


def test_the_clean_plugin_passes_every_entry_point_of_the_kit(registered):
    check_method("kit_svm")
    check_component(plugin.HalfSquaredNorm(), name="kit_half_squared_norm")
    run_check_solver(solver_harness())
    results = fuzz("kit_svm")
    assert {r["outcome"] for r in results} == {"ok-fit"}, results


# -- every planted kind is caught, by the checks this table names --------------------------------

#: kind of planted bug -> {entry point of the kit: regular expression its AssertionError (or the
#: fuzz outcome's detail) must match}.  Every message names the check, the quantity and the
#: tolerance; "fuzz" maps to (outcome, detail).
CAUGHT = {
    "gradient sign flipped": {
        "check_method": r"certificates: .* did not converge: relative gap [\d.e+-]+, kkt_violation.*declared tolerance gap_rtol=1e-06",
        "check_solver": r"did not converge: relative gap [\d.e+-]+ \(gap_tol=1e-09\)",
    },
    "intercept dropped at predict time": {
        "check_method": r"certified model: .*certificate_\.primal = .*\|difference\| [\d.e+-]+ > rounding bound",
        "fuzz": ("bad-output", r"certified model: .*> rounding bound"),
    },
    "convergence claimed": {
        "check_method": r"certificate claims: .* converged=True with relative gap [\d.e+-]+ > tolerance 1e-06 \(the certificate's declared gap_rtol",
        "check_solver": r"certificate claims: .* converged=True with relative gap [\d.e+-]+ > tolerance 1e-13 \(the certificate's declared gap_rtol",
    },
    "wrong conjugate: negative gap": {
        "check_method": r"certificates: .* has gap -[\d.e+-]+: it must be >= -1e-06 \(relative\)",
        "check_solver": r"negative duality gap -[\d.e+-]+ < -[\d.e+-]+ \(relative -[\d.e+-]+\): weak duality",
        # Both checks evaluate the conjugate against f and a point of equality; which one the example that
        # hypothesis shrinks to reaches first depends on the draw (the zero point passes the first).
        "check_component": r"(Fenchel-Young equality at the gradient|prox optimality \(Fenchel-Young certificate\)) "
                           r"fails: .* beyond the rounding tolerance",
        "fuzz": ("false-converged", r"certificate claims: converged with relative gap -[\d.e+-]+ outside \[-0\.01, 0\.01\]"),
    },
    "wrong conjugate: the bias's share of the dual forgotten": {
        "check_method": r"certificates: .* has gap -[\d.e+-]+: it must be >= -1e-06 \(relative\)",
        "check_solver": r"negative duality gap -[\d.e+-]+ < -[\d.e+-]+ \(relative -[\d.e+-]+\): weak duality",
        "fuzz": ("false-converged", r"certificate claims: converged with relative gap -[\d.e+-]+ outside \[-0\.01, 0\.01\]"),
    },
    "wrong dual box": {
        "check_method": r"certificates: .* did not converge: relative gap [\d.e+-]+,.*declared tolerance gap_rtol=1e-06",
        "check_solver": r"did not converge: relative gap [\d.e+-]+ \(gap_tol=1e-09\)",
    },
    "off-by-one in the bias": {
        "check_method": r"certified model: .*\|difference\| [\d.e+-]+ > rounding bound",
        "check_solver": r"KKT violated: label \d+, example \d+ .* has projected gradient -?[\d.e+-]+, \|\.\| > tol=0\.0001",
        "fuzz": ("bad-output", r"certified model: .*> rounding bound"),
    },
    "a prox that is not a prox": {
        "check_method": r"certificates: .* did not converge: relative gap [\d.e+-]+,.*declared tolerance gap_rtol=1e-06",
        "check_solver": r"did not converge: relative gap [\d.e+-]+ \(gap_tol=1e-09\)",
        "check_component": r"prox optimality .*fails: .* beyond the rounding tolerance",
    },
    "a decision function that ignores a label": {
        "check_method": r"certified model: .*\|difference\| [\d.e+-]+ > rounding bound",
        "fuzz": ("bad-output", r"certified model: .*> rounding bound"),
    },
    "warm start ignored": {
        "check_method": r"warm start: .* took \d+ iterations .* more than warm_start_passes=1",
        "check_solver": r"warm started at the optimum took \d+ iterations, more than 1",
    },
    "a model that depends on row order": {
        # Not the fuzz matrix: on its 30 x 5 problem the fit without the last row is certified for every row
        # too (every case ok-fit: that row's loss is 0 at the optimum, which the row order cannot change).
        "check_method": r"certified model: .*\|difference\| [\d.e+-]+ > rounding bound",
    },
    "predict not the documented function of decision_function": {
        "check_method": r"predictions: .*predict is not \[decision_function > 0\] at \d+ of \d+ entries \(tolerance 0",
        "fuzz": ("bad-output", r"predictions: predict is not \[.*\] at \d+ entries \(tolerance 0\)"),
    },
    "state leaking between fits": {
        "check_method": r"determinism: .* after a fit on other data .* largest \|difference\| [\d.e+-]+ > tolerance 0",
    },
}

CASES = [(kind, entry) for kind, entries in CAUGHT.items() for entry in entries]


def test_the_table_covers_every_planted_kind():
    assert set(CAUGHT) == set(mutants.KINDS) and len(CAUGHT) >= 8


def catch(kind: str, entry: str) -> str:
    """The failure ``entry`` reports for the planted ``kind`` (AssertionError's message, or the fuzz detail)."""
    estimator, part = mutants.KINDS[kind]
    if entry == "fuzz":
        results = fuzz(method_name(kind))
        expected = CAUGHT[kind]["fuzz"][0]
        assert all(r["outcome"] == expected for r in results), [(r["outcome"], r["detail"][:200]) for r in results]
        return "\n".join(r["detail"] for r in results)
    with pytest.raises(AssertionError) as error:
        if entry == "check_method":
            check_method(MethodSpec(name=method_name(kind), estimator=estimator, citation=plugin.CITATION,
                                    parts=plugin.KitSVM.PARTS))
        elif entry == "check_component":
            check_component(part(), name=part.__name__, max_examples=30)
        elif issubclass(part, Regularizer):
            run_check_solver(solver_harness(regularizer_class=part))
        else:
            run_check_solver(solver_harness(solver_class=part))
    return str(error.value)


@pytest.mark.parametrize("kind, entry", CASES, ids=[f"{kind}-{entry}" for kind, entry in CASES])
def test_each_planted_kind_is_caught_with_the_check_quantity_and_tolerance_named(registered, kind, entry):
    message = catch(kind, entry)
    pattern = CAUGHT[kind][entry]
    pattern = pattern[1] if isinstance(pattern, tuple) else pattern
    assert re.search(pattern, message, flags=re.DOTALL), message[:1500]


def test_docs_table_lists_every_planted_kind():
    """docs/testing.md's table of the mutation suite has one row per kind of CAUGHT, in its order."""
    doc = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "testing.md").read_text()
    section = doc.split("## The kit's own mutation suite", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith(("| planted", "| ---"))]
    assert len(rows) == len(CAUGHT), rows
    for row, (kind, entries) in zip(rows, CAUGHT.items()):
        cells = [cell.strip() for cell in row.strip("|").split(" | ")]
        assert cells[0].split(" (")[0] in (kind, kind.replace(":", ",")), (cells[0], kind)
        for column, entry in enumerate(("check_method", "check_solver", "check_component", "fuzz"), start=1):
            assert (entry in entries) == (not cells[column].startswith("-")), (kind, entry, cells[column])
