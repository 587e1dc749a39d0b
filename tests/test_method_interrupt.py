"""Ctrl-C stops a long fit of every registered method.

Each method fits, in a subprocess, a problem that takes many seconds (ten or more on the
development machine); SIGINT is sent once the fit has run for a second.  The fit must end in
KeyboardInterrupt, with nothing caught or swallowed on the way.  The Cython solvers check for
signals inside their loops (docs/solvers/smo.md, cd.md); the scikit-learn baselines return to
Python between labels, so their delay is at most one label's solve, a second or two here.
The delay is printed, not asserted: ``HANG_LIMIT`` only tells a hang from a slow stop on a
loaded machine (one CI run took over ten seconds to stop liblinear).

A method registered without an entry in ``LONG_FITS`` gets ``DEFAULT_FIT``; when that fit
ends before the signal the test fails and asks for an entry, rather than passing unchecked.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from multilabel_core import list_methods

METHODS = [spec.name for spec in list_methods()]
HANG_LIMIT = 120.0
DELAY = 1.0

# (n_samples, n_features, parameters[, n_labels]): a noisy problem (noise=2), 5 labels unless
# given, and a tight tolerance, sized so that the fit outlasts the delay by several seconds.
# ovr_svc stops between labels (scikit-learn's libsvm does not check for signals), so its
# problem is many labels of about 1.5 s each rather than a few long ones.
DEFAULT_FIT = (20000, 50, {})
_RANKING = (5000, 50, {"C": 1e3, "tol": 1e-10, "max_iter": 10**7})
LONG_FITS = {
    "br": (20000, 100, {"C": 1e3, "tol": 1e-10, "max_iter": 10**7}),
    # Lazy learners fit in well under the delay on the default problem; the proportional cut's inner folds take longer.
    "brknn_a": (20000, 50, {"thresholding": "proportional_cut"}),
    "brknn_b": (20000, 50, {"thresholding": "proportional_cut"}),
    # FISTA on least squares converges in a second on the default problem: a tolerance it needs many steps for.
    # A tolerance below what float64 certifies: FISTA iterates until its steps stall in rounding, about 30 steps,
    # each a few products with an 80000 x 500 X (3-4 s on a loaded 2-core machine).
    "llsf": (80000, 500, {"beta": 1e-3, "tol": 1e-300, "max_iter": 10**7}),
    "trace_ls": (80000, 500, {"lam": 1e-3, "tol": 1e-300, "max_iter": 10**7}),
    "bsvm": (4000, 20, {"lam": 1e-6, "tol": 1e-8}),
    "clarank": _RANKING,
    "classifier_chain": (50000, 200, {"C": 1e4, "tol": 1e-10, "max_iter": 10**7}),
    "ecc": (50000, 200, {"C": 1e4, "max_iter": 10**5}),
    "label_powerset": (50000, 200, {"C": 1e4, "max_iter": 10**5}),
    "rakel": (50000, 200, {"C": 1e4, "max_iter": 10**5}, 20),  # 40 small subsets: 6 s here (5 labels: 1.7 s, too close)
    "cmlfs": _RANKING,
    "larank": _RANKING,
    "mlfs": _RANKING,
    "mlknn": (15000, 50, {}),
    "mlrl": (3000, 20, {"lam": 1e-6, "tol": 1e-10, "smo_tol": 1e-8}),
    "mtrl": (3000, 20, {"lam1": 1e-6, "lam2": 1e-6, "tol": 1e-10, "smo_tol": 1e-8}),
    "ovr_linear": (100000, 200, {"C": 1e4, "tol": 1e-10, "max_iter": 10**7}),
    "ovr_svc": (3000, 20, {"C": 1e4, "tol": 1e-8}, 12),
    # The default problem goes to the interior-point method and ends in about a second.
    "prbr": (50000, 200, {"C": 1e3}),
    "ssmlrl": (3000, 20, {"lam1": 1e-6, "lam2": 1e-5, "tol": 1e-10, "smo_tol": 1e-8}),
}

CHILD = """
import json, signal, sys, warnings
# A process started by a non-interactive shell inherits SIGINT ignored: restore Python's handler.
signal.signal(signal.SIGINT, signal.default_int_handler)
warnings.simplefilter("ignore")
from multilabel_core import make_method
from multilabel_core.datasets import make_correlated_multilabel

method, n, d, params, n_labels = json.loads(sys.argv[1])
data = make_correlated_multilabel(n, d, n_labels, noise=2.0, random_state=0)
estimator = make_method(method, **params)
print("fitting", flush=True)
try:
    estimator.fit(data.X, data.Y)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    raise
print("finished", flush=True)
"""


def interrupt(method: str) -> dict:
    """Fit ``method`` in a subprocess, SIGINT it after ``DELAY`` s of fitting; what happened."""
    n, d, params, *n_labels = LONG_FITS.get(method, DEFAULT_FIT)
    # The child runs outside the checkout: an unbuilt multilabel_core/ in the working
    # directory would shadow the installed package (CI runs from the checkout).
    process = subprocess.Popen(
        [sys.executable, "-c", CHILD, json.dumps([method, n, d, params, *(n_labels or [5])])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tempfile.gettempdir(),
    )  # fmt: skip
    try:
        first = process.stdout.readline().strip()
        if first != "fitting":
            process.wait(timeout=60)
            return {"ended_before_fit": True, "stderr": process.stderr.read()[-2000:]}
        time.sleep(DELAY)
        if process.poll() is not None:
            return {"finished_before_signal": True, "stdout": first + process.stdout.read()}
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=HANG_LIMIT)
        except subprocess.TimeoutExpired:
            return {"hang": True}
        return {
            "seconds": time.monotonic() - sent,
            "returncode": process.returncode,
            "stdout": process.stdout.read(),
            "stderr": process.stderr.read()[-2000:],
        }
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
        process.stderr.close()


@pytest.fixture(scope="module")
def interrupted():
    # Two at a time: the machine has two cores, and each fit is single-threaded but for BLAS.
    with ThreadPoolExecutor(2) as pool:
        return dict(zip(METHODS, pool.map(interrupt, METHODS)))


@pytest.mark.parametrize("method", METHODS)
def test_ctrl_c_stops_a_long_fit(method, interrupted):
    outcome = interrupted[method]
    assert not outcome.get("ended_before_fit"), f"the child failed before fitting:\n{outcome.get('stderr')}"
    assert not outcome.get("finished_before_signal"), (
        f"{method}'s fit ended within {DELAY} s: give it a longer problem in LONG_FITS"
    )
    assert not outcome.get("hang"), f"{method} did not stop within {HANG_LIMIT} s of SIGINT"
    frames = [line.strip() for line in outcome["stderr"].splitlines() if line.strip().startswith("File ")]
    print(f"{method}: stopped {outcome['seconds']:.2f} s after SIGINT, in {frames[-1] if frames else '?'}")
    assert "finished" not in outcome["stdout"], (
        f"{method}'s fit ended as the signal arrived: give it a longer problem in LONG_FITS"
    )
    assert "interrupted" in outcome["stdout"], outcome["stdout"]
    assert outcome["returncode"] != 0 and "KeyboardInterrupt" in outcome["stderr"], outcome["stderr"]
