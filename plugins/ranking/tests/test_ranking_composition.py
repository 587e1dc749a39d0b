"""The label-ranking presets are compositions of registered parts, by name (Gu, Li & Han, CIKM 2011).

Each preset (larank, clarank, mlfs, cmlfs) is fitted beside a
:class:`~multilabel_core.ComposedEstimator` built from the names of its MethodSpec's ``parts``,
its hyper-parameters passed as ``<role>_params`` (C as it is: the presets do not rescale it),
and the two models are compared within what their certificates allow.  The presets predict
with the learned set-size threshold t(x) of section 3.8, a ComposedEstimator with its default
``thresholding="zero"`` with the sign of the scores, so the decision values are compared.

Bounds.  Problem (6) with p = 1 is ``J(W, b) = 1/2 ||[W; b]||^2 + mu/2 ||[W; b]||_*^2 + C loss``
after minimising over D (Theorem 3.4; mu = 0 for LaRank): the squared trace norm is convex, so J
is 1-strongly convex in (W, b) and ``||(W, b) - (W*, b*)||_F <= sqrt(2 (J(W, b) - J*))``.  With
``L <= J*`` the best lower bound either fit certifies (the dual (7) of a fixed-D solve; the joint
dual ``D_k + Q_k - relation_dual(H_k)`` of the alternation), each score of row x moves by at most
``||(x, 1)|| (sqrt(2 (J_1 - L)) + sqrt(2 (J_2 - L)))`` between the fits, J evaluated here from the
parts.  The feature-selection problem (MLFS, CMLFS) relaxes p to the capped simplex: its
regulariser ``min_s 1/2 sum_j ||w^j||^2 / s_j`` is not strongly convex (with m = 1 it is a squared
l1-norm of the row norms), so equal objectives do not pin W; there the two fits are compared by
their certified bounds (l_t, u_t), each fit's value above the other's lower bound.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from multilabel_core_plugins.ranking import CMLFS, MLFS, CLaRankSVM, LaRankSVM, RankingCDSolver
from multilabel_core_plugins.ranking.cd_solver import kernel_factor

import multilabel_core as mlc
from multilabel_core import ComposedEstimator
from multilabel_core.certificate import GAP_RTOL
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.kernels import RBFKernel
from multilabel_core.losses import PairwiseRankingHinge
from multilabel_core.regularizers import FrobeniusLabelCovariance, LabelCovariance
from multilabel_core.validation import to_signs

C, MU, N_FEATURES = 2.0, 0.5, 3
#: Tight enough that the certificates' bound is far below the scores' scale (about 1).
TOL = 1e-8
#: The cutting plane's relative bound gap closes slowly (docs/methods/ranking.md): a looser target.
CUTTING_PLANE_TOL = 1e-4


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=120, n_features=8, n_labels=4, random_state=1)
    return dataset.X, dataset.Y


def by_name(name: str, **overrides) -> ComposedEstimator:
    """The registered method ``name`` as a ComposedEstimator of its parts' registered names."""
    parts = dict(mlc.get_method(name).parts)
    assert all(isinstance(value, str) for value in parts.values())
    settings = {
        "larank": {"solver_params": {"random_state": 0}, "tol": TOL},
        "clarank": {"regularizer_params": {"mu": MU}, "solver_params": {"cd_tol": TOL, "random_state": 0}, "tol": TOL},
        "mlfs": {"solver_params": {"n_features": N_FEATURES}, "tol": CUTTING_PLANE_TOL},
        "cmlfs": {
            "regularizer_params": {"mu": MU},
            "solver_params": {"n_features": N_FEATURES},
            "tol": CUTTING_PLANE_TOL,
        },
    }[name]
    return ComposedEstimator(**(parts | settings | overrides), C=C)


def learned_ranking(regularizer: str, solver: str, inner: str, **params) -> ComposedEstimator:
    """The pairwise ranking hinge with a learned label covariance and ``regularizer``, by name."""
    return ComposedEstimator(
        loss="pairwise_ranking_hinge", regularizer=regularizer, relation="learned_covariance", solver=solver,
        inner=inner, C=C, tol=TOL, **params,
    )  # fmt: skip


def preset(name: str):
    return {
        "larank": LaRankSVM(C=C, tol=TOL),
        "clarank": CLaRankSVM(C=C, mu=MU, tol=TOL),
        "mlfs": MLFS(C=C, n_features=N_FEATURES, tol=CUTTING_PLANE_TOL),
        "cmlfs": CMLFS(C=C, mu=MU, n_features=N_FEATURES, tol=CUTTING_PLANE_TOL),
    }[name]


def last_certificate(model):
    certificate = model.certificate_
    return certificate[-1] if isinstance(certificate, list) else certificate


def joint_objective(model, X, Y, mu: float) -> float:
    """J(W, b) of the module docstring at the fitted weights, from the parts (not from the solver)."""
    F = np.vstack([model.coef_, model.intercept_[None, :]])
    regulariser = FrobeniusLabelCovariance(mu).relation_value(F)
    return regulariser + C * PairwiseRankingHinge().value(to_signs(Y), model.decision_function(X))


def lower_bound(model) -> float:
    """A certified lower bound on J*: the last step's dual, and for a learned D the joint dual of the alternation."""
    step = model.step_certificates_[-1]
    if not model.parts_["relation"].learned:
        return float(step.dual)
    state = model.solution_.relation_state
    relation_dual = model.parts_["regularizer"].relation_dual(state.dual_gram)
    return float(step.dual) + float(state.regularizer_value) - float(relation_dual)


def assert_same_scores(first, second, X, Y, mu: float) -> float:
    """Decision values within the bound of the module docstring; returns the bound's largest entry."""
    for model in (first, second):
        assert all(certificate.converged for certificate in model.step_certificates_)
    floor = max(lower_bound(first), lower_bound(second))
    excess = [joint_objective(model, X, Y, mu) - floor for model in (first, second)]
    # J - L >= 0 up to the rounding of J's evaluation and of the dual (GAP_RTOL relative).
    assert min(excess) >= -GAP_RTOL * max(1.0, floor)
    radius = sum(np.sqrt(2.0 * max(value, 0.0)) for value in excess)
    bound = np.sqrt(np.sum(X**2, axis=1) + 1.0) * radius
    difference = np.abs(first.decision_function(X) - second.decision_function(X))
    assert np.all(difference <= bound[:, None] + GAP_RTOL * np.abs(first.decision_function(X)))
    return float(bound.max())


@pytest.mark.parametrize("name, mu", [("larank", 0.0), ("clarank", MU)])
def test_the_preset_is_its_parts_by_name(data, name, mu):
    X, Y = data
    model = by_name(name).fit(X, Y)
    reference = preset(name).fit(X, Y)
    assert model.solver_name_ == mlc.get_method(name).parts["solver"]
    bound = assert_same_scores(model, reference, X, Y, mu)
    assert bound < 1e-2 * np.abs(reference.decision_function(X)).max()  # the comparison says something
    if name == "clarank":
        # D = (W^T W)^(1/2) / tr is Lipschitz in W away from rank deficiency; both are trace-one SPD.
        np.testing.assert_allclose(np.trace(model.label_covariance_), 1.0)


@pytest.mark.parametrize("solver, inner", [("alternating", "ranking_cd"), ("auto", "auto")])
def test_clarank_is_the_alternating_driver_over_ranking_cd_by_name(data, solver, inner):
    # CLaRank (Gu, Li & Han, Correlated Multi-Label Feature Selection, problem 6) by name: the core's driver with
    # the ranking model step (Algorithm 1), or what auto chooses
    # (the core's alternating driver, tried before ranking_alternating, with ranking_cd chosen inside).
    X, Y = data
    model = learned_ranking("frobenius_label_covariance", solver, inner, regularizer_params={"mu": MU}).fit(X, Y)
    assert model.solver_name_ == "alternating(inner=ranking_cd)"
    # The model steps run at ranking_cd's default relative gap (1e-3): a looser, still certified, bound.
    assert_same_scores(model, preset("clarank").fit(X, Y), X, Y, MU)


@pytest.mark.parametrize("solver, inner", [("alternating", "ranking_cd"), ("auto", "auto")])
def test_the_learned_mlrl_covariance_with_the_ranking_loss_fits_certified_by_name(data, solver, inner):
    # MLRL's regulariser 1/2 tr(W Omega^-1 W^T) (no Frobenius term: not CLaRank's model) with the ranking hinge.
    X, Y = data
    model = learned_ranking("label_covariance", solver, inner).fit(X, Y)
    assert model.solver_name_ == "alternating(inner=ranking_cd)"
    assert all(certificate.converged for certificate in model.step_certificates_)
    # The joint bracket: J at the fitted W (min over Omega of the regulariser, Zhang & Yeung's closed form)
    # lies above the certified joint lower bound, and the relative joint gap the driver reports is theirs.
    F = np.vstack([model.coef_, model.intercept_[None, :]])
    J = LabelCovariance().relation_value(F) + C * PairwiseRankingHinge().value(to_signs(Y), model.decision_function(X))
    floor = lower_bound(model)
    assert floor <= J + GAP_RTOL * abs(J)
    assert model.joint_gap_history_[-1] <= (J - floor) / max(1.0, abs(J)) + GAP_RTOL
    assert (J - floor) / max(1.0, abs(J)) < 1e-2
    other = ComposedEstimator(
        loss="pairwise_ranking_hinge", regularizer="label_covariance", relation="independent", C=C, tol=TOL
    ).fit(X, Y)
    assert not np.allclose(model.decision_function(X), other.decision_function(X), atol=1e-2)


@pytest.mark.parametrize("name", ["mlfs", "cmlfs"])
def test_the_feature_selection_presets_are_their_parts_by_name(data, name):
    X, Y = data
    model = by_name(name).fit(X, Y)
    reference = preset(name).fit(X, Y)
    assert model.solver_name_ == "cutting_plane"
    first, second = last_certificate(model), last_certificate(reference)
    assert first.converged and second.converged
    slack = GAP_RTOL * max(1.0, abs(first.primal))
    # Each fit's value u lies above the other's lower bound l: the same relaxed problem (for CMLFS, at D held
    # at each fit's D, the point block-optimal within tol; module docstring).
    assert first.primal >= second.dual - slack and second.primal >= first.dual - slack
    assert abs(first.primal - second.primal) <= max(first.gap, second.gap) + slack
    assert model.coef_.shape == reference.coef_.shape


def test_a_changed_hyper_parameter_is_another_model(data):
    # The comparison can fail: clarank at another mu is outside the bound.
    X, Y = data
    model = by_name("clarank", regularizer_params={"mu": 5.0}).fit(X, Y)
    with pytest.raises(AssertionError):
        assert_same_scores(model, preset("clarank").fit(X, Y), X, Y, MU)


# -- kernels ---------------------------------------------------------------------------------


def test_a_linear_gram_matrix_gives_the_linear_model(data):
    # K = X X^T: the factor's problem is the features' problem, within both certificates.
    X, Y = data
    linear = by_name("larank").fit(X, Y)
    gram = by_name("larank", kernel="precomputed").fit(X @ X.T, Y)
    assert gram.solver_name_ == "ranking_cd" and not hasattr(gram, "coef_")
    radius = sum(np.sqrt(2.0 * model.step_certificates_[-1].gap) for model in (linear, gram))
    bound = np.sqrt(np.sum(X**2, axis=1) + 1.0) * radius
    difference = np.abs(linear.decision_function(X) - gram.decision_function(X @ X.T))
    assert np.all(difference <= bound[:, None] + 1e-9 * np.abs(linear.decision_function(X)))


@pytest.mark.parametrize("relation, regularizer", [("independent", "frobenius"), ("learned_covariance", "frobenius_label_covariance")])
def test_an_rbf_ranking_model_is_its_kernel_expansion(data, relation, regularizer):
    # The certificate computed on the factor G is the kernel problem's: recomputed here from K and the
    # expansion dual_coef = beta R^-1 (scores K beta R^-1 + b; ||W||^2 of R = I is tr(beta^T K beta)).
    X, Y = data
    model = ComposedEstimator(
        loss="pairwise_ranking_hinge", regularizer=regularizer, relation=relation, kernel="rbf",
        regularizer_params={"mu": MU} if relation != "independent" else None, C=C, tol=TOL,
    ).fit(X, Y)
    assert all(certificate.converged for certificate in model.step_certificates_)
    K = model.kernel_(X, X)
    scores = model.decision_function(X)
    R_inv = model.parts_["regularizer"].label_gram(Y.shape[1])
    if relation != "independent":
        R_inv = FrobeniusLabelCovariance(MU, covariance=model.label_covariance_).label_gram(Y.shape[1])
    beta = model.dual_coef_ @ np.linalg.inv(R_inv)
    half_norm = 0.5 * (np.sum(beta * (K @ beta @ R_inv)) + model.intercept_ @ np.linalg.solve(R_inv, model.intercept_))
    primal = half_norm + C * PairwiseRankingHinge().value(to_signs(Y), scores)
    step = model.step_certificates_[-1]
    np.testing.assert_allclose(primal, step.primal, rtol=1e-8)
    np.testing.assert_allclose(float(model.solution_.dual.sum()) - half_norm, step.dual, rtol=1e-8)


def test_the_kernel_factor_is_reused_only_for_an_unchanged_matrix(data):
    X, _ = data
    K = RBFKernel(gamma=0.1)(X)
    G = kernel_factor(K)
    n = K.shape[0]
    assert np.abs(G @ G.T - K).max() <= 10.0 * n * n * np.finfo(float).eps * np.abs(K).max()
    assert kernel_factor(K) is G
    K *= 2.0  # changed in place: the same object, another matrix
    G2 = kernel_factor(K)
    assert G2 is not G
    assert np.abs(G2 @ G2.T - K).max() <= 10.0 * n * n * np.finfo(float).eps * np.abs(K).max()


def test_the_cutting_plane_refuses_a_kernel_matrix_and_names_it(data):
    with pytest.raises(mlc.CapabilityError, match=r"CuttingPlaneSolver requires kernel\.linear.*RBFKernel"):
        by_name("mlfs", kernel="rbf").fit(*data)


def test_sparse_rows_with_an_rbf_kernel(data):
    X, Y = data
    dense = by_name("larank", kernel="rbf", kernel_params={"gamma": 0.1}).fit(X, Y)
    sparse = by_name("larank", kernel="rbf", kernel_params={"gamma": 0.1}).fit(sp.csr_matrix(X), Y)
    radius = sum(np.sqrt(2.0 * model.step_certificates_[-1].gap) for model in (dense, sparse))
    # k(x, x) = 1 for the RBF kernel: ||(phi(x), 1)|| = sqrt(2).
    difference = np.abs(dense.decision_function(X) - sparse.decision_function(sp.csr_matrix(X)))
    assert np.all(difference <= np.sqrt(2.0) * radius + 1e-9)


def test_a_ranking_cd_object_solves_a_polynomial_kernel(data):
    # The kernel is checked by what it is (a matrix), whatever kernel class computed it.
    X, Y = data
    model = ComposedEstimator(
        loss="pairwise_ranking_hinge", kernel="poly", solver=RankingCDSolver(tol=TOL), C=C
    ).fit(X, Y)
    assert model.dual_coef_.shape == (X.shape[0], Y.shape[1])


def test_a_factor_does_not_outlive_its_matrix(data):
    from multilabel_core_plugins.ranking import cd_solver

    X, _ = data
    K = RBFKernel(gamma=0.1)(X)
    kernel_factor(K)
    assert any(ref() is K for ref, _ in cd_solver._FACTORS)
    del K
    assert all(ref() is not None for ref, _ in cd_solver._FACTORS)
