"""The privileged family as a composition of registered parts (You, Xu, Wang, Xu & Tao, *Privileged Multi-label
Learning*).

* Each preset (prml, prbr, leml) is the ``ComposedEstimator`` built from the registered names with its
  hyper-parameters in ``<role>_params``: decision values within the bound the two certificates give.
* The solvers accept parts by capability: the squared hinge (squared-slack SVM+) fits certified by name; the
  logistic loss, which has no slack for a correcting function to replace, is refused with that reason; a
  relation or regulariser of another class with the same capabilities is solved as the stock one.
* The squared-slack SVM+ sub-solver agrees with a reference QP solve (label by label, and the D-step with an
  embedding for any draw: the certified interval [dual, primal] holds the exact optimum, by its dual) and, without privileged
  labels, with the core's squared-hinge CD.
"""

import math

import attrs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from multilabel_core_plugins.prml import LEML, PrBR, PrivilegedCDSolver, PrivilegedLabels, PrML, resolve_rank
from multilabel_core_plugins.prml.solver import prml_alternating

from multilabel_core import ComposedEstimator
from multilabel_core.base import CapabilityError, LabelRelation
from multilabel_core.regularizers import LowRank
from multilabel_core.solvers import AlternatingSolver
from multilabel_core_plugins.prml.svmplus import embedded_hinge_ipm, privileged_label_features, svmplus_ipm
from multilabel_core.testing.reference import solve_box_qp_reference
from multilabel_core.testing.strategies import feature_matrices, sign_matrices

#: Tight enough that the certificates' bounds are far below the decision values' scale.
TIGHT = 1e-9


@pytest.fixture(scope="module")
def data():
    """80 rows, 8 features, 5 labels, nearly linear in x.  On noisier data (the testing kit's correlated set)
    PrML's first W-step is the trivial point W = 0 (docs/methods/prml.md), where any two fits agree trivially."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 8))
    return X, (X @ rng.standard_normal((8, 5)) + 0.1 * rng.standard_normal((80, 5)) > 0).astype(int)


def _augmented_norms(X):
    """||(x, 1)|| per row: the scores' bias is a constant feature of x."""
    return np.sqrt(np.sum(np.asarray(X) ** 2, axis=1) + 1.0)


def _last(certificate):
    return certificate[-1] if isinstance(certificate, list) else certificate


# -- each preset is its composition by name ---------------------------------------------------------

PRESETS = {
    # preset, the by-name parts' settings; C is not rescaled by any of the three (ComposedEstimator's _cost).
    "prml": (
        PrML(C=1.0, gamma1=1.5, gamma2=0.7, rank=1.0, tol=TIGHT, max_iter=100, cd_tol=TIGHT),
        dict(loss="hinge", regularizer="low_rank", regularizer_params={"rank": resolve_rank(1.0, 5), "gamma": 1.5},
             relation="privileged_labels", relation_params={"gamma": 0.7, "n_privileged": None, "bias": True},
             solver_params={"cd_tol": TIGHT, "random_state": 0, "init": "svd", "sub_solver": "auto"},
             tol=TIGHT, max_iter=100, C=1.0),
        "prml_alternating",
    ),
    "prbr": (
        PrBR(C=0.5, gamma2=0.7, n_privileged=3, cd_tol=TIGHT),
        dict(loss="hinge", regularizer="frobenius", relation="privileged_labels",
             relation_params={"gamma": 0.7, "n_privileged": 3, "bias": True},
             solver_params={"random_state": 0, "sub_solver": "auto"}, tol=TIGHT, C=0.5),
        "privileged_cd",
    ),
    "leml": (
        LEML(C=1.0, rank=4, tol=TIGHT, max_iter=100, cd_tol=TIGHT),
        dict(loss="hinge", regularizer="low_rank", regularizer_params={"rank": 4, "gamma": 1.0},
             relation="independent", solver_params={"cd_tol": TIGHT, "random_state": 0, "init": "svd"},
             tol=TIGHT, max_iter=100, C=1.0),
        "prml_alternating",
    ),
}


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_each_preset_is_its_composition_by_name(name, data):
    """PrBR is convex and its objective is 1-strongly convex in the scores' weights (1/2 ||W||^2, Theorem 1), so
    a certified gap g puts W within sqrt(2 g) of the optimum and ``|t(x) - t*(x)| <= ||(x, 1)|| (sqrt(2 g_1) +
    sqrt(2 g_2))``.  Problem (5) (PrML, LEML) is not convex; both fits run the same rounds from the same SVD
    start, so they are compared block by block: the last W-step (1-strongly convex in each w_i, in its own
    units) and the last D-step (1-strongly convex in D) bound ``Z = D^T W`` to first order by
    ``e_D max_i ||w_i|| + ||D||_F e_W + e_D e_W``, e the two certificates' sqrt(2 g) summed."""
    X, Y = data
    preset, settings, solver_name = PRESETS[name]
    preset = preset.fit(X, Y)
    composed = ComposedEstimator(kernel="linear", solver="auto", **settings).fit(X, Y)
    assert composed.solver_name_ == solver_name
    assert [type(composed.parts_[role]) for role in ("loss", "regularizer", "relation")] == [
        type(preset.parts_[role]) for role in ("loss", "regularizer", "relation")]
    first, second = _last(preset.certificate_), _last(composed.certificate_)
    assert first.converged and second.converged
    if name == "prbr":
        error = math.sqrt(2.0 * first.gap) + math.sqrt(2.0 * second.gap)
    else:
        rounds = [model.step_certificates_[-1].statistics for model in (preset, composed)]
        e_w = sum(math.sqrt(2.0 * max(0.0, r["w_step"].gap)) for r in rounds)
        e_d = sum(math.sqrt(2.0 * max(0.0, r["d_step"].gap)) for r in rounds)
        fitted = composed.solution_.model_state
        W, D = fitted["label_weights"], np.column_stack([fitted["dictionary"], fitted["dictionary_intercept"]])
        error = e_d * np.linalg.norm(W, axis=0).max() + np.linalg.norm(D) * e_w + e_d * e_w
        assert len(preset.objective_history_) == len(composed.objective_history_)
    assert np.abs(composed.decision_function(X)).max() > 1.0  # not the trivial point W = 0
    bound = _augmented_norms(X)[:, None] * error
    difference = np.abs(preset.decision_function(X) - composed.decision_function(X))
    assert np.all(difference <= bound + 1e-12), (difference.max(), bound.min())
    # predict is sign(decision_function) for all three (docs/methods/prml.md)
    np.testing.assert_array_equal(composed.predict(X), (composed.decision_function(X) > 0).astype(int))


@pytest.mark.parametrize("parts, expected", [
    (dict(loss="hinge", regularizer="low_rank", relation="privileged_labels"), "prml_alternating"),
    (dict(loss="hinge", regularizer="low_rank", relation="independent"), "prml_alternating"),
    (dict(loss="hinge", regularizer="frobenius", relation="privileged_labels"), "privileged_cd"),
    (dict(loss="squared_hinge", regularizer="low_rank", relation="privileged_labels"), "prml_alternating"),
    (dict(loss="squared_hinge", regularizer="frobenius", relation="privileged_labels"), "privileged_cd"),
])
def test_auto_finds_the_family_solver_for_the_parts(parts, expected, data):
    X, Y = data
    params = {"regularizer_params": {"rank": 2}} if parts["regularizer"] == "low_rank" else {}
    assert ComposedEstimator(**parts, **params).choose_solver(X, Y).name == expected


# -- capabilities, not classes ------------------------------------------------------------------------


def test_privileged_cd_alone_refuses_a_low_rank_problem_one_round_would_not_solve(data):
    X, Y = data
    with pytest.raises(CapabilityError, match="one round .* is not a solution of problem \\(5\\)"):
        ComposedEstimator(loss="hinge", regularizer="low_rank", regularizer_params={"rank": 2},
                          relation="privileged_labels", solver="privileged_cd").fit(X, Y)
    # As the model step of an alternating driver, it is what prml_alternating builds.
    by_object = ComposedEstimator(
        loss="hinge", regularizer=LowRank(rank=2), relation="privileged_labels",
        solver=AlternatingSolver(inner=PrivilegedCDSolver(as_round=True, tol=1e-6), tol=1e-6, max_iter=60),
    ).fit(X, Y)
    by_name = ComposedEstimator(loss="hinge", regularizer="low_rank", regularizer_params={"rank": 2},
                                relation="privileged_labels", solver="prml_alternating",
                                solver_params={"cd_tol": 1e-6}, tol=1e-6, max_iter=60).fit(X, Y)
    np.testing.assert_array_equal(by_object.decision_function(X), by_name.decision_function(X))


@pytest.mark.parametrize("relation", ["privileged_labels", "independent"])
@pytest.mark.parametrize("regularizer", ["low_rank", "frobenius"])
@pytest.mark.parametrize("loss", ["logistic", "epsilon_insensitive", "pairwise_ranking_hinge"])
def test_losses_without_slacks_are_refused_with_the_reason(loss, regularizer, relation, data):
    X, Y = data
    params = {"regularizer_params": {"rank": 2}} if regularizer == "low_rank" else {}
    solver = "privileged_cd" if regularizer == "frobenius" else "prml_alternating"
    reason = "nothing for the privileged labels to correct" if relation == "privileged_labels" else "with slacks"
    with pytest.raises(CapabilityError, match=reason):
        ComposedEstimator(loss=loss, regularizer=regularizer, relation=relation, solver=solver, **params).fit(X, Y)


@attrs.frozen
class _NearestLabelsRelation(LabelRelation):
    """Not PrivilegedLabels, but with its capabilities: a label pool (each label sees its K nearest)."""

    gamma: float = 0.7
    bias: bool = True
    learned = False
    state = ("pool",)

    def initial(self, n_labels):
        return 1.0 - np.eye(n_labels)

    def update(self, gram):
        return self.initial(np.shape(gram)[0])

    def pool(self, Y):
        return PrivilegedLabels(gamma=self.gamma, n_privileged=3, bias=self.bias).pool(Y)


def test_a_relation_with_a_label_pool_is_solved_whatever_its_class(data):
    """The pool is read through the relation's capabilities (``pool``, ``gamma``, ``bias``): the same pool gives
    the same model, within the certificates' bound (PrBR, convex)."""
    X, Y = data
    fits = [ComposedEstimator(loss="hinge", regularizer="frobenius", relation=relation, solver="privileged_cd",
                              tol=TIGHT, C=0.5).fit(X, Y)
            for relation in (_NearestLabelsRelation(), PrivilegedLabels(gamma=0.7, n_privileged=3))]
    error = sum(math.sqrt(2.0 * fit.certificate_.gap) for fit in fits)
    difference = np.abs(fits[0].decision_function(X) - fits[1].decision_function(X))
    assert np.all(difference <= _augmented_norms(X)[:, None] * error + 1e-12)


@attrs.frozen
class _HeavierFactors(LowRank):
    """The low-rank form with another factor penalty (2 ||D||^2): the solver's objective would not be this one."""

    def factor_value(self, D, V):
        return 2.0 * float(np.sum(np.square(D))) + 0.5 * self.gamma * float(np.sum(np.square(V)))


def test_a_low_rank_regulariser_of_another_penalty_is_refused(data):
    X, Y = data
    with pytest.raises(CapabilityError, match="factor_value is not of that form"):
        ComposedEstimator(loss="hinge", regularizer=_HeavierFactors(rank=2), relation="privileged_labels",
                          solver="prml_alternating").fit(X, Y)


# -- the squared hinge: squared-slack SVM+ ------------------------------------------------------------


@pytest.mark.parametrize("regularizer", ["frobenius", "low_rank"])
def test_privileged_labels_with_the_squared_hinge_fit_certified_by_name(regularizer, data):
    """Certified, and both non-default parts change the model: the privileged labels (against independent labels
    with the same loss) and the squared slack (against the hinge's), each by far more than the certificates'
    bound on PrBR's convex problem (first-order for the low-rank fits, whose bound the preset test derives)."""
    X, Y = data
    params = {"regularizer_params": {"rank": 3}} if regularizer == "low_rank" else {}

    def fit(loss, relation):
        model = ComposedEstimator(loss=loss, regularizer=regularizer, relation=relation, tol=1e-8, C=0.5, **params)
        if regularizer == "low_rank":  # tol is then the alternation's, cd_tol every sub-solve's gap
            model.set_params(tol=1e-5, max_iter=300, solver_params={"cd_tol": 1e-8})
        return model.fit(X, Y)

    squared = fit("squared_hinge", "privileged_labels")
    certificate = _last(squared.certificate_)
    assert certificate.converged and certificate.relative_gap <= 1e-8 * (1 if regularizer == "frobenius" else 10)
    assert squared.solver_name_ == ("privileged_cd" if regularizer == "frobenius" else "prml_alternating")
    scale = np.abs(squared.decision_function(X)).max()
    for other in (fit("squared_hinge", "independent"), fit("hinge", "privileged_labels")):
        assert np.abs(squared.decision_function(X) - other.decision_function(X)).max() > 1e-2 * scale


def test_the_squared_slack_needs_the_interior_point_sub_solver(data):
    X, Y = data
    with pytest.raises(CapabilityError, match="sub_solver='cd'"):
        ComposedEstimator(loss="squared_hinge", regularizer="frobenius", relation="privileged_labels",
                          solver="privileged_cd", solver_params={"sub_solver": "cd"}).fit(X, Y)
    with pytest.raises(ValueError, match="bias"):
        ComposedEstimator(loss="squared_hinge", regularizer="frobenius", relation="privileged_labels",
                          relation_params={"bias": False}, solver="privileged_cd").fit(X, Y)


def _small(seed, n=30, d=3, n_labels=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    noise = 0.7 * rng.standard_normal((n, n_labels))
    return X, np.where(X @ rng.standard_normal((d, n_labels)) + noise > 0, 1.0, -1.0)


def _qp_optimum(H, G, h) -> float:
    """The optimum of ``min 1/2 z^T H z`` s.t. ``G z >= h`` (H positive definite), exactly, by its dual.

    The Lagrangian dual is ``max_{lam >= 0} h^T lam - 1/2 lam^T G H^-1 G^T lam``, a box QP the kit's
    active-set reference solves to a verified KKT point; a convex QP with linear constraints and a
    feasible point has no duality gap, so its value is the primal optimum.  (SLSQP on the primal was
    the reference before: on degenerate draws, repeated rows, it ended at its start after one step.)
    """
    Q = G @ np.linalg.solve(H, G.T)
    solution = solve_box_qp_reference((Q + Q.T) / 2.0, -h, 0.0, np.inf)
    return -float(solution.objective)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_squared_slack_svmplus_matches_a_reference_qp(seed):
    """``svmplus_ipm(squared_slack=True)`` against the exact optimum of the explicit primal, label by label:
    ``min 1/2 ||w||^2 + gamma/2 ||w~||^2 + C sum (w~^T x~_j)^2`` s.t. ``y_j w^T x_j >= 1 - w~^T x~_j``,
    ``w~^T x~_j >= 0``.  The certificate's primal is the objective at a feasible point, recomputed here, and its
    dual a lower bound: the exact optimum (:func:`_qp_optimum`) lies in [dual - 1e-6, primal + 1e-6]."""
    X, Y = _small(seed)
    C, gamma = 0.7, 1.3
    X_priv, mask = privileged_label_features(Y)
    fit = svmplus_ipm(X, X_priv, Y, C, gamma, privileged_mask=mask, fit_intercept=True, tol=1e-10,
                      squared_slack=True)
    certificate, solution = fit.certificate, fit.solution
    assert certificate.converged and 0.0 <= certificate.gap <= 1e-10 * max(1.0, certificate.primal)
    Xa = np.column_stack([X, np.ones(len(X))])
    n, p = Xa.shape
    weights = np.vstack([solution.coef, solution.intercept])
    reference, primal = 0.0, 0.5 * float(np.sum(weights ** 2))
    for i in range(Y.shape[1]):
        Z = np.column_stack([X_priv * mask[i], np.ones(n)])
        v = np.append(solution.model_state["W_tilde"][:, i], solution.model_state["intercept_tilde"][i])
        slack = Z @ v
        margins = Y[:, i] * (Xa @ weights[:, i]) + slack
        assert slack.min() >= -1e-12 and margins.min() >= 1.0 - 1e-12  # a feasible point
        primal += 0.5 * gamma * float(v @ v) + C * float(slack @ slack)

        # The primal as a QP in z = (w, w~): 1/2 z^T H z subject to G z >= h.
        q = Z.shape[1]
        H = np.zeros((p + q, p + q))
        H[:p, :p] = np.eye(p)
        H[p:, p:] = gamma * np.eye(q) + 2.0 * C * Z.T @ Z
        G = np.vstack([np.hstack([Y[:, [i]] * Xa, Z]), np.hstack([np.zeros((n, p)), Z])])
        h = np.concatenate([np.ones(n), np.zeros(n)])
        reference += _qp_optimum(H, G, h)
    assert primal == pytest.approx(certificate.primal, rel=1e-12)
    assert certificate.dual - 1e-6 <= reference <= certificate.primal + 1e-6


@st.composite
def squared_d_steps(draw):
    """A D-step (eq. 10) with squared slacks: rows x_j (dense or sparse), the labels as privileged features with a
    pool, an embedding A = W, C and gamma."""
    n, n_labels = draw(st.integers(3, 8)), draw(st.integers(2, 3))
    Y = draw(sign_matrices(n, n_labels))
    K = draw(st.one_of(st.none(), st.integers(1, n_labels - 1)))
    k = draw(st.integers(1, 2))
    return {
        "X": draw(feature_matrices(n, st.integers(1, 3), sparse=None, magnitude=3.0)), "X_priv": Y, "Y": Y,
        "C": draw(st.floats(0.1, 3.0)), "gamma": draw(st.floats(0.3, 3.0)),
        "embedding": draw(hnp.arrays(np.float64, (k, n_labels), elements=st.floats(-2.0, 2.0))),
        "privileged_mask": PrivilegedLabels(n_privileged=K).pool(Y), "fit_intercept": True,
    }


@given(squared_d_steps())
def test_the_squared_slack_d_step_certificate_brackets_a_reference_qp(problem):
    """Whatever the certificate's gap, ``[dual, primal]`` holds the optimum of the explicit primal over
    (M, w~_1..w~_L) (:func:`_qp_optimum`, exact) within 1e-6 relative, and the returned point is feasible with
    the certificate's primal as its objective (recomputed here)."""
    fit = svmplus_ipm(**problem, tol=1e-9, warn=False, squared_slack=True)
    certificate, solution = fit.certificate, fit.solution
    X = problem["X"].toarray() if hasattr(problem["X"], "toarray") else np.asarray(problem["X"])
    Y, A, mask, C, gamma = problem["Y"], problem["embedding"], problem["privileged_mask"], problem["C"], problem["gamma"]
    n, n_labels = Y.shape
    Xa = np.column_stack([X, np.ones(n)])
    k, p, q = A.shape[0], Xa.shape[1], n_labels + 1
    Z = [np.column_stack([Y * mask[i], np.ones(n)]) for i in range(n_labels)]
    # z = (vec M (k, p) row-major, then w~_i with its bias, label by label); G z >= h, objective 1/2 z^T H z.
    size = k * p + n_labels * q
    H = np.zeros((size, size))
    H[: k * p, : k * p] = np.eye(k * p)
    G, h = [], []
    for i in range(n_labels):
        block = slice(k * p + i * q, k * p + (i + 1) * q)
        H[block, block] = gamma * np.eye(q) + 2.0 * C * Z[i].T @ Z[i]
        margin = np.zeros((n, size))
        margin[:, : k * p] = (Y[:, [i]] * np.einsum("r,jc->jrc", A[:, i], Xa).reshape(n, -1))
        margin[:, block] = Z[i]
        slack = np.zeros((n, size))
        slack[:, block] = Z[i]
        G += [margin, slack]
        h += [np.ones(n), np.zeros(n)]
    G, h = np.vstack(G), np.concatenate(h)
    optimum = _qp_optimum(H, G, h)
    M = np.column_stack([solution.model_state["D"], solution.model_state["D_intercept"]])
    V = np.column_stack([solution.model_state["W_tilde"].T, solution.model_state["intercept_tilde"]])
    point = np.concatenate([M.ravel(), V.ravel()])
    assert np.min(G @ point - h) >= -1e-9 * max(1.0, np.abs(point).max())
    objective = 0.5 * point @ H @ point
    scale = max(1.0, abs(objective))
    assert objective == pytest.approx(certificate.primal, rel=1e-9, abs=1e-9)
    assert certificate.dual - 1e-6 * scale <= optimum <= certificate.primal + 1e-6 * scale


@pytest.mark.parametrize("seed", [0, 1])
def test_squared_slack_hinge_ipm_is_the_l2_svm_of_the_core(seed):
    """Without privileged labels the squared slacks are the squared-hinge SVM: ``embedded_hinge_ipm``'s certified
    interval [dual, primal] overlaps the core's per-label CD fit of the same problem (the bias regularised as a
    constant feature in both)."""
    X, Y = _small(seed)
    fit = embedded_hinge_ipm(X, Y, 0.7, fit_intercept=True, tol=1e-10, squared_slack=True)
    core = ComposedEstimator(loss="squared_hinge", regularizer="frobenius", relation="independent", solver="cd",
                             tol=1e-10, C=0.7).fit(X, (Y > 0).astype(int))
    c1, c2 = fit.certificate, core.certificate_
    assert c1.converged and c2.converged
    assert max(c1.dual, c2.dual) <= min(c1.primal, c2.primal) + 1e-9 * max(1.0, c1.primal)
    error = sum(math.sqrt(2.0 * max(0.0, c.gap)) for c in (c1, c2))  # a gap at round-off can be below 0
    scores = X @ fit.solution.coef + fit.solution.intercept
    assert np.all(np.abs(scores - core.decision_function(X)) <= _augmented_norms(X)[:, None] * error + 1e-9)


def test_prml_alternating_builds_its_rounds_solver_as_a_round():
    assert prml_alternating().inner.as_round and not PrivilegedCDSolver().as_round
