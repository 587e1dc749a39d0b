"""The max-margin concept network (Zhang et al., *Multi-Kernel Multi-Label Learning with Max-Margin Concept
Network*): the graph, the derived dual (8), the closed forms (12) and (14), Nystrom (17)-(18), the local box
duals, inference, conformance and sparse input.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from multilabel_core_plugins.concept_network import (
    ClippingWarning,
    ConceptNetwork,
    ConceptNetworkRelation,
    InferenceWarning,
    concept_graph,
    edge_statistic,
    global_score,
    infer,
    learn_kernels,
    local_features,
    top_eigenpairs,
)

from multilabel_core.datasets import load_dataset
from multilabel_core.kernels import RBFKernel
from multilabel_core.solvers import box_kernel_cd
from multilabel_core.testing import strategies as mst
from multilabel_core.testing.checks import assert_kkt, assert_matches_reference, check_method
from multilabel_core.testing.reference import solve_box_qp_reference

# Clipping is counted on every fit of real-valued labels; its warning is tested once, below.
pytestmark = pytest.mark.filterwarnings("ignore::multilabel_core_plugins.concept_network.ClippingWarning")

# -- small problems ---------------------------------------------------------------------------


def _problem(seed, n=40, d=4, n_labels=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    scores = X @ rng.standard_normal((d, n_labels)) + 0.8 * rng.standard_normal((n, 1))
    Y = (scores > 0).astype(np.int8)
    Y[0], Y[1] = 1, 0  # every label takes both values
    return X, Y


def _basis_and_kernels(X, Y, threshold=0.05, m=20):
    K = RBFKernel().resolve(X)(X)
    basis = top_eigenpairs(K, m, eig_rtol=1e-6)
    graph = concept_graph(Y, threshold)
    return K, basis, graph, learn_kernels(basis, Y, graph.edges, 1.0, 1.0)


# -- the concept network ----------------------------------------------------------------------


@given(Y=mst.label_matrices(n_samples=st.integers(2, 30), n_labels=st.integers(2, 6)))
def test_the_statistic_is_half_the_harmonic_mean_of_the_conditional_probabilities(Y):
    statistic = edge_statistic(Y)
    Y = Y.astype(float)
    n_labels = Y.shape[1]
    assert np.all(statistic >= 0.0) and np.all(statistic <= 0.5)
    np.testing.assert_array_equal(statistic, statistic.T)
    for l in range(n_labels):
        for t in range(n_labels):
            together, n_l, n_t = Y[:, l] @ Y[:, t], Y[:, l].sum(), Y[:, t].sum()
            if l == t or together == 0:
                assert statistic[l, t] == 0.0
                continue
            p_tl, p_lt = together / n_l, together / n_t
            assert statistic[l, t] == pytest.approx(p_tl * p_lt / (p_tl + p_lt), rel=1e-12)


def test_a_threshold_of_one_half_or_more_is_refused_since_it_admits_no_edge():
    Y = np.array([[1, 1], [0, 0], [1, 1]])
    assert edge_statistic(Y)[0, 1] == 0.5  # two labels that always co-occur: the largest value
    for threshold in (0.5, 0.7):
        with pytest.raises(ValueError, match="threshold.*admits no edge"):
            concept_graph(Y, threshold)
        with pytest.raises(ValueError, match="threshold"):
            ConceptNetworkRelation(threshold=threshold)
        with pytest.raises(ValueError, match="threshold"):
            ConceptNetwork(threshold=threshold).fit(np.eye(3), Y)
    assert concept_graph(Y, 0.49).adjacency[0, 1]


def test_a_label_without_training_positives_gets_no_edge():
    Y = np.array([[1, 1, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]])
    graph = concept_graph(Y, 0.0)
    assert not graph.adjacency[2].any() and not graph.adjacency[:, 2].any()
    assert graph.adjacency[0, 1] and graph.adjacency[1, 0] and not np.diag(graph.adjacency).any()
    assert graph.n_edges == 1 and graph.edges.tolist() == [[0, 1], [1, 0]]


# -- the dual (8): Q derived from the score (4) -------------------------------------------------


def _local_score(v, w, phi_site, phi_edges, y_l, y_neighbours, eps, eps_edge, sigma):
    """theta_l^T Psi_l(x, y_l, y_N) written from eq. 4's definitions of pi and pi'."""
    pi = 1.0 if y_l == 1 else -eps
    score = pi * v @ phi_site
    for w_t, phi_t, y_t in zip(w, phi_edges, y_neighbours):
        pi_pair = 1.0 if (y_l == 1 and y_t == 1) else (-eps_edge if y_l != y_t else 0.0)
        score += sigma * pi_pair * w_t @ phi_t
    return score


@settings(max_examples=10)
@given(seed=st.integers(0, 2**16), eps=st.floats(0.05, 0.95), eps_edge=st.floats(0.05, 0.95),
       sigma=st.floats(0.1, 2.0))  # fmt: skip
def test_the_derived_Q_is_the_gram_of_the_score_differences(seed, eps, eps_edge, sigma):
    """Q_ij = s_i s_j [(1 + eps)^2 K_l + sigma^2 sum_t a_t^i a_t^j K_lt] against Delta Psi of eq. 9 built from eq. 4,
    and the dual's gradient 1 - Q alpha against finite differences of the dual written with theta(alpha)."""
    X, Y = _problem(seed, n=12, n_labels=3)
    _, basis, graph, kernels = _basis_and_kernels(X, Y, threshold=0.0, m=8)
    label = 0
    neighbours = graph.neighbours(label)
    rows = np.flatnonzero(graph.edges[:, 0] == label)
    U = basis.vectors
    site = U * np.sqrt(kernels.omega[label])  # phi_l(x^i)
    pairs = [U * np.sqrt(kernels.zeta[r]) for r in rows]  # phi_lt(x^i)
    m, n = U.shape[1], U.shape[0]
    # Delta Psi_l^i as the derivative of the score in theta: the score is linear in theta = (v, w_t...).
    delta = np.zeros((n, m * (1 + len(neighbours))))
    for i in range(n):
        for k in range(delta.shape[1]):
            e = np.zeros(delta.shape[1])
            e[k] = 1.0
            v, w = e[:m], [e[m * (j + 1) : m * (j + 2)] for j in range(len(neighbours))]
            args = (v, w, site[i], [p[i] for p in pairs])
            kwargs = {"eps": eps, "eps_edge": eps_edge, "sigma": sigma}
            true = _local_score(*args, Y[i, label], Y[i, neighbours], **kwargs)
            flipped = _local_score(*args, 1 - Y[i, label], Y[i, neighbours], **kwargs)
            delta[i, k] = true - flipped
    s = 2.0 * Y[:, label] - 1.0
    K_l = U @ np.diag(kernels.omega[label]) @ U.T
    Q = (1 + eps) ** 2 * K_l
    for j, r in enumerate(rows):
        a = np.where(Y[:, neighbours[j]] == 1, 1 + eps_edge, -eps_edge)
        Q = Q + sigma**2 * np.outer(a, a) * (U @ np.diag(kernels.zeta[r]) @ U.T)
    Q = np.outer(s, s) * Q
    np.testing.assert_allclose(delta @ delta.T, Q, atol=1e-10 * np.abs(Q).max())
    # The features the solver sees are Delta Psi / s.
    features = local_features(U, kernels.omega[label], kernels.zeta[rows], neighbours, Y,
                              eps=eps, sigma=sigma, eps_edge=eps_edge)  # fmt: skip
    np.testing.assert_allclose(s[:, None] * features, delta, atol=1e-12 * np.abs(delta).max())

    def dual(alpha):
        theta = alpha @ delta
        return alpha.sum() - 0.5 * theta @ theta

    alpha = np.random.default_rng(seed).uniform(0.0, 1.0, n)
    h = 1e-6
    numeric = np.array([(dual(alpha + h * e) - dual(alpha - h * e)) / (2 * h) for e in np.eye(n)])
    np.testing.assert_allclose(numeric, 1.0 - Q @ alpha, atol=1e-6 * max(1.0, np.abs(Q @ alpha).max()))


# -- kernel learning ----------------------------------------------------------------------------


@settings(max_examples=10)
@given(seed=st.integers(0, 2**16), site=st.floats(0.05, 10.0), edge=st.floats(0.05, 10.0))
def test_the_closed_forms_are_stationary_points_of_12_and_14(seed, site, edge):
    X, Y = _problem(seed, n=25)
    K = RBFKernel().resolve(X)(X)
    basis = top_eigenpairs(K, 10, eig_rtol=1e-8)
    graph = concept_graph(Y, 0.0)
    kernels = learn_kernels(basis, Y, graph.edges, site, edge)
    eta, U, Yf = basis.values, basis.vectors, Y.astype(float)
    h = 1e-5 * max(1.0, float(eta.max()))

    def objective12(omega, l):
        return sum(omega[k] * (Yf[:, l] @ U[:, k]) ** 2 for k in range(len(eta))) - kernels.site_gamma[l] * np.sum(
            (omega - eta) ** 2
        )

    for l in range(Y.shape[1]):
        omega = kernels.omega[l]
        for k in range(len(eta)):
            e = np.zeros(len(eta))
            e[k] = h
            up, here, down = objective12(omega + e, l), objective12(omega, l), objective12(omega - e, l)
            assert abs(up - down) / (2 * h) <= 1e-6 * max(1.0, abs(here))  # stationary
            assert up <= here and down <= here  # concave: a maximiser
    raw = eta + (U.T @ Yf)[:, graph.edges[:, 0]].T * (U.T @ Yf)[:, graph.edges[:, 1]].T / (2 * kernels.edge_upsilon[:, None])
    for r, (l, t) in enumerate(graph.edges):

        def objective14(zeta):
            return sum(zeta[k] * (Yf[:, l] @ U[:, k]) * (U[:, k] @ Yf[:, t]) for k in range(len(eta))) - kernels.edge_upsilon[
                r
            ] * np.sum((zeta - eta) ** 2)

        for k in range(len(eta)):
            e = np.zeros(len(eta))
            e[k] = h
            assert abs(objective14(raw[r] + e) - objective14(raw[r] - e)) / (2 * h) <= 1e-6 * max(1.0, abs(objective14(raw[r])))
    np.testing.assert_allclose(kernels.zeta, np.maximum(raw, 0.0), rtol=1e-12, atol=1e-12 * eta.max())
    assert kernels.n_clipped == int(np.count_nonzero(raw < 0))


@settings(max_examples=10)
@given(seed=st.integers(0, 2**16))
def test_every_learned_kernel_is_positive_semidefinite_after_clipping(seed):
    X, Y = _problem(seed, n=30)
    _, basis, graph, kernels = _basis_and_kernels(X, Y, threshold=0.0)
    U = basis.vectors
    for weights in list(kernels.omega) + list(kernels.zeta):
        assert np.all(weights >= 0.0)
        M = U @ np.diag(weights) @ U.T
        assert np.linalg.eigvalsh(M).min() >= -1e-10 * max(1.0, weights.max())


def test_clipping_happens_on_real_labels_and_is_counted_in_a_warning(datasets_dir):
    data = load_dataset("emotions-train", data_home=datasets_dir)
    model = ConceptNetwork(threshold=0.05)
    with pytest.warns(ClippingWarning, match=r"(\d+) of (\d+) pair-kernel weights .* clipped at 0") as record:
        model.fit(data.X, data.Y)
    assert model.learned_kernels_.n_clipped > 0
    assert any(f"{model.learned_kernels_.n_clipped} of" in str(w.message) for w in record)


# -- the eigenbasis and Nystrom --------------------------------------------------------------------


@pytest.mark.parametrize("n", [60, 400])  # the dense eigensolver, and ARPACK
def test_nystrom_reproduces_the_eigenvectors_and_the_label_kernels_at_training_rows(n):
    X, Y = _problem(1, n=n)
    K, basis, graph, kernels = _basis_and_kernels(X, Y, m=15)
    assert basis.method == ("eigh" if n <= 200 else "eigsh")
    # The eigenpairs are Gram eigenpairs: K u_k = eta_k u_k, to the eigensolver's accuracy.
    scale = float(basis.values[0])
    residual = np.abs(K @ basis.vectors - basis.vectors * basis.values).max()
    assert residual <= 1e-8 * scale
    phi = basis.extend(K)
    # phi_k(x_i) - u_k(i) = (K u_k - eta_k u_k)_i / eta_k: the residual amplified by 1 / eta_k.
    np.testing.assert_allclose(phi, basis.vectors, atol=1e-8 * scale / basis.values.min())
    for l in range(Y.shape[1]):
        K_l = basis.vectors @ np.diag(kernels.omega[l]) @ basis.vectors.T
        np.testing.assert_allclose((phi * kernels.omega[l]) @ basis.vectors.T, K_l, atol=1e-7 * np.abs(K_l).max())
    model = ConceptNetwork(n_components=15, eig_rtol=1e-6, threshold=0.05).fit(X, Y)
    np.testing.assert_allclose(model.eigenfunctions(X), model.basis_.vectors, atol=1e-8 * scale / basis.values.min())


def test_eigenpairs_below_the_relative_floor_are_dropped_and_counted():
    X, _ = _problem(2, n=80)
    K = RBFKernel().resolve(X)(X)
    basis = top_eigenpairs(K, 80, eig_rtol=1e-3)
    assert basis.n_components < 80 and basis.n_dropped == 80 - basis.n_components
    assert basis.values.min() >= 1e-3 * basis.values[0]
    assert np.all(np.diff(basis.values) <= 0)


# -- the local box duals -------------------------------------------------------------------------


CD_TOL = 1e-4


@settings(max_examples=8)
@given(seed=st.integers(0, 2**16), C=st.sampled_from([0.1, 1.0, 10.0]), sigma=st.sampled_from([0.0, 0.5, 1.0]))
def test_each_local_dual_satisfies_kkt_and_certifies_its_gap(seed, C, sigma):
    X, Y = _problem(seed, n=40)
    model = ConceptNetwork(C=C, sigma=sigma, threshold=0.02, n_components=15, tol=CD_TOL, max_iter=100000).fit(X, Y)
    graph, kernels, U = model.concept_graph_, model.learned_kernels_, model.basis_.vectors
    certificate = model.certificate_
    assert certificate.converged and 0.0 <= certificate.gap <= 1e-3 * max(1.0, certificate.primal)
    for label in range(Y.shape[1]):
        rows = np.flatnonzero(graph.edges[:, 0] == label) if sigma else np.array([], dtype=int)
        Z = local_features(U, kernels.omega[label], kernels.zeta[rows], graph.edges[rows, 1], Y,
                           eps=model.eps, sigma=sigma, eps_edge=model.eps_edge)  # fmt: skip
        s = 2.0 * Y[:, label] - 1.0
        Q = np.outer(s, s) * (Z @ Z.T)
        alpha = model.dual_[:, label]
        # The rule bounds the projected gradients during the last pass; later steps of that pass move them by
        # at most |Q| times a step, hence the factor (as for the core engine's own tests).
        assert_kkt(alpha, Q @ alpha - 1.0, None, C, tol=10 * CD_TOL * max(1.0, np.abs(Q).max()), equality=False)
        primal, dual = certificate.statistics["primal"][label], certificate.statistics["dual"][label]
        assert dual == pytest.approx(alpha.sum() - 0.5 * alpha @ Q @ alpha, rel=1e-8, abs=1e-10)
        assert -1e-9 * max(1.0, abs(primal)) <= primal - dual <= 1e-3 * max(1.0, abs(primal))


@settings(max_examples=8)
@given(seed=st.integers(0, 2**16), C=st.sampled_from([0.1, 1.0, 10.0]))
def test_the_feature_route_and_the_kernel_route_solve_the_same_dual(seed, C):
    """Linear CD on the m (1 + |N_l|) explicit features, box CD on the n x n kernel of eq. 10, and the reference QP."""
    X, Y = _problem(seed, n=30, n_labels=3)
    model = ConceptNetwork(C=C, threshold=0.0, n_components=10, eig_rtol=1e-6, tol=1e-8).fit(X, Y)
    graph, kernels, U = model.concept_graph_, model.learned_kernels_, model.basis_.vectors
    kernels_per_label, signs = [], 2.0 * Y - 1.0
    for label in range(Y.shape[1]):
        K_hat = (1 + model.eps) ** 2 * U @ np.diag(kernels.omega[label]) @ U.T  # eq. 10's kernel, from K_l, K_lt
        for r in np.flatnonzero(graph.edges[:, 0] == label):
            a = np.where(Y[:, graph.edges[r, 1]] == 1, 1 + model.eps_edge, -model.eps_edge)
            K_hat += model.sigma**2 * np.outer(a, a) * (U @ np.diag(kernels.zeta[r]) @ U.T)
        kernels_per_label.append(K_hat)
    kernel_fit = box_kernel_cd(np.stack(kernels_per_label), signs, C=C, tol=1e-8, max_iter=100000, random_state=0)
    for label in range(Y.shape[1]):
        Q = np.outer(signs[:, label], signs[:, label]) * kernels_per_label[label]
        reference = solve_box_qp_reference(Q, -np.ones(len(Q)), 0.0, C)
        objective = lambda a: 0.5 * a @ Q @ a - a.sum()  # noqa: E731
        for alpha in (model.dual_[:, label], kernel_fit.solution.dual[:, label]):
            assert_matches_reference(alpha, objective(alpha), reference.x, objective(reference.x),
                                     rtol_objective=1e-6, atol_objective=1e-9, atol_alpha=None)  # fmt: skip


@settings(max_examples=6)
@given(seed=st.integers(0, 2**16), C=st.sampled_from([0.1, 1.0]))
def test_sigma_zero_is_independent_svms_on_the_label_kernels(seed, C):
    """sigma = 0: the scores (1 + eps) v_l^T phi_l(x) are those of a bias-free SVM on K_l at the cost C (1 + eps)^2
    (theta' = (1 + eps) v turns (5) into it), computed on new rows from K_l(x, x_i) of eq. 18."""
    X, Y = _problem(seed, n=50)
    X_new = np.random.default_rng(seed + 1).standard_normal((20, X.shape[1]))
    model = ConceptNetwork(C=C, sigma=0.0, threshold=0.02, n_components=20, eig_rtol=1e-6, tol=1e-8).fit(X, Y)
    U, omega = model.basis_.vectors, model.learned_kernels_.omega
    K_l = np.stack([U @ np.diag(w) @ U.T for w in omega])
    svm = box_kernel_cd(K_l, 2.0 * Y - 1.0, C=C * (1 + model.eps) ** 2, tol=1e-8, max_iter=100000, random_state=0)
    phi = model.eigenfunctions(X_new)
    expected = np.column_stack([(phi * omega[l]) @ U.T @ svm.solution.dual_coef[:, l] for l in range(Y.shape[1])])
    scores = model.decision_function(X_new)
    np.testing.assert_allclose(scores, expected, atol=1e-4 * max(1.0, np.abs(expected).max()))
    clear = np.abs(expected) > 1e-3 * max(1.0, np.abs(expected).max())
    np.testing.assert_array_equal(model.predict(X_new)[clear], (expected > 0)[clear])


# -- inference -------------------------------------------------------------------------------------


def _random_scores(seed, n=50, n_labels=5, density=0.6):
    rng = np.random.default_rng(seed)
    adjacency = np.triu(rng.uniform(size=(n_labels, n_labels)) < density, 1)
    edges = np.argwhere(adjacency | adjacency.T)
    return rng.standard_normal((n, n_labels)), 3.0 * rng.standard_normal((n, len(edges))), edges


@settings(max_examples=20)
@given(seed=st.integers(0, 2**16), cap=st.integers(1, 8))
def test_icm_stops_within_the_cap_and_says_how_each_row_stopped(seed, cap):
    G, F, edges = _random_scores(seed)
    result = infer(G, F, edges, eps=0.5, sigma=1.0, eps_edge=0.5, method="icm", max_sweeps=cap)
    assert result.n_sweeps.max() <= cap
    outcome = result.converged.astype(int) + result.cycled.astype(int) + result.hit_cap.astype(int)
    np.testing.assert_array_equal(outcome, 1)  # exactly one way of stopping per row
    done = result.converged
    np.testing.assert_array_equal(result.labels[done], (result.scores[done] > 0).astype(int))


def test_icm_can_cycle_and_the_cycle_is_detected_and_warned_about():
    """Label 0 copies label 1 through f_01 < 0 seen from a negative, label 1 turns on when 0 is on: (0, 0) -> (1, 1)
    -> (0, 0).  The global ascent on (3) does not cycle on the same scores."""
    G = np.zeros((1, 2))
    F = np.array([[-1.0, 1.0]])  # f_01 < 0, f_10 > 0
    edges = np.array([[0, 1], [1, 0]])
    result = infer(G, F, edges, eps=0.5, sigma=1.0, eps_edge=0.5, method="icm", max_sweeps=50)
    assert result.cycled[0] and not result.converged[0] and result.n_sweeps[0] == 2
    ascent = infer(G, F, edges, eps=0.5, sigma=1.0, eps_edge=0.5, method="global", max_sweeps=50)
    assert ascent.converged[0] and not ascent.cycled[0]


@settings(max_examples=20)
@given(seed=st.integers(0, 2**16))
def test_the_global_ascent_never_decreases_the_score_and_ends_at_a_coordinatewise_maximum(seed):
    G, F, edges = _random_scores(seed)
    kwargs = {"eps": 0.3, "sigma": 1.0, "eps_edge": 0.6}
    previous = global_score(G > 0, G, F, edges, **kwargs)
    for sweeps in range(1, 12):
        result = infer(G, F, edges, method="global", max_sweeps=sweeps, **kwargs)
        score = global_score(result.labels, G, F, edges, **kwargs)
        assert np.all(score >= previous - 1e-12 * np.maximum(1.0, np.abs(previous)))
        previous = score
    assert not result.cycled.any()
    final = result.labels[result.converged]
    for label in range(G.shape[1]):
        flipped = final.copy()
        flipped[:, label] = 1 - flipped[:, label]
        rows = result.converged
        assert np.all(global_score(flipped, G[rows], F[rows], edges, **kwargs)
                      <= global_score(final, G[rows], F[rows], edges, **kwargs) + 1e-12)  # fmt: skip


def test_predict_warns_with_the_number_of_rows_that_did_not_settle():
    X, Y = _problem(3, n=60)
    model = ConceptNetwork(threshold=0.02, sigma=3.0, n_components=15, max_sweeps=1).fit(X, Y)
    result = model.infer(X)
    # One sweep confirms a fixed point only where it changed nothing: the other rows hit the cap.
    assert result.n_hit_cap > 0 and result.n_hit_cap == np.count_nonzero(result.n_sweeps == 1) - result.converged.sum()
    with pytest.warns(InferenceWarning, match=rf"0 of 60 rows cycled .* and {result.n_hit_cap} hit max_sweeps=1"):
        labels = model.predict(X)
    np.testing.assert_array_equal(labels, result.labels)


# -- conformance, validation, sparse input ---------------------------------------------------------


def test_concept_network_conforms():
    check_method("concept_network")


@pytest.mark.parametrize("params, name", [
    ({"threshold": 0.5}, "threshold"), ({"threshold": -0.1}, "threshold"), ({"sigma": -1.0}, "sigma"),
    ({"eps": 0.0}, "eps"), ({"eps": 1.0}, "eps"), ({"eps_edge": 1.5}, "eps_edge"), ({"site_tradeoff": 0.0}, "site_tradeoff"),
    ({"edge_tradeoff": -1.0}, "edge_tradeoff"), ({"n_components": 0}, "n_components"), ({"eig_rtol": 1.0}, "eig_rtol"),
    ({"inference": "gibbs"}, "inference"), ({"max_sweeps": 0}, "max_sweeps"), ({"C": 0.0}, "C"), ({"gamma": 0.0}, "gamma"),
])  # fmt: skip
def test_bad_parameters_are_a_value_error_naming_them(params, name):
    X, Y = _problem(0, n=20)
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        ConceptNetwork(**params).fit(X, Y)


def test_the_yahoo_rows_stay_sparse(datasets_dir, monkeypatch):
    """yahoo-arts-mkml's CSR rows: the fit and the scores never densify X, and equal the dense fit's."""
    data = load_dataset("yahoo-arts-mkml", data_home=datasets_dir)
    assert sp.issparse(data.X)
    X = sp.csr_matrix(data.X[:300])
    Y = np.asarray(data.Y[:300])
    Y = Y[:, np.argsort(-Y.sum(axis=0), kind="stable")[:6]]
    model = ConceptNetwork(threshold=0.02, n_components=30)
    dense_scores = model.fit(X.toarray(), Y).decision_function(X.toarray())

    def guarded(method):
        # Products of rows (kernel blocks, n_rows x n_rows) are dense by nature; rows of X (d columns) must not be.
        def densify(self, *args, **kwargs):
            if self.shape[1] == X.shape[1]:
                raise AssertionError(f"a sparse block of X rows {self.shape} was densified")
            return method(self, *args, **kwargs)

        return densify

    for layout in (sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array):
        monkeypatch.setattr(layout, "toarray", guarded(layout.toarray))
        monkeypatch.setattr(layout, "todense", guarded(layout.todense))
    sparse_scores = model.fit(X, Y).decision_function(X)
    np.testing.assert_allclose(sparse_scores, dense_scores, atol=1e-6 * max(1.0, np.abs(dense_scores).max()))
