"""The fuzz matrix of every registered method: hostile arrays, parameters and numerical edges.

The cases and the outcomes are those of :mod:`multilabel_core.testing.fuzz` (docs/testing.md,
The fuzz matrix).  Every case must end in a fit with finite outputs and honest certificates, or
in a ValueError.  The rule on exception types: public input errors are ValueError in this
project, wrong Python types included (a string for ``C``, a list for ``max_iter``), so a
TypeError fails the case like any other exception type.  A crash, a hang, a converged
certificate with a gap beyond its tolerance, non-finite outputs, or a fit on input the
validation contract refuses fail it too.

The methods come from the registry, so a family is covered as soon as it is registered.  The
cases of one method run in two worker subprocesses (the harness kills a case that hangs and
goes on with the next), so one test per method reports every failing case at once.

The wide case (30 rows x 10^6 sparse columns holding 450 values, under a memory budget and a
hang limit of its own) runs for every registered method: a fit whose cost follows the declared
width ends in a MemoryError beyond the budget or a hang, and fails.  It found ecc,
label_powerset, rakel and label_partition (a (10^6, classes) logistic regression per label set:
1.76 GB; ECC's 10 chains: 28 s), which now fit the columns that hold a value
(plugins/baselines/tests/test_ensembles_width.py), as mlfs, cmlfs, lieml and llsf did before.
"""

from __future__ import annotations

import pytest

from multilabel_core import list_methods
from multilabel_core.testing.fuzz import (
    CATEGORIES,
    FAILURES,
    OUTCOMES,
    WIDE_CASE,
    format_failures,
    method_cases,
    run_method,
)

METHODS = [spec.name for spec in list_methods()]

@pytest.mark.parametrize("method", METHODS)
def test_every_fuzz_case_fits_or_raises_value_error(method):
    results = run_method(method, n_workers=2)
    assert sum(r["name"] == WIDE_CASE for r in results) == 1, "the wide case runs for every method"
    failing = [r for r in results if r["outcome"] in FAILURES]
    assert not failing, f"{len(failing)} of {len(results)} fuzz cases of {method!r} failed:\n" + format_failures(failing)


def test_every_method_has_the_wide_case():
    for method in METHODS:
        assert sum(case.name == WIDE_CASE for case in method_cases(method)) == 1, method


@pytest.mark.parametrize("method", METHODS)
def test_the_matrix_covers_every_category_and_parameter(method):
    from multilabel_core import get_method

    cases = method_cases(method)
    assert [c.name for c in cases] == [c.name for c in method_cases(method)], "the case list is deterministic"
    assert len({(c.category, c.name) for c in cases}) == len(cases), "case names are unique"
    counts = {category: sum(c.category == category for c in cases) for category in CATEGORIES}
    assert counts["arrays"] >= 60 and counts["numerics"] >= 10, counts
    tried = {name for c in cases for name in c.params if c.category == "params"}
    assert tried == set(get_method(method).estimator().get_params(deep=False))


def test_the_harness_classifies_crashes_hangs_and_exception_types(monkeypatch, tmp_path):
    """The harness itself, on a method registered by a module made for the purpose."""
    plugin = tmp_path / "fuzz_probe_plugin.py"
    plugin.write_text(PROBE_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    from multilabel_core.plugins import get_plugin_manager

    manager = get_plugin_manager()
    import fuzz_probe_plugin

    manager.register(fuzz_probe_plugin, name="fuzz_probe_plugin")
    try:
        cases = method_cases("fuzz_probe")
        index = {c.name: i for i, c in enumerate(cases)}
        chosen = {
            "C=0": "crash",  # os.abort() in the worker
            "C=-1": "hang",  # sleeps past the timeout
            "C=-0.5": "wrong-exception",  # TypeError
            "C=1e300": "false-converged",  # converged with a relative gap of 1
            "C=1e-300": "bad-output",  # NaN scores
            "C=2.5": "ok-fit",
            "C=nan": "clear-error",
            "X nan": "accepted-invalid",
            WIDE_CASE: "wrong-exception",  # a (width, 100) dense matrix: beyond the wide case's budget
        }
        results = run_method("fuzz_probe", timeout=3.0, n_workers=2, plugins=["fuzz_probe_plugin"],
                             indices=[index[name] for name in chosen])  # fmt: skip
    finally:
        manager.unregister(name="fuzz_probe_plugin")
    assert {r["name"]: r["outcome"] for r in results} == chosen
    assert set(chosen.values()) == set(OUTCOMES)
    assert "C=0" in format_failures(results) and "C=2.5" not in format_failures(results)
    wide = next(r for r in results if r["name"] == WIDE_CASE)
    assert wide["detail"].startswith("MemoryError beyond the case's budget of 549 MiB"), wide


PROBE_PLUGIN = '''
import math, os, time
import numpy as np
from multilabel_core import Certificate, hookimpl
from multilabel_core.registry import MethodSpec


class Probe:
    """Misbehaves on purpose according to C."""

    def __init__(self, C=1.0):
        self.C = C

    def get_params(self, deep=True):
        return {"C": self.C}

    def set_params(self, **params):
        self.C = params.get("C", self.C)
        return self

    def fit(self, X, Y):
        C = self.C
        if isinstance(C, float) and math.isnan(C):
            raise ValueError("C is nan")
        if np.shape(X)[1] >= 10**6:
            np.ones((np.shape(X)[1], 100))  # a cost that follows the declared width
        if C == 0:
            os.abort()
        if C == -1:
            time.sleep(60)
        if C == -0.5:
            raise TypeError("a wrong type")
        X = np.asarray(X, dtype=float)
        self.n_labels_ = np.shape(Y)[1]
        gap = 1.0 if C == 1e300 else 0.0
        self.certificate_ = Certificate(primal=gap, dual=0.0, gap=gap, kkt_violation=0.0, n_iter=1, time=0.0,
                                        converged=True, solver="probe")
        return self

    def decision_function(self, X):
        fill = math.nan if self.C == 1e-300 else 0.5
        return np.full((np.shape(X)[0], self.n_labels_), fill)

    def predict(self, X):
        return (self.decision_function(X) > 0).astype(int)


@hookimpl
def register_methods(register):
    register(MethodSpec(name="fuzz_probe", estimator=Probe, citation="none: a test double of the fuzz harness",
                        parts={}, param_grid={"C": [1.0]}, description="misbehaves on purpose"))
'''


#: The cases whose Y has a label constant on the training rows: data every method accepts, not an error.
CONSTANT_LABEL_CASES = ("Y column all 0", "Y column all 1", "Y all 0", "Y all 1")


@pytest.mark.parametrize("method", METHODS)
def test_a_constant_label_column_is_fitted_not_refused(method):
    from multilabel_core.testing.fuzz import run_case

    cases = [case for case in method_cases(method) if case.name in CONSTANT_LABEL_CASES]
    assert [case.name for case in cases] == list(CONSTANT_LABEL_CASES)
    outcomes = {case.name: run_case(method, case) for case in cases}
    wrong = {name: (r["outcome"], r.get("detail")) for name, r in outcomes.items() if r["outcome"] != "ok-fit"}
    assert not wrong, wrong
    assert all("ConstantLabelWarning" in r["detail"] for r in outcomes.values())
