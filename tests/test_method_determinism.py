"""Every registered method fits the same model in concurrent threads, serially, and in another process.

Two fits of one method with one seed on one problem are the same model, whatever else runs at
the same time: no state is shared between estimators (a cache, a global generator, a module
level buffer), and nothing depends on the process (hash seeds, addresses).  "The same" is
within the rounding the testing kit defines for two evaluations of one model's scores
(:func:`multilabel_core.testing.rounding.score_rounding_bound`, or
``PERSISTENCE_FALLBACK_RTOL`` of the largest score for scores it cannot bound), and the
predictions agree wherever a score is farther than that from its threshold.

BLAS runs on one thread here: the property is about the estimators' own state, and some BLAS
libraries sum in a thread-count-dependent order when two callers share their pool.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from multilabel_core import get_method, list_methods, make_method
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.testing.checks import PERSISTENCE_FALLBACK_RTOL
from multilabel_core.testing.rounding import score_rounding_bound

METHODS = [spec.name for spec in list_methods()]


def problem():
    data = make_correlated_multilabel(150, 8, 4, random_state=1)
    return data.X, data.Y


def seeded(method):
    """The method with its defaults and, when it draws random numbers, seed 0."""
    params = get_method(method).estimator().get_params(deep=False)
    return make_method(method, **({"random_state": 0} if "random_state" in params else {}))


def rounding(estimator, X, scores) -> np.ndarray:
    bound = score_rounding_bound(estimator, X, scores)
    if bound is None:
        bound = np.full(scores.shape, PERSISTENCE_FALLBACK_RTOL * np.max(np.abs(scores), initial=0.0))
    return bound


def margins(estimator, X, scores) -> np.ndarray:
    """Scores relative to the threshold ``predict`` applies: 0, or a learned per-row threshold."""
    if hasattr(estimator, "decision_threshold"):
        return scores - np.asarray(estimator.decision_threshold(X))[:, None]
    return scores


def assert_same_model(reference, other, what):
    """``reference`` and ``other`` are (scores, rounding bound, margins, predictions)."""
    scores, bound, margin, predictions = reference
    difference = np.abs(other[0] - scores)
    assert np.all(difference <= bound), (
        f"{what}: scores differ by up to {difference.max():.3g}, beyond the rounding bound "
        f"(largest excess {np.max(difference - bound):.3g})"
    )
    # Predictions agree where the margin is clear of both evaluations' rounding (a learned
    # threshold is computed from the scores, so its own rounding is of the same order).
    clear = np.abs(margin) > 4 * bound + PERSISTENCE_FALLBACK_RTOL * np.max(np.abs(scores), initial=0.0)
    assert np.array_equal(other[3][clear], predictions[clear]), f"{what}: predictions differ"


def outputs(estimator, X):
    scores = estimator.decision_function(X)
    return scores, rounding(estimator, X, scores), margins(estimator, X, scores), estimator.predict(X)


@pytest.mark.parametrize("method", METHODS)
def test_fits_in_two_threads_at_once_equal_serial_fits(method):
    X, Y = problem()
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        serial = [seeded(method).fit(X, Y) for _ in range(2)]
        threaded = [seeded(method), seeded(method)]
        barrier = threading.Barrier(len(threaded))
        errors = []

        def fit(estimator):
            try:
                barrier.wait()
                estimator.fit(X, Y)
            except BaseException as exc:  # noqa: BLE001 -- reported in the main thread
                errors.append(exc)

        threads = [threading.Thread(target=fit, args=(estimator,)) for estimator in threaded]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not errors, f"a threaded fit raised {errors[0]!r}"
    reference = outputs(serial[0], X)
    for what, estimator in [("second serial fit", serial[1]), ("thread 1", threaded[0]), ("thread 2", threaded[1])]:
        assert_same_model(reference, outputs(estimator, X), what)


CHILD = """
import json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[2])
from test_method_determinism import outputs, problem, seeded

X, Y = problem()
print(json.dumps({method: [a.tolist() for a in outputs(seeded(method).fit(X, Y), X)] for method in json.loads(sys.argv[1])}))
"""


@pytest.fixture(scope="module")
def two_processes(request):
    """Every method fitted with seed 0 in two fresh interpreters, at the same time."""
    here = str(request.path.parent)
    env = dict(os.environ) | {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    # The child runs outside the checkout: an unbuilt multilabel_core/ in the working
    # directory would shadow the installed package (CI runs from the checkout).
    runs = [
        subprocess.Popen([sys.executable, "-c", CHILD, json.dumps(METHODS), here], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, cwd=tempfile.gettempdir())
        for _ in range(2)
    ]  # fmt: skip
    outputs = [run.communicate(timeout=300) for run in runs]
    for run, (_, stderr) in zip(runs, outputs):
        assert run.returncode == 0, stderr
    return [json.loads(stdout) for stdout, _ in outputs]


@pytest.mark.parametrize("method", METHODS)
def test_the_same_seed_gives_the_same_model_in_another_process(method, two_processes):
    first, second = ([np.array(a) for a in run[method]] for run in two_processes)
    first[1] = np.maximum(first[1], second[1])
    assert_same_model(first, second, "another process")
