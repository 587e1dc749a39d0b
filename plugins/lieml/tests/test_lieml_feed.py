"""Label enhancement in front of a generic per-label solver: LowRankEnhancement.feed and the fed fits.

Tao, Xu & Geng, *Labeling Information Enhancement for Multi-label Learning with Low-Rank Subspace*:
the enhanced labels U (T1, eq. 6) become the targets of a per-label model -- U itself for a
real-target loss, the signs of U for a sign loss (LowRankEnhancement.feed says why).  Fed and
direct fits are compared within the bound their certificates give: each primal here has the
1-strongly convex term 1/2 ||(w, b)||^2 (the bias is a regularised constant feature in CD and in
L-BFGS), so ||v - v*|| <= sqrt(2 gap) and |t(x) - t*(x)| <= ||(x, 1)|| (sqrt(2 gap_1) + sqrt(2 gap_2)).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from multilabel_core import ComposedEstimator
from multilabel_core.base import CapabilityError, Problem
from multilabel_core.composition import feed_problem
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.losses import EpsilonInsensitive, SquaredHinge
from multilabel_core.plugins import make_component
from multilabel_core.regularizers import Frobenius
from multilabel_core.relations import Independent
from multilabel_core.solvers import ConvergenceWarning
from multilabel_core.validation import to_signs
from multilabel_core_plugins.lieml import EnhancedTargets, LowRankEnhancement, fed_targets

#: A setting at which the enhancement turns labels over on the data below, with a certified FPC
#: (7 of 480 on seed 0; the paper's mu_min = 1e-5 turns none over there, as on emotions and yeast).
TURNING = {"lam": 0.1, "mu_min": 1e-3}


@pytest.fixture(scope="module")
def data():
    d = make_correlated_multilabel(n_samples=80, random_state=0)
    return np.asarray(d.X, dtype=np.float64), np.asarray(d.Y)


def _bound(X, *certificates) -> np.ndarray:
    """Per row, ||(x, 1)|| (sum of sqrt(2 gap)) over the fits' certificates (gaps clipped at 0: rounding)."""
    radius = sum(np.sqrt(2.0 * max(float(c.gap), 0.0)) for c in certificates)
    return np.sqrt((X**2).sum(axis=1) + 1.0)[:, None] * radius


def _fit(X, Y, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return ComposedEstimator(**kwargs).fit(X, Y)


def test_feed_keeps_rows_kernel_and_shape_and_gives_the_enhanced_targets(data):
    X, Y = data
    relation = LowRankEnhancement(**TURNING)
    kernel = make_component("kernel", "linear")
    signs = to_signs(Y)
    for loss, Y_problem in ((EpsilonInsensitive(), Y.astype(np.float64)), (SquaredHinge(), signs)):
        problem = Problem(X, Y_problem, loss, Frobenius(), relation, kernel)
        fed = feed_problem(problem)  # the core's contract check: same X and kernel objects, same shape
        assert isinstance(fed.relation, EnhancedTargets) and not fed.relation.learned and fed.relation.state == ()
        assert fed.loss is loss and fed.C == problem.C
        U = relation.enhance(X, signs).labels
        # Both come from the same deterministic FPC run on the same input (BLAS pinned to one thread inside).
        np.testing.assert_allclose(fed.relation.enhancement.labels, U, rtol=1e-12, atol=1e-12)
        if loss.target == "real":
            np.testing.assert_allclose(fed.Y, U, rtol=1e-12, atol=1e-12)
        else:
            assert set(np.unique(fed.Y)) <= {-1.0, 1.0}
            np.testing.assert_array_equal(fed.Y, np.where(U > 0, 1.0, -1.0))
        turned = int(np.count_nonzero(fed.Y * signs < 0)) if loss.target == "sign" else int(np.count_nonzero(U * signs < 0))
        assert fed.relation.turned_over == turned


def test_fed_targets_keep_the_logical_label_where_the_enhancement_is_zero():
    class Record:
        labels = np.array([[0.0, -2.0], [3.0, 0.0]])

    signs = np.array([[-1.0, 1.0], [1.0, 1.0]])
    targets, turned = fed_targets(Record, signs, "sign")
    np.testing.assert_array_equal(targets, [[-1.0, -1.0], [1.0, 1.0]])
    assert turned == 1
    with pytest.raises(ValueError, match="target"):
        fed_targets(Record, signs, "ordinal")


def test_br_on_enhanced_labels_is_cd_on_the_relabelled_targets(data):
    X, Y = data
    fed = _fit(X, Y, loss="squared_hinge", relation="label_enhancement", solver="cd", relation_params=TURNING)
    assert fed.fed_ and fed.solver_name_ == "cd"
    record = fed.solution_.relation_state.fed_relation
    assert record.turned_over > 0
    # The same solver on the enhanced targets, built by hand.
    U = LowRankEnhancement(**TURNING).enhance(X, to_signs(Y)).labels
    targets = np.where(U > 0, 1.0, -1.0)
    direct = make_component("solver", "cd").solve(
        Problem(X, targets, SquaredHinge(), Frobenius(), Independent(), make_component("kernel", "linear"))
    )
    scores = fed.decision_function(X)
    gap = np.abs(scores - (X @ direct.solution.coef + direct.solution.intercept))
    assert np.all(gap <= _bound(X, fed.step_certificates_[-1], direct.certificate))
    # The enhancement changed the model: farther from the model on the logical labels than both bounds.
    plain = _fit(X, Y, loss="squared_hinge", relation="independent", solver="cd")
    apart = np.abs(scores - plain.decision_function(X))
    assert np.any(apart > _bound(X, fed.step_certificates_[-1], plain.certificate_))
    # The enhancement's certificate is the fit's first step.
    assert fed.step_certificates_[0] is record.enhancement.certificate and fed.certificate_.converged


def test_msvr_on_enhanced_labels_is_lbfgs_on_u(data):
    X, Y = data
    fed = _fit(X, Y, loss="epsilon_insensitive", relation="label_enhancement", solver="lbfgs")
    U = LowRankEnhancement().enhance(X, to_signs(Y)).labels
    direct = make_component("solver", "lbfgs").solve(
        Problem(X, U, EpsilonInsensitive(), Frobenius(), Independent(), make_component("kernel", "linear"))
    )
    scores = fed.decision_function(X)
    gap = np.abs(scores - (X @ direct.solution.coef + direct.solution.intercept))
    assert np.all(gap <= _bound(X, fed.step_certificates_[-1], direct.certificate))
    # The paper's mu_min turns no label over here, but the magnitudes of U move the regressor.
    assert fed.solution_.relation_state.fed_relation.turned_over == 0
    plain = _fit(X, Y, loss="epsilon_insensitive", relation="independent", solver="lbfgs")
    assert np.any(np.abs(scores - plain.decision_function(X)) > _bound(X, fed.step_certificates_[-1], plain.certificate_))


def test_bsvm_on_enhanced_labels_fits_by_name_and_auto_feeds_cd(data):
    X, Y = data
    bsvm = _fit(X, Y, loss="hinge", relation="label_enhancement", kernel="rbf", solver="smo", relation_params=TURNING)
    assert bsvm.fed_ and bsvm.solver_name_ == "smo" and all(c.converged for c in bsvm.step_certificates_)
    auto = ComposedEstimator(loss="squared_hinge", relation="label_enhancement", relation_params=TURNING)
    choice = auto.choose_solver(X, Y)
    assert choice.name == "cd" and choice.fed
    # A solver that reads the enhancement itself is not fed: auto finds LIEML's for the tube loss.
    lieml = ComposedEstimator(loss="epsilon_insensitive", relation="label_enhancement", kernel="rbf")
    choice = lieml.choose_solver(X, Y)
    assert choice.name == "lieml_irwls" and not choice.fed


def test_an_unconverged_enhancement_leaves_the_fit_unconverged(data):
    X, Y = data
    estimator = ComposedEstimator(
        loss="epsilon_insensitive", relation="label_enhancement", solver="irwls", relation_params={"max_iter": 3}
    )
    with pytest.warns(ConvergenceWarning, match="gap"):
        estimator.fit(X, Y)
    first, last = estimator.step_certificates_[0], estimator.step_certificates_[-1]
    assert not first.converged and last.converged
    assert not estimator.certificate_.converged
    assert estimator.certificate_.statistics["feed_converged"] is False
    assert estimator.certificate_.statistics["feed_relative_gaps"] == [pytest.approx(first.relative_gap)]


def test_a_sign_loss_is_refused_when_no_label_is_turned_over(data):
    X, Y = data
    # At the paper's mu_min the signs of U are Y's: BR behind the enhancement would be plain BR.
    for solver in ("cd", "auto"):
        with pytest.raises(CapabilityError, match="LowRankEnhancement .* turned none of the 480 labels over"):
            ComposedEstimator(loss="squared_hinge", relation="label_enhancement", solver=solver).fit(X, Y)


def test_a_precomputed_kernel_is_refused(data):
    X, Y = data
    K = X @ X.T
    with pytest.raises(CapabilityError, match="LowRankEnhancement enhances the labels from the raw rows"):
        ComposedEstimator(
            loss="squared_hinge", relation="label_enhancement", kernel="precomputed", solver="cd", relation_params=TURNING
        ).fit(K, Y)


def test_a_fed_model_saves_and_loads(data, tmp_path):
    from multilabel_core.persistence import load_model, save_model

    X, Y = data
    estimator = _fit(X, Y, loss="squared_hinge", relation="label_enhancement", solver="cd", relation_params=TURNING)
    path = save_model(estimator, tmp_path / "fed.mlcore")
    loaded = load_model(path)
    assert loaded.solution_.relation_state.fed_relation.turned_over == estimator.solution_.relation_state.fed_relation.turned_over
    # The loaded model's arrays are the saved ones: the same BLAS call on the same arrays.
    np.testing.assert_allclose(loaded.decision_function(X), estimator.decision_function(X), rtol=1e-12, atol=1e-12)
