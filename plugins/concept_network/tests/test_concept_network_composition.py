"""The concept network as a composition (Zhang et al., *Multi-Kernel Multi-Label Learning with Max-Margin Concept
Network*): its solver takes any parts that meet what it needs, by name; the squared hinge's local duals are
certified (duality gap, KKT); both kernels define the model; the registered preset equals the composition built
from registered names, within the bound the two certificates give.

The bound used throughout: each local primal ``1/2 ||theta_l||^2 + C sum_i loss_i`` is 1-strongly convex in
theta_l, so ``||theta_l - theta_l*|| <= sqrt(2 gap_l)``, and a score linear in theta_l with feature vector z(x)
moves by at most ``||z(x)|| (sqrt(2 gap_l) + sqrt(2 gap'_l))`` between two certified fits.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from multilabel_core_plugins.concept_network import (
    ConceptNetwork,
    ConceptNetworkRelation,
    ConceptNetworkSolver,
    concept_inference,
    local_features,
)

from multilabel_core import ComposedEstimator, make_method
from multilabel_core.base import CapabilityError
from multilabel_core.certificate import GAP_RTOL
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.solvers import ConvergenceWarning

pytestmark = pytest.mark.filterwarnings("ignore::multilabel_core_plugins.concept_network.ClippingWarning")

#: Round-off allowed on top of a certificate's bound: the two sides of a comparison are separate BLAS
#: computations of sums of O(n m) products of numbers of order one.
ROUND_OFF = 1e-9


def _problem(seed, n=60, d=5, n_labels=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    scores = X @ rng.standard_normal((d, n_labels)) + 0.8 * rng.standard_normal((n, 1))
    Y = (scores > 0).astype(np.int8)
    Y[0], Y[1] = 1, 0  # every label takes both values
    return X, Y


def _composed(**kwargs):
    parts = {"loss": "squared_hinge", "regularizer": "frobenius", "relation": "concept_network",
             "solver": "concept_network_cd"}  # fmt: skip
    return ComposedEstimator(**{**parts, **kwargs})


def _local_system(model, Y, label):
    """Label ``label``'s local model of a fitted estimator: features Z (with the bias column when fitted with one),
    signs s, the problem's alpha, and the gains t = Z theta of the fitted weights."""
    solver, fitted = model.parts_["solver"], model.solution_.model_state
    graph, kernels, U = fitted["graph"], fitted["kernels"], fitted["basis"].vectors
    rows = np.flatnonzero(graph.edges[:, 0] == label) if solver.sigma else np.array([], dtype=int)
    Z = local_features(U, kernels.omega[label], kernels.zeta[rows], graph.edges[rows, 1], Y,
                       eps=solver.eps, sigma=solver.sigma, eps_edge=solver.eps_edge)  # fmt: skip
    t = (1 + solver.eps) * U @ fitted["site_coef"][label] + model.intercept_[label]
    for row in rows:
        a = np.where(Y[:, graph.edges[row, 1]] == 1, 1 + solver.eps_edge, -solver.eps_edge)
        t = t + solver.sigma * a * (U @ fitted["edge_coef"][row])
    if model.fit_intercept:
        Z = np.hstack([Z, np.full((Z.shape[0], 1), solver.intercept_scaling)])
    return Z, 2.0 * Y[:, label] - 1.0, model.solution_.dual[:, label], t


# -- item 1: the squared hinge, by name --------------------------------------------------------------------


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("solver", ["concept_network_cd", "auto"])
def test_the_concept_network_relation_with_the_squared_hinge_fits_certified_by_name(kernel, solver):
    data = make_correlated_multilabel(n_samples=80, random_state=0)
    model = _composed(kernel=kernel, solver=solver).fit(data.X, data.Y)
    assert model.solver_name_ == "concept_network_cd" and not model.fed_
    assert isinstance(model.parts_["relation"], ConceptNetworkRelation)
    assert isinstance(model.parts_["solver"], ConceptNetworkSolver)
    certificate = model.certificate_
    assert certificate.converged and 0.0 <= certificate.relative_gap <= GAP_RTOL
    assert all(certificate.statistics["converged"])


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**16), C=st.sampled_from([0.1, 1.0, 10.0]), sigma=st.sampled_from([0.0, 1.0]),
       fit_intercept=st.booleans())  # fmt: skip
def test_the_squared_hinge_local_duals_meet_kkt_within_the_gap(seed, C, sigma, fit_intercept):
    """For the squared hinge C sum xi^2 the dual has D = 1/(2C): max sum alpha - 1/2 ||Z^T (alpha s)||^2 - ||alpha||^2 / (4C).

    Recomputed here from the fitted model: the weights are theta = Z^T (alpha s) (stationarity), the gap
    P(theta) - D(alpha) is the certificate's, and it bounds the complementarity exactly:
    ``gap = sum_i [C xi_i^2 + alpha_i^2 / (4C) - alpha_i (1 - s_i t_i)] >= ||alpha - 2 C xi||^2 / (4C)``.
    """
    X, Y = _problem(seed)
    model = _composed(kernel="rbf", C=C, fit_intercept=fit_intercept, tol=1e-6,
                      solver_params={"sigma": sigma, "n_components": 20}).fit(X, Y)  # fmt: skip
    certificate = model.certificate_
    assert certificate.converged and certificate.relative_gap <= GAP_RTOL
    for label in range(Y.shape[1]):
        Z, s, alpha, t = _local_system(model, Y, label)
        assert np.all(alpha >= 0.0)
        theta = Z.T @ (alpha * s)
        scale = max(1.0, np.abs(alpha).sum() * np.abs(Z).max())
        # The engine's weights are the alpha-weighted sum it keeps up to date: the same point.
        np.testing.assert_allclose(Z @ theta, t, atol=ROUND_OFF * scale * 1e3)
        xi = np.maximum(0.0, 1.0 - s * (Z @ theta))
        primal = 0.5 * theta @ theta + C * (xi**2).sum()
        dual = alpha.sum() - 0.5 * theta @ theta - (alpha**2).sum() / (4 * C)
        assert primal == pytest.approx(certificate.statistics["primal"][label], rel=1e-6, abs=1e-9)
        assert dual == pytest.approx(certificate.statistics["dual"][label], rel=1e-6, abs=1e-9)
        gap = primal - dual
        assert -ROUND_OFF * max(1.0, primal) <= gap <= GAP_RTOL * max(1.0, primal)
        assert np.linalg.norm(alpha - 2 * C * xi) <= np.sqrt(4 * C * max(gap, 0.0)) + ROUND_OFF * scale * 1e3


@pytest.mark.parametrize("loss", ["logistic", "epsilon_insensitive", "pairwise_ranking_hinge"])
def test_a_loss_without_an_svm_dual_is_refused_naming_what_it_lacks(loss):
    X, Y = _problem(0)
    with pytest.raises(CapabilityError, match="ConceptNetworkSolver requires loss.dual_box"):
        _composed(loss=loss).fit(X, Y)


def test_a_diagonal_label_gram_scales_each_local_cost_and_a_coupling_one_is_refused():
    """label_covariance holds Omega = I / L: 1/2 tr(Theta Omega^-1 Theta^T) = L/2 ||Theta||^2, so the problem is L times
    the Frobenius one at cost C / L: the same decision values within the certificates' bound, L times the primal."""
    X, Y = _problem(3)
    L = Y.shape[1]
    common = {"kernel": "rbf", "fit_intercept": False, "tol": 1e-7, "solver_params": {"n_components": 20}}
    covariance = _composed(regularizer="label_covariance", C=1.0, **common).fit(X, Y)
    frobenius = _composed(regularizer="frobenius", C=1.0 / L, **common).fit(X, Y)
    assert covariance.certificate_.converged and frobenius.certificate_.converged
    assert covariance.certificate_.primal == pytest.approx(L * frobenius.certificate_.primal, rel=1e-5)
    _assert_site_scores_agree(covariance, frobenius, X, scales=(1.0 / L, 1.0))
    with pytest.raises(CapabilityError, match="ConceptNetworkSolver requires regularizer.label_gram"):
        _composed(regularizer="nuclear_norm").fit(X, Y)


# -- the kernels: both define the basis and so the model -----------------------------------------------------


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_the_kernel_defines_the_eigenbasis_and_the_decision_values_are_its_nystrom_site_scores(kernel):
    """The solver eigendecomposes the given kernel's Gram matrix: the linear kernel's has rank at most d (its basis
    keeps no more eigenpairs), the RBF's is full; on new rows the decision values are the site scores
    (1 + eps) v_l^T phi_l(x) + b_l with phi(x) = K(x, X) U / eta of that kernel (eq. 17)."""
    X, Y = _problem(5, n=70, d=4)
    X_new = np.random.default_rng(6).standard_normal((25, X.shape[1]))
    model = _composed(kernel=kernel, solver_params={"n_components": 30, "eig_rtol": 1e-6}).fit(X, Y)
    basis, site_coef = model.solution_.model_state["basis"], model.solution_.model_state["site_coef"]
    K = model.kernel_(X, X)
    assert basis.n_components <= (X.shape[1] if kernel == "linear" else 30)
    if kernel == "rbf":
        assert basis.n_components > X.shape[1]
    np.testing.assert_allclose(K @ basis.vectors, basis.vectors * basis.values, atol=1e-8 * basis.values[0])
    phi = model.kernel_(X_new, X) @ basis.vectors / basis.values
    expected = (1 + model.parts_["solver"].eps) * phi @ site_coef.T + model.intercept_
    scores = model.decision_function(X_new)
    np.testing.assert_allclose(scores, expected, atol=ROUND_OFF * max(1.0, np.abs(expected).max()) * 1e3)
    np.testing.assert_array_equal(model.predict(X_new), (scores > 0).astype(np.int64))


def test_the_kernel_changes_the_model():
    X, Y = _problem(7)
    linear = _composed(kernel="linear").fit(X, Y).decision_function(X)
    rbf = _composed(kernel="rbf").fit(X, Y).decision_function(X)
    assert np.abs(linear - rbf).max() > 0.1 * np.abs(rbf).max()


# -- item 2: the certificate means what it says ---------------------------------------------------------------


def test_the_hinge_on_a_linear_kernel_is_certified_on_the_summed_gap():
    """80 rows, hinge, linear kernel: the local duals stop on the projected-gradient rule at tol = 1e-3 with
    relative gaps of 1.0e-3 to 2.4e-3 (summed: 1.5e-3); the solver goes on at tighter bounds until the local
    gaps and their sum are within GAP_RTOL -- checked here from alpha and the fitted weights, not the solver's
    own numbers."""
    data = make_correlated_multilabel(n_samples=80, random_state=0)
    Y = np.asarray(data.Y)
    model = _composed(loss="hinge", kernel="linear", fit_intercept=False).fit(data.X, Y)
    certificate = model.certificate_
    assert certificate.converged
    assert max(certificate.statistics["tol"]) < 1e-3  # the default bound alone did not certify these duals
    C, primal, dual = model.C, 0.0, 0.0
    for label in range(Y.shape[1]):
        Z, s, alpha, _ = _local_system(model, Y, label)
        assert np.all((alpha >= 0.0) & (alpha <= C))
        theta = Z.T @ (alpha * s)
        primal += 0.5 * theta @ theta + C * np.maximum(0.0, 1.0 - s * (Z @ theta)).sum()
        dual += alpha.sum() - 0.5 * theta @ theta
    assert primal == pytest.approx(certificate.primal, rel=1e-6)
    assert -ROUND_OFF * primal <= primal - dual <= GAP_RTOL * max(1.0, primal)


def test_a_solve_short_of_its_gap_is_reported_unconverged_with_the_count():
    data = make_correlated_multilabel(n_samples=80, random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"of 6 local models, \d+ spent max_iter=3 epochs"):
        model = _composed(loss="hinge", kernel="linear", C=10.0, max_iter=3).fit(data.X, data.Y)
    assert not model.certificate_.converged


def test_a_warm_start_reaches_the_cold_start_optimum():
    X, Y = _problem(11)
    common = {"kernel": "rbf", "tol": 1e-7, "solver_params": {"n_components": 20}}
    warm = _composed(warm_start=True, C=0.5, **common).fit(X, Y)
    warm.set_params(C=2.0).fit(X, Y)
    cold = _composed(C=2.0, **common).fit(X, Y)
    assert warm.certificate_.converged and cold.certificate_.converged
    _assert_site_scores_agree(warm, cold, X)


# -- item 3: the preset is the composition of its registered parts --------------------------------------------


def _site_norms(model, X_new):
    """||(1 + eps) sqrt(omega_l) o phi(x)|| (n_new, L): the Lipschitz constant of label l's site score in theta_l
    (plus 1 for the bias feature's weight, when fitted with one)."""
    fitted = model.solution_.model_state
    phi = fitted["basis"].extend(model.kernel_(X_new, model.X_fit_))
    norms = (1 + fitted["eps"]) * np.sqrt((phi**2) @ fitted["kernels"].omega.T)
    return np.sqrt(norms**2 + 1.0) if model.fit_intercept else norms


def _assert_site_scores_agree(a, b, X_new, scales=(1.0, 1.0)):
    """The two fits' decision values agree within sum over the fits of ||z(x)|| sqrt(2 gap_l) (module docstring);
    ``scales`` turns each fit's per-label gap into the units of the Frobenius local model (m_l)."""
    radius = sum(
        np.sqrt(2.0 * np.maximum(scale * (np.array(m.certificate_.statistics["primal"])
                                          - np.array(m.certificate_.statistics["dual"])), 0.0))
        for m, scale in zip((a, b), scales)
    )  # fmt: skip
    bound = _site_norms(a, X_new) * radius + ROUND_OFF * 1e3
    difference = np.abs(a.decision_function(X_new) - b.decision_function(X_new))
    assert np.all(difference <= bound), float((difference - bound).max())


PRESET = {"C": 2.0, "eps": 0.3, "eps_edge": 0.6, "threshold": 0.05, "site_tradeoff": 0.5, "edge_tradeoff": 2.0,
          "gamma": 0.2, "n_components": 25, "eig_rtol": 1e-4}  # fmt: skip


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), sigma=st.sampled_from([0.0, 0.5, 1.0]))
def test_the_registered_preset_is_the_composition_of_its_registered_parts(seed, sigma):
    """``make_method("concept_network", ...)`` against ``ComposedEstimator`` from the registered names in its PARTS,
    the hyper-parameters in ``relation_params`` (P0) and ``solver_params`` (sigma, eps, eps', the trade-offs, m),
    C as the preset passes it (unscaled: lambda of (5) is the Problem's C) and no bias (the paper's (5)).

    The composition is fitted with other CD permutations (another random_state; the basis is the dense
    eigensolver's, the same), so the two points differ and agree only within the certificates' bound.  What each
    predicts: the composed estimator's decision values are the site scores (1 + eps) v_l^T phi_l(x), its predict
    their sign -- the labelling ICM starts from; the preset's decision values are the ICM gains at the labelling
    inference ends at (equal to the site scores when sigma = 0), its predict that labelling, which
    ``concept_inference`` computes for the composition as well.
    """
    X, Y = _problem(seed, n=80)
    X_new = np.random.default_rng(seed + 1).standard_normal((30, X.shape[1]))
    preset = make_method("concept_network", sigma=sigma, tol=1e-7, **PRESET).fit(X, Y)
    parts = ConceptNetwork.PARTS
    solver_params = {name: PRESET[name] for name in ("eps", "site_tradeoff", "edge_tradeoff", "n_components",
                                                     "eig_rtol")}  # fmt: skip
    solver_params |= {"sigma": sigma, "eps_edge": PRESET["eps_edge"], "random_state": 1}
    composed = ComposedEstimator(
        **{role: parts[role] for role in ("loss", "regularizer", "relation", "kernel", "solver")},
        relation_params={"threshold": PRESET["threshold"]}, solver_params=solver_params,
        C=PRESET["C"], gamma=PRESET["gamma"], fit_intercept=False, tol=1e-7,
    ).fit(X, Y)  # fmt: skip
    assert preset.certificate_.converged and composed.certificate_.converged
    np.testing.assert_array_equal(composed.solution_.model_state["graph"].adjacency, preset.concept_graph_.adjacency)
    np.testing.assert_allclose(composed.solution_.model_state["basis"].values, preset.basis_.values, rtol=1e-10)

    # Decision values: the composition's site scores against the preset's, within the two certificates' bound.
    site = (1 + preset.eps) * preset.site_scores(X_new)
    radius = sum(np.sqrt(2.0 * np.maximum(np.array(m.certificate_.statistics["primal"])
                                          - np.array(m.certificate_.statistics["dual"]), 0.0))
                 for m in (preset, composed))  # fmt: skip
    bound = _site_norms(composed, X_new) * radius + ROUND_OFF * 1e3
    assert np.all(np.abs(composed.decision_function(X_new) - site) <= bound)
    if sigma == 0.0:  # no edge terms: the preset's gains are the site scores themselves
        assert np.all(np.abs(composed.decision_function(X_new) - preset.decision_function(X_new)) <= bound)

    # Labels: the composition's predict is ICM's starting labelling; concept_inference gives the preset's.
    clear = np.all(np.abs(site) > bound, axis=1)
    np.testing.assert_array_equal(composed.predict(X_new)[clear], (site > 0)[clear])
    same_seed = ComposedEstimator(**composed.get_params() | {"solver_params": solver_params | {"random_state": 0}})
    same_seed.fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rows that cycle are the preset's too: counted by its own tests
        np.testing.assert_array_equal(concept_inference(same_seed, X_new).labels, preset.predict(X_new))


def test_concept_inference_refuses_an_estimator_another_solver_fitted():
    X, Y = _problem(2)
    model = ComposedEstimator(loss="squared_hinge", solver="cd").fit(X, Y)
    with pytest.raises(ValueError, match="needs an estimator fitted by ConceptNetworkSolver; .* was fitted by CDSolver"):
        concept_inference(model, X)
    with pytest.raises(ValueError, match="method must be one of"):
        concept_inference(_composed().fit(X, Y), X, method="gibbs")
