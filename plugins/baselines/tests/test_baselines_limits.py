"""The scikit-learn baselines never hang, never call an uncertified fit converged, and refuse what the solvers cannot
compute with (plugins/baselines/limits.py) with a ValueError naming it.

Fits that used to hang inside LIBSVM or LIBLINEAR (where neither Ctrl-C nor anything but SIGKILL stops them) run in
a subprocess with a timeout, so that a regression fails the test instead of hanging the suite.  That Ctrl-C stops a
long fit of every baseline is tested with every registered method in tests/test_method_interrupt.py.
"""

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from multilabel_core_plugins.baselines import (
    ClassifierChains,
    OneVsRestLinear,
    OneVsRestSVC,
)
from multilabel_core_plugins.baselines.binary import GAP_RTOL
from multilabel_core_plugins.baselines.limits import (
    FEATURE_SCALE_RANGE,
    MAX_ITER_LIMIT,
    TOL_RANGE,
    feature_scale,
)

from multilabel_core.datasets import make_correlated_multilabel

pytest.importorskip("sklearn")

#: Generous: these fits take well under a second; only a hang reaches it.
HANG_TIMEOUT = 60

_PRELUDE = """
import warnings
import numpy as np
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core_plugins.baselines import ClassifierChains, OneVsRestLinear, OneVsRestSVC
data = make_correlated_multilabel(n_samples=100, n_features=6, n_labels=3, random_state=0)
X, Y = data.X, data.Y
"""


def _run(body: str, tmp_path) -> subprocess.CompletedProcess:
    script = _PRELUDE + textwrap.dedent(body)
    try:
        # outside the checkout: `python -c` puts the working directory on sys.path
        return subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_TIMEOUT, cwd=tmp_path
        )
    except subprocess.TimeoutExpired as timeout:
        pytest.fail(f"no return within {HANG_TIMEOUT} s (a hang inside the solver); its output:\n{timeout.stdout}")


#: Each fit that hung (or crashed in the certificate, tol = 1e300) before the checks, and the refusal it gets now.
_SCALE = r"the features' scale max_i \|\|x_i\|\| = {} is outside \[1e-50, 1e\+50\]"
REFUSED = [
    ("OneVsRestLinear().fit(X * 1e300, Y)", _SCALE.format(r"4.24e\+300")),
    ("OneVsRestLinear().fit(X * 1e200, Y)", _SCALE.format(r"4.24e\+200")),
    ("OneVsRestLinear().fit(X * 1e-300, Y)", _SCALE.format("4.24e-300")),
    ("OneVsRestLinear(C=1e300).fit(X, Y)", r"C .*1e[+-]100"),
    ("OneVsRestLinear(C=1e-300).fit(X, Y)", r"C .*1e[+-]100"),
    ("ClassifierChains(C=1e300).fit(X, Y)", r"C .*1e[+-]100"),
    ("ClassifierChains(C=1e-300).fit(X, Y)", r"C .*1e[+-]100"),
    ("OneVsRestSVC(tol=1e-300).fit(X, Y)", r"tol = 1e-300 is outside \[2.22e-16, 1\)"),
    ("OneVsRestSVC(tol=1e300).fit(X, Y)", r"tol = 1e\+300 is outside \[2.22e-16, 1\)"),
]


def test_what_hung_or_crashed_the_solvers_is_refused(tmp_path):
    # One interpreter for all (a few seconds); each case prints its line first, so a hang names its case.
    body = "\n".join(
        f"print({fit!r}, flush=True)\ntry:\n    {fit}\nexcept ValueError as error:\n    print('ValueError:', error)\n"
        f"else:\n    print('fitted')"
        for fit, _ in REFUSED
    )
    result = _run(body, tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2 * len(REFUSED), result.stdout
    for (fit, message), outcome in zip(REFUSED, lines[1::2]):
        assert re.match("ValueError: .*" + message, outcome), (fit, outcome)


def test_fits_at_the_edges_of_the_accepted_ranges_return(tmp_path):
    # Inside the ranges a fit ends: certified, or not converged with the numbers (never a hang).
    result = _run(
        """
        from multilabel_core_plugins.baselines.limits import SCALE_RANGE, feature_scale
        warnings.simplefilter("ignore")
        def largest_C(Z):
            return 0.9 * SCALE_RANGE[1] / (len(Z) * (feature_scale(Z) ** 2 + 1))
        fits = [
            OneVsRestLinear(C=largest_C(X)).fit(X, Y),
            OneVsRestLinear(C=largest_C(X * 1e49)).fit(X * 1e49, Y),
            OneVsRestLinear(C=1e-100).fit(X * 1e-49, Y),
            OneVsRestLinear(model="logistic", C=largest_C(X)).fit(X, Y),
            ClassifierChains(base="linear_svc", C=1e-100).fit(X * 1e49, Y),
            OneVsRestSVC(C=1e97).fit(X, Y),
            OneVsRestSVC(C=1e-40, kernel="linear").fit(X * 1e-25, Y),
        ]
        for model in fits:
            c = model.certificate_
            assert np.isfinite(c.gap) or not c.converged, c
            print(c.converged, c.relative_gap)
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    # the largest C's leave relative gaps far above the tolerance: reported, not called converged
    verdicts = [line.split()[0] for line in result.stdout.strip().splitlines()]
    assert len(verdicts) == 7 and verdicts[0] == verdicts[1] == verdicts[3] == verdicts[5] == "False"


@pytest.fixture(scope="module")
def alternating():
    """Columns scaled by 1e-8 and 1e8 in turn: LIBLINEAR's relative rule stops far from the optimum."""
    data = make_correlated_multilabel(n_samples=100, n_features=6, n_labels=3, random_state=0)
    return data.X * np.where(np.arange(6) % 2 == 0, 1e-8, 1e8), data.Y


@pytest.mark.parametrize("estimator", [OneVsRestLinear(random_state=0), ClassifierChains(random_state=0)])
def test_a_gap_above_the_tolerance_is_not_converged(alternating, estimator):
    X, Y = alternating
    with pytest.warns(Warning, match=r"did not converge: 3 of 3 binary problems have a relative duality gap above"):
        model = estimator.fit(X, Y)
    c = model.certificate_
    # LIBLINEAR stopped on its own rule (the iteration count alone used to say converged)...
    assert c.statistics["n_budget_hit"] == 0
    # ... with gaps of order 1e9 (measured 5.7e10 and 1.4e9)
    assert c.gap > 1e6 and c.relative_gap > GAP_RTOL
    assert not c.converged and c.statistics["n_above_gap_tol"] == 3 and c.statistics["gap_rtol"] == GAP_RTOL


def test_a_certified_fit_of_the_same_data_is_converged(alternating):
    model = OneVsRestSVC().fit(*alternating)
    c = model.certificate_
    assert c.converged and c.statistics["max_relative_gap"] <= GAP_RTOL and c.statistics["n_above_gap_tol"] == 0


def test_a_vacuous_dual_point_is_not_converged():
    # At C = 1e97 LIBSVM meets its absolute tolerance with a gap as large as the objective itself.
    data = make_correlated_multilabel(n_samples=100, n_features=6, n_labels=3, random_state=0)
    with pytest.warns(Warning, match="did not converge"):
        model = OneVsRestSVC(C=1e97).fit(data.X, data.Y)
    assert model.certificate_.statistics["n_budget_hit"] == 0
    assert model.certificate_.relative_gap > 0.5 and not model.certificate_.converged


def test_budget_hits_are_counted_and_not_converged():
    data = make_correlated_multilabel(n_samples=100, n_features=6, n_labels=3, random_state=0)
    with pytest.warns(Warning):
        model = OneVsRestLinear(max_iter=1, tol=1e-12, random_state=0).fit(data.X * 100, data.Y)
    assert model.certificate_.statistics["n_budget_hit"] == 3 and not model.certificate_.converged


def test_ovr_svc_has_a_finite_iteration_budget():
    data = make_correlated_multilabel(n_samples=100, n_features=6, n_labels=3, random_state=0)
    model = OneVsRestSVC().fit(data.X, data.Y)
    assert {svc.max_iter for svc in model.estimators_} == {10**7}
    chain = ClassifierChains(base="svc").fit(data.X, data.Y)
    assert chain.chains_[0].estimators_[0].max_iter == 10**7


@pytest.mark.parametrize(
    ("estimator", "message"),
    [
        (OneVsRestSVC(tol=TOL_RANGE[0] / 2), r"tol = 1.1\d*e-16 is outside \[2.22e-16, 1\)"),
        (OneVsRestSVC(tol=1.0), r"tol = 1.0 is outside \[2.22e-16, 1\)"),
        (OneVsRestLinear(tol=1e-17), r"tol = 1e-17 is outside"),
        (ClassifierChains(tol=2.0), r"tol = 2.0 is outside"),
        (OneVsRestSVC(max_iter=MAX_ITER_LIMIT + 1), r"max_iter must be <= 2147483647"),
        (OneVsRestLinear(max_iter=2**40), r"max_iter must be <= 2147483647"),
        (ClassifierChains(max_iter=2**40), r"max_iter must be <= 2147483647"),
    ],
)
def test_out_of_range_tolerances_and_budgets_are_refused(estimator, message):
    data = make_correlated_multilabel(n_samples=40, n_features=3, n_labels=2, random_state=0)
    with pytest.raises(ValueError, match=message):
        estimator.fit(data.X, data.Y)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # not what is tested
def test_the_edges_of_the_tolerance_range_are_accepted():
    data = make_correlated_multilabel(n_samples=40, n_features=3, n_labels=2, random_state=0)
    assert OneVsRestLinear(tol=TOL_RANGE[0], random_state=0).fit(data.X, data.Y).certificate_.converged
    OneVsRestSVC(tol=0.99).fit(data.X, data.Y)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # not what is tested
@pytest.mark.parametrize("sparse", [False, True])
def test_the_features_scale_is_checked_at_its_edges(sparse):
    data = make_correlated_multilabel(n_samples=40, n_features=3, n_labels=2, random_state=0)
    X = sp.csr_matrix(data.X) if sparse else data.X
    unit = X / feature_scale(X)  # max_i ||x_i|| = 1
    low, high = FEATURE_SCALE_RANGE
    # (not the logistic models: scikit-learn refuses them an entry above 1e30 itself, with its own ValueError)
    for estimator in (OneVsRestLinear(C=1e-10), OneVsRestSVC(C=1e-10), ClassifierChains(base="linear_svc", C=1e-10)):
        estimator.fit(unit * (high * 0.99), data.Y)
        estimator.fit(unit * (low * 1.01), data.Y)
        for outside in (high * 1.01, low * 0.99):
            with pytest.raises(ValueError, match=r"the features' scale .* is outside \[1e-50, 1e\+50\]"):
                estimator.fit(unit * outside, data.Y)
    # Nothing to overflow in rows of zeros
    OneVsRestLinear().fit(np.zeros((40, 3)), data.Y)


def test_the_scale_is_computed_without_overflow():
    X = np.full((3, 4), 1e300)
    assert feature_scale(X) == pytest.approx(2e300) and feature_scale(sp.csr_matrix(X)) == pytest.approx(2e300)
    assert feature_scale(np.full((2, 4), 1e-300)) == pytest.approx(2e-300)


_LIBLINEAR = r"C \* n \* max_i \|\|x~_i\|\|\^2"
_LIBSVM = r"C \* n \* max \|K\(x_i, x_j\)\|"


@pytest.mark.parametrize(
    ("estimator", "scale", "message"),
    [
        (OneVsRestLinear(C=1.0), 1e49, _LIBLINEAR + r".* = 2.80e\+100 .* is above 1e\+100: .*Use C <= 0.357"),
        (ClassifierChains(C=1e3), 1e48, _LIBLINEAR + r".* is above 1e\+100"),
        (OneVsRestSVC(C=1e-60, kernel="linear"), 1e-30, _LIBSVM + r" \(linear kernel\) .* is below 1e-100"),
        (OneVsRestSVC(C=1e-30, kernel="linear"), 1e19, r"K\(x_i, x_j\)\| = .* is above 1e\+38: .* single precision"),
        (OneVsRestSVC(kernel="poly", degree=40, gamma=100.0), 1.0, r"poly kernel value .* is above 1e\+38"),
        (OneVsRestSVC(C=1e99), 1.0, _LIBSVM + r" \(rbf kernel\) .* is above 1e\+100"),
    ],
)
def test_products_beyond_double_precision_are_refused(estimator, scale, message):
    data = make_correlated_multilabel(n_samples=40, n_features=3, n_labels=2, random_state=0)
    with pytest.raises(ValueError, match=message):
        estimator.fit(data.X * scale, data.Y)
