"""Certificate: ``converged`` never outlives a non-finite duality gap."""

import math
import warnings

import attrs
import pytest

from multilabel_core import Certificate
from multilabel_core.solvers import ConvergenceWarning

FIELDS = {"kkt_violation": 0.0, "n_iter": 3, "time": 0.0, "solver": "demo"}


@pytest.mark.parametrize(
    "primal, dual",
    [(1.0, -math.inf), (math.inf, 0.0), (1.0, math.nan), (math.nan, 0.0)],
    ids=["dual=-inf", "primal=inf", "dual=nan", "primal=nan"],
)
def test_a_non_finite_gap_is_never_converged(primal, dual):
    with pytest.warns(ConvergenceWarning, match=r"demo.*gap=(inf|nan)"):
        certificate = Certificate.from_objectives(primal, dual, converged=True, **FIELDS)
    assert not math.isfinite(certificate.gap)
    assert certificate.converged is False


def test_the_invariant_holds_for_every_way_of_building_a_certificate():
    with pytest.warns(ConvergenceWarning):
        direct = Certificate(1.0, math.nan, math.nan, 0.0, 1, 0.0, True, "demo")
    assert direct.converged is False
    finite = Certificate.from_objectives(1.0, 1.0, converged=True, **FIELDS)
    with pytest.warns(ConvergenceWarning):
        evolved = attrs.evolve(finite, gap=math.inf)
    assert evolved.converged is False


def test_a_finite_gap_keeps_the_solvers_verdict_silently():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        converged = Certificate.from_objectives(2.0, 2.0 - 1e-9, converged=True, **FIELDS)
        stopped = Certificate.from_objectives(2.0, 1.0, converged=False, **FIELDS)
        # A solver that already reports converged=False (and warned itself) is not warned about again.
        no_dual = Certificate.from_objectives(2.0, math.nan, converged=False, **FIELDS)
    assert converged.converged is True and stopped.converged is False and no_dual.converged is False
