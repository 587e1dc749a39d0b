"""make_correlated_multilabel draws the same data bit for bit whatever the CPU's code paths.

The promise "deterministic for an integer random_state" has to hold across machines: the
tests and ``mlcore demo`` are written against one draw.  A machine is imitated here by the
switches the libraries offer: OpenBLAS's core type (``OPENBLAS_CORETYPE``: SSE3-only
Prescott, AVX SandyBridge, AVX2/FMA Haswell) and thread count, numpy's SIMD dispatch
(``NPY_DISABLE_CPU_FEATURES``) and glibc's FMA variants of exp/log1p that the normal
sampler calls (``GLIBC_TUNABLES``).  Each runs in a fresh interpreter, since all of them are
read once at load time, and must give the sha256 of X, Y and W^T W of this process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from multilabel_core.datasets import make_correlated_multilabel

DRAWS = [
    *({"random_state": seed} for seed in range(6)),
    # low rank, splitting the repeated eigenvalue 1 - rho, with a short last pair block
    {"n_samples": 300, "n_features": 4, "n_labels": 9, "rank": 3, "group_size": 2, "random_state": 7},
    # rho = 0: one eigenvalue repeated L times; d = L, so Q is a square Gaussian orthonormalised
    {"n_samples": 200, "n_features": 13, "n_labels": 13, "correlation": 0.0, "random_state": 8},
]

SCRIPT = """
import hashlib, json, sys
import numpy as np
from multilabel_core.datasets import make_correlated_multilabel
try:
    import threadpoolctl
    openblas = sorted({str(info.get("architecture")) for info in threadpoolctl.threadpool_info()
                       if info["internal_api"] == "openblas"})
except ImportError:
    openblas = []
digest = lambda a: hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()
hashes = []
for kwargs in json.loads(sys.argv[1]):
    ds, cov = make_correlated_multilabel(**kwargs, return_covariance=True)
    hashes.append([digest(ds.X), digest(ds.Y), digest(cov)])
print(json.dumps({"hashes": hashes, "openblas": openblas}))
"""

SWITCHES = ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "NPY_DISABLE_CPU_FEATURES",
            "GLIBC_TUNABLES")


def _hashes_here():
    import hashlib

    digest = lambda a: hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()  # noqa: E731
    out = []
    for kwargs in DRAWS:
        ds, cov = make_correlated_multilabel(**kwargs, return_covariance=True)
        out.append([digest(ds.X), digest(ds.Y), digest(cov)])
    return out


def _run(env_update):
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    env.update(env_update)
    # `python -c` puts its working directory first on sys.path: started at a checkout's root after
    # `pip install .`, it would import the unbuilt source tree instead of the installed package.
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(DRAWS)], capture_output=True, text=True,
                          env=env, timeout=120, cwd=Path(sys.executable).parent)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _enabled_numpy_dispatch_targets():
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return [name for name in __cpu_dispatch__ if __cpu_features__.get(name)]


@pytest.fixture(scope="module")
def here():
    return _hashes_here()


@pytest.fixture(scope="module")
def unforced():
    return _run({"OPENBLAS_NUM_THREADS": "1"})


def _compare(run, here):
    for kwargs, got, want in zip(DRAWS, run["hashes"], here):
        differing = [name for name, a, b in zip(("X", "Y", "W^T W"), got, want) if a != b]
        assert not differing, f"draw {kwargs}: sha256 of {differing} differ"


@pytest.mark.parametrize("threads", ["1", "2"])
def test_same_draw_for_any_openblas_thread_count(threads, here):
    _compare(_run({"OPENBLAS_NUM_THREADS": threads}), here)


@pytest.mark.parametrize("core", ["Prescott", "SandyBridge", "Haswell"])
def test_same_draw_on_every_openblas_core(core, here, unforced):
    run = _run({"OPENBLAS_CORETYPE": core, "OPENBLAS_NUM_THREADS": "2"})
    if not run["openblas"]:
        pytest.skip("numpy is not linked to OpenBLAS")
    if run["openblas"] == unforced["openblas"] and core.lower() not in {a.lower() for a in run["openblas"]}:
        pytest.skip(f"OPENBLAS_CORETYPE={core} not honoured here (OpenBLAS core {run['openblas']})")
    _compare(run, here)


def test_same_draw_without_simd_dispatch_or_fma_libm(here):
    env = {"OPENBLAS_CORETYPE": "Prescott", "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F"}
    targets = _enabled_numpy_dispatch_targets()
    if targets:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(targets)
    _compare(_run(env), here)
