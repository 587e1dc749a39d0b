"""PrML, PrBR and LEML as registered methods (You, Xu, Wang, Xu & Tao, *Privileged Multi-label Learning*):
the core's conformance check, sparse X end to end, input validation, determinism, the feasibility LP of the
paper-literal correcting functions, and the emotions training split where that form is infeasible.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from multilabel_core_plugins.prml import LEML, PrBR, PrivilegedLabels, PrML, infeasible_labels
from multilabel_core_plugins.prml.solver import _first_dictionary, _projected

from multilabel_core.datasets import load_dataset
from multilabel_core.solvers import ConvergenceWarning
from multilabel_core_plugins.prml.svmplus import svmplus_cd, svmplus_ipm
from multilabel_core.testing.checks import check_method

# -- conformance -----------------------------------------------------------------------------


def test_leml_conforms():
    check_method("leml")


@pytest.mark.parametrize("name", ["prml", "prbr"])
def test_the_privileged_methods_conform(name):
    """SVM+'s certificate is taken at a feasible point (the correcting functions raised through their bias),
    so its gap is a true duality gap and the core's default gap tolerance applies."""
    check_method(name)


# -- sparse X ------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:AlternatingSolver did not converge:multilabel_core.solvers.ConvergenceWarning")
@pytest.mark.parametrize("name", ["enron", "bibtex"])
def test_sparse_text_rows_stay_sparse(name, datasets_dir, monkeypatch):
    """Fits on CSR rows with densifying forbidden give the dense fits' scores: the same coordinate orders on the
    same numbers, so they differ by the rounding of the sums only (dual CD on both: ``sub_solver="auto"``
    would take the interior-point method on the dense copy, another solver)."""
    dataset = load_dataset(name, data_home=datasets_dir)
    rows = np.random.default_rng(0).permutation(dataset.X.shape[0])[:200]
    X, Y = sp.csr_matrix(dataset.X[rows]), np.asarray(dataset.Y[rows])
    Y = Y[:, np.argsort(-Y.sum(axis=0), kind="stable")[:5]]  # the 5 most frequent labels
    models = [PrML(C=0.05, rank=2, max_iter=2, cd_tol=1e-2, sub_solver="cd"), PrBR(C=0.05, cd_tol=1e-2, sub_solver="cd"),
              LEML(C=0.05, rank=2, max_iter=2, cd_tol=1e-2, sub_solver="cd")]
    X_dense = X.toarray()
    dense = [model.fit(X_dense, Y).decision_function(X_dense) for model in models]

    def densify(self, *args, **kwargs):
        raise AssertionError("a sparse X was densified")

    for layout in (sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array):
        monkeypatch.setattr(layout, "toarray", densify)
        monkeypatch.setattr(layout, "todense", densify)
    for model, scores in zip(models, dense):
        sparse_scores = model.fit(X, Y).decision_function(X)
        np.testing.assert_allclose(sparse_scores, scores, atol=1e-6 * max(1.0, np.abs(scores).max()))


# -- input validation and determinism ------------------------------------------------------


def _small(seed=0, n=30, d=4, n_labels=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, (X @ rng.standard_normal((d, n_labels)) > 0).astype(int)


@pytest.mark.parametrize("estimator, name", [
    (PrML(rank=0), "rank"), (PrML(rank=1.5), "rank"), (PrML(rank="a"), "rank"), (PrML(rank=4), "rank"), (LEML(rank=0), "rank"),
    (LEML(rank=4), "rank"), (PrML(gamma2=0.0), "gamma2"), (PrML(gamma2=-1.0), "gamma2"), (PrBR(gamma2=0.0), "gamma2"),
    (PrML(n_privileged=0), "n_privileged"), (PrML(n_privileged=3), "n_privileged"),
    (PrBR(n_privileged=0), "n_privileged"), (PrBR(n_privileged=3), "n_privileged"),
    (PrML(privileged_bias="yes"), "privileged_bias"), (PrBR(privileged_bias="yes"), "privileged_bias"),
    (PrML(sub_solver="newton"), "sub_solver"), (PrBR(sub_solver=None), "sub_solver"), (PrML(init="pca"), "init"),
    (LEML(init=0), "init"), (PrML(sub_solver="ipm", privileged_bias=False), "sub_solver"),
], ids=lambda value: value if isinstance(value, str) else "")
def test_bad_parameters_are_a_value_error_naming_them(estimator, name):
    X, Y = _small()  # L = 3
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        estimator.fit(X, Y)


@pytest.mark.parametrize("make", [lambda: PrML(rank=2, random_state=4), lambda: LEML(rank=2, random_state=4),
                                  lambda: PrBR(random_state=4)], ids=["prml", "leml", "prbr"])
def test_the_same_random_state_gives_the_same_model(make):
    X, Y = _small(1)
    first, second = make().fit(X, Y), make().fit(X, Y)
    # Exact: the same computation on the same arrays in one process.
    np.testing.assert_array_equal(first.coef_, second.coef_)
    np.testing.assert_array_equal(first.intercept_, second.intercept_)


# -- the feasibility LP ---------------------------------------------------------------------


def test_opposite_privileged_features_on_one_point_are_infeasible():
    """Two examples at the same x with opposite labels and opposite privileged features: the slacks
    <w~, y~_j> = +-v must both be >= 0, so v = 0, yet the margins w and -w need slacks summing to 2."""
    X = np.array([[1.0], [1.0]])
    Y = np.array([[1.0, 1.0], [-1.0, -1.0]])
    pool = ~np.eye(2, dtype=bool)
    assert infeasible_labels(X, Y, pool) == [0, 1]
    assert infeasible_labels(X, Y, pool, fit_intercept=True) == [0, 1]
    assert infeasible_labels(sp.csr_matrix(X), Y, pool) == [0, 1]
    with pytest.raises(ValueError, match=r"infeasible for label\(s\) \[0, 1\]"):
        PrBR(privileged_bias=False).fit(X, (Y > 0).astype(int))
    # The correcting functions' bias makes it feasible: CD converges.
    fit = svmplus_cd(X, Y, Y, 1.0, 1.0, privileged_mask=pool, tol=1e-6, max_iter=10_000, random_state=0)
    assert fit.certificate.converged


@pytest.mark.parametrize("X, Y", [
    (np.array([[1.0], [-1.0]]), np.array([[1.0, 1.0], [-1.0, -1.0]])),  # opposite features, separable x
    (np.array([[1.0], [1.0]]), np.array([[1.0, 1.0], [-1.0, 1.0]])),  # one x, equal features: a slack of 1
], ids=["separable", "equal-features"])
def test_feasible_pairs_are_not_reported(X, Y):
    pool = ~np.eye(2, dtype=bool)
    assert infeasible_labels(X, Y, pool, fit_intercept=True) == []
    fit = svmplus_cd(X, Y, Y, 1.0, 1.0, privileged_mask=pool, privileged_intercept=False, fit_intercept=True,
                     tol=1e-6, max_iter=10_000, random_state=0)
    assert fit.certificate.converged


# -- emotions ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def emotions(datasets_dir):
    dataset = load_dataset("emotions-train", data_home=datasets_dir)
    assert dataset.label_names[0] == "amazed-suprised"
    X = np.asarray(dataset.X, dtype=np.float64)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    Y = np.asarray(dataset.Y)
    return X, Y, np.where(Y > 0, 1.0, -1.0)


def test_amazed_with_the_privileged_bias_converges_to_391_5(emotions):
    """PrBR's problem for label 0 (C = gamma = 1): its optimum is the trivial point w = 0, w~ = the constant 1
    (every slack 1), of value C n + gamma / 2 = 391.5 -- the linear correcting functions cannot follow single
    examples' margins.  Converged at tol, primal and dual are within tol ||eta||_1 of it."""
    X, _, S = emotions
    pool = PrivilegedLabels().pool(S)
    tol = 1e-3
    fit = svmplus_cd(X, S, S[:, 0], 1.0, 1.0, privileged_mask=pool[:1], fit_intercept=True,
                     privileged_intercept=True, tol=tol, max_iter=100_000, random_state=0)
    certificate = fit.certificate
    assert certificate.converged and certificate.kkt_violation <= tol
    optimum = 1.0 * X.shape[0] + 1.0 / 2
    assert optimum == 391.5
    slack = tol * (fit.solution.dual.sum() + fit.solution.model_state["beta"].sum())
    assert certificate.dual == pytest.approx(optimum, abs=slack)
    assert certificate.primal == pytest.approx(optimum, abs=slack)
    # Weak duality against the feasible trivial point: the dual never exceeds its value.
    assert certificate.dual <= optimum * (1 + 1e-12)


def test_amazed_is_infeasible_without_the_privileged_bias(emotions):
    X, Y, S = emotions
    pool = PrivilegedLabels().pool(S)
    # Of the six labels only amazed-suprised (0) has no feasible (w, w~) when x carries a bias.
    assert infeasible_labels(X, S, pool, fit_intercept=True) == [0]
    with pytest.raises(ValueError, match=r"infeasible for label\(s\) \[0\]"):
        PrBR(privileged_bias=False).fit(X, Y)


def test_threads_do_not_change_the_fit():
    """The W-step's per-label solves draw their seeds before any runs: n_jobs changes the time, not the result."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((50, 5))
    Y = (X @ rng.standard_normal((5, 4)) + 0.3 * rng.standard_normal((50, 4)) > 0).astype(int)
    for make in (lambda **kw: PrML(C=1.0, rank=3, max_iter=3, **kw), lambda **kw: PrBR(C=1.0, **kw),
                 lambda **kw: LEML(C=1.0, rank=3, max_iter=3, **kw)):
        serial, threaded = make(n_jobs=None).fit(X, Y), make(n_jobs=2).fit(X, Y)
        np.testing.assert_array_equal(serial.coef_, threaded.coef_)  # same code, same numbers, one process


def test_n_jobs_is_validated():
    with pytest.raises(ValueError, match="n_jobs"):
        PrML(n_jobs=0).fit(np.eye(4), np.array([[1, 0], [0, 1], [1, 1], [0, 0]]))


# -- the sub-solvers and the first D --------------------------------------------------------


def _labelled(seed=2, n=60, d=5, n_labels=4, noise=0.3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, (X @ rng.standard_normal((d, n_labels)) + noise * rng.standard_normal((n, n_labels)) > 0).astype(int)


def test_the_sub_solvers_reach_the_same_prbr():
    """PrBR is strictly convex in (w, w~) with modulus min(1, gamma2) (Theorem 1): two fits whose objectives
    are within their gaps g1, g2 of the optimum lie within sqrt(2 (g1 + g2) / min(1, gamma2)) of each other."""
    X, Y = _labelled()
    gamma2 = 0.5
    ipm = PrBR(C=1.0, gamma2=gamma2, sub_solver="ipm", cd_tol=1e-9).fit(X, Y)
    cd = PrBR(C=1.0, gamma2=gamma2, sub_solver="cd", cd_tol=1e-9, cd_max_iter=100_000).fit(X, Y)
    first, second = ipm.certificate_[-1], cd.certificate_[-1]
    assert first.converged and second.converged
    assert {c.solver for c in first.statistics["d_step"].statistics["labels"]} == {"svmplus_ipm"}
    radius = np.sqrt(2.0 * (first.gap + second.gap) / min(1.0, gamma2))
    difference = np.concatenate([(ipm.coef_ - cd.coef_).ravel(), ipm.intercept_ - cd.intercept_,
                                 (ipm.privileged_weights_ - cd.privileged_weights_).ravel(),
                                 ipm.privileged_intercept_ - cd.privileged_intercept_])
    assert np.linalg.norm(difference) <= radius + 1e-9


@pytest.mark.parametrize("make, solver", [(PrML, "svmplus_ipm"), (LEML, "embedded_hinge_ipm")], ids=["prml", "leml"])
def test_every_sub_solve_of_an_interior_point_fit_is_certified(make, solver):
    X, Y = _labelled(4)
    model = make(C=1.0, rank=3, cd_tol=1e-6).fit(X, Y)
    assert all(c.converged for c in model.w_step_certificates_ + model.d_step_certificates_)
    assert {c.solver for c in model.d_step_certificates_} == {solver}  # "auto" on dense rows
    assert model.certificate_[-1].converged
    # Objective (5) after each block step falls, up to the sub-solves' relative gap.
    blocks = model.block_objective_history_
    assert np.all(np.diff(blocks) <= 1e-6 * np.abs(blocks).max())


def test_the_svd_start_and_the_interior_point_method_use_no_randomness():
    X, Y = _labelled(5)
    first, second = PrML(rank=3, random_state=0).fit(X, Y), PrML(rank=3, random_state=7).fit(X, Y)
    np.testing.assert_array_equal(first.coef_, second.coef_)  # the same computation, one process


def test_the_random_start_is_seeded():
    X, Y = _labelled(5)
    models = [PrML(rank=3, init="random", random_state=seed).fit(X, Y) for seed in (0, 0, 7)]
    np.testing.assert_array_equal(models[0].coef_, models[1].coef_)
    assert not np.array_equal(models[0].dictionary_, models[2].dictionary_)


def test_auto_routes_by_the_newton_steps_cost():
    """Small steps go to the interior-point method on dense and sparse rows alike, and so do bibtex's W-step and
    PrBR step; the D-step of text rows (beyond the unknowns' limit) and a step beyond the flops' limit go to
    dual CD."""
    from multilabel_core_plugins.prml.solver import IPM_MAX_FLOPS, IPM_MAX_UNKNOWNS, PrivilegedCDSolver

    X, Y = _labelled(6)
    sparse_fit = PrBR(C=1.0).fit(sp.csr_matrix(X), Y)
    assert {c.solver for c in sparse_fit.certificate_[-1].statistics["d_step"].statistics["labels"]} == {"svmplus_ipm"}
    solver, privileged = PrivilegedCDSolver(), PrivilegedLabels()
    # bibtex's W-step: 3698 rows, L = 159, k = 144 -> 159 (3698 (144^2 + 160 (160 + 144)) + 144^2 160) = 4.1e10.
    rows = np.empty((3698, 144))
    assert solver._interior_point(privileged, rows, None, False, 159)
    # 600 labels on the same rows: 600 (3698 (144^2 + 601 (601 + 144)) + 144^2 601) = 1.0e12 flops a step.
    assert 600 * (3698 * (144**2 + 601 * 745) + 144**2 * 601) > IPM_MAX_FLOPS
    assert not solver._interior_point(privileged, rows, None, False, 600)
    assert solver._interior_point(privileged, rows[:1200, :13], None, False, 14)  # yeast's W-step
    assert PrivilegedCDSolver(sub_solver="ipm")._interior_point(privileged, rows, None, False, 600)
    # bibtex's PrBR labels (sparse, 3698 x 1836, 69 nonzeros a row): 4.4e11 flops a step, in.
    words = sp.random(3698, 1836, density=69 / 1836, format="csr", random_state=0)
    assert solver._interior_point(privileged, words, None, True, 159)
    # enron's PrBR labels (sparse, 851 x 1001, 88 nonzeros a row) are in; its D-step (k = 47) is not.
    text = sp.random(851, 1001, density=88 / 1001, format="csr", random_state=0)
    assert solver._interior_point(privileged, text, None, True, 52)
    assert 47 * 1002 > IPM_MAX_UNKNOWNS
    assert not solver._interior_point(privileged, text, np.ones((47, 52)), True, 52)


@pytest.mark.filterwarnings("ignore:AlternatingSolver did not converge:multilabel_core.solvers.ConvergenceWarning")
def test_the_label_by_label_steps_meet_tol_as_a_sum(datasets_dir):
    """A W-step's labels are solved one by one but certified together: at a small C every label's objective is
    below 1, so each label's own relative gap is an absolute one, and only per-label gaps of tol / L make the
    summed gap meet tol (at tol per label the yeast W-steps below missed it, 1.2e-3 against 1e-3)."""
    from multilabel_core.experiments.preprocessing import Standardizer

    dataset = load_dataset("yeast", data_home=datasets_dir)
    rows = np.random.default_rng(0).permutation(dataset.X.shape[0])[:800]
    X = np.asarray(dataset.X, dtype=np.float64)[rows]
    X = Standardizer().fit(X).transform(X)
    model = LEML(C=0.001, max_iter=2, n_jobs=1).fit(X, np.asarray(dataset.Y)[rows])
    for certificate in model.w_step_certificates_:
        labels = certificate.statistics["labels"]
        assert max(label.primal for label in labels) < 1.0  # the regime where the per-label target matters
        assert certificate.gap <= model.tol * max(1.0, abs(certificate.primal))
        assert certificate.converged


@pytest.mark.filterwarnings("ignore::multilabel_core.ConvergenceWarning")  # short CD budgets on purpose
def test_the_exposed_model_is_the_certified_feasible_point_of_problem_5():
    """With CD sub-solves stopped early, the D-step's point is repaired (the correcting functions replaced by
    the best ones for the returned D); the exposed D, W, W~ and biases are that point: feasible for (5), and
    (5) evaluated from them is the last round's certified primal."""
    X, Y = _labelled(5, n=80, n_labels=5)
    C, gamma1, gamma2 = 1.0, 1.0, 0.5
    model = PrML(C=C, gamma2=gamma2, rank=4, sub_solver="cd", max_iter=2, cd_max_iter=5).fit(X, Y)
    d_step = model.d_step_certificates_[-1]
    assert d_step.statistics["best_correcting_labels"] > 0
    signs = 2.0 * Y - 1.0
    D = np.column_stack([model.dictionary_, model.dictionary_intercept_])
    W, W_tilde, b_tilde = model.label_weights_, model.privileged_weights_, model.privileged_intercept_
    assert np.all(np.diag(W_tilde) == 0.0)  # label i does not see itself (eq. 3)
    slacks = signs @ W_tilde + b_tilde  # <w~_i, y~_ij> + bias: y~_ij = y_j with entry i removed
    margins = signs * model.decision_function(X)
    scale = max(1.0, abs(d_step.primal))
    assert np.all(margins + slacks >= 1.0 - 1e-9 * scale) and np.all(slacks >= -1e-9 * scale)
    objective = (0.5 * np.sum(D * D) + 0.5 * gamma1 * np.sum(W * W)
                 + 0.5 * gamma2 * (np.sum(W_tilde * W_tilde) + np.sum(b_tilde * b_tilde)) + C * slacks.sum())
    assert objective == pytest.approx(model.certificate_[-1].primal, rel=1e-9)


@pytest.mark.filterwarnings("ignore:AlternatingSolver did not converge:multilabel_core.solvers.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore:PrivilegedCDSolver did not converge:multilabel_core.solvers.ConvergenceWarning")
def test_a_round_whose_unfinished_d_step_ends_above_its_start_returns_the_incoming_d():
    """Dual CD stopped after five epochs returns a D far above the point the D-step started from (the incoming D
    with the W-step's correcting functions, feasible for it).  The round returns the incoming point, with a
    warning and a flag; its certificate is a true gap there.  Here the next round, which goes on from the
    D-step's D, ends above it and is discarded, so the exposed model is the SVD start with the first W-step:
    feasible for (5), with the certified value."""
    X, Y = _labelled(1, n=80, n_labels=5, noise=0.5)
    C, gamma2, k = 1.0, 1.0, 4
    with pytest.warns(ConvergenceWarning, match="the round returns the incoming D"):
        model = PrML(C=C, gamma2=gamma2, rank=k, sub_solver="cd", max_iter=3, cd_max_iter=5).fit(X, Y)
    [certificate] = model.d_step_certificates_
    assert certificate.statistics["kept_incoming"]
    assert certificate.statistics["d_step_primal"] > 1.5 * certificate.primal
    assert certificate.gap == pytest.approx(certificate.primal - certificate.dual, rel=1e-12)
    assert certificate.gap >= 0.0 and not certificate.converged
    np.testing.assert_allclose(model.block_objective_history_, [certificate.primal + 0.5 * np.sum(model.label_weights_ ** 2)] * 2,
                               rtol=1e-12)
    D = np.column_stack([model.dictionary_, model.dictionary_intercept_])
    np.testing.assert_array_equal(D, _first_dictionary(X, 2.0 * Y - 1.0, k, True, "svd", None))
    signs = 2.0 * Y - 1.0
    W, W_tilde, b_tilde = model.label_weights_, model.privileged_weights_, model.privileged_intercept_
    slacks = signs @ W_tilde + b_tilde
    margins = signs * model.decision_function(X)
    scale = model.certificate_[-1].primal
    assert np.all(margins + slacks >= 1.0 - 1e-9 * scale) and np.all(slacks >= -1e-9 * scale)
    objective = (0.5 * np.sum(D * D) + 0.5 * np.sum(W * W)
                 + 0.5 * gamma2 * (np.sum(W_tilde * W_tilde) + np.sum(b_tilde * b_tilde)) + C * slacks.sum())
    assert objective == pytest.approx(scale, rel=1e-9)


@pytest.mark.filterwarnings("ignore:AlternatingSolver did not converge:multilabel_core.solvers.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore:PrivilegedCDSolver did not converge:multilabel_core.solvers.ConvergenceWarning")
@pytest.mark.parametrize("make", [lambda: PrML(rank=4, sub_solver="cd", max_iter=4, cd_max_iter=2),
                                  lambda: LEML(rank=4, sub_solver="cd", max_iter=4, cd_max_iter=1)])
def test_the_rounds_objectives_never_increase_when_d_steps_end_above_their_start(make):
    """The alternation goes on from the D-step's D (Algorithm 2), but each round reports the lower of its two block
    points, so the rounds' objectives never increase, and the exposed model has the last one: (2) for LEML,
    evaluated from the exposed D and W."""
    X, Y = _labelled(0, n=80, n_labels=5, noise=0.5)
    with pytest.warns(ConvergenceWarning, match="the round returns the incoming D"):
        model = make().fit(X, Y)
    assert model.d_step_certificates_[0].statistics["kept_incoming"]
    assert np.all(np.diff(model.objective_history_) <= 0.0)
    blocks = np.asarray(model.block_objective_history_).reshape(-1, 2)
    assert np.all(blocks[:, 1] <= blocks[:, 0])
    if isinstance(model, LEML):
        D = np.column_stack([model.dictionary_, model.dictionary_intercept_])
        hinge = np.maximum(0.0, 1.0 - (2.0 * Y - 1.0) * model.decision_function(X))
        objective = 0.5 * np.sum(D * D) + 0.5 * np.sum(model.label_weights_ ** 2) + hinge.sum()
        assert objective == pytest.approx(model.certificate_[-1].primal, rel=1e-9)


def test_the_interior_point_method_does_not_stop_early_on_enron_first_w_step(datasets_dir):
    """Two labels of enron's first W-step (a random half, the SVD start): the certificate of the early, infeasible
    iterates stays above the first step's for more than ``STALLED`` steps, and a stall rule counting every step
    stopped both at step 11 with relative gaps above 3.  Stalls count only once the iterate's complementarity meets
    tol, and both labels are certified."""
    dataset = load_dataset("enron", data_home=datasets_dir)
    X, Y = sp.csr_matrix(dataset.X), np.asarray(dataset.Y)
    half = np.random.default_rng(3).permutation(X.shape[0])[: X.shape[0] // 2]
    X, Y = X[half], Y[half]
    signs = np.where(Y[:, (Y > 0).any(axis=0) & (Y <= 0).any(axis=0)] > 0, 1.0, -1.0)
    n_labels = signs.shape[1]
    rows = _projected(X, _first_dictionary(X, signs, 48, True, "svd", np.random.default_rng(0)), True)
    mask = ~np.eye(n_labels, dtype=bool)
    tol = 1e-3 / n_labels
    for label in (26, 34):
        fit = svmplus_ipm(rows, signs, signs[:, [label]], 1.0, 1.0, privileged_mask=mask[[label]],
                          fit_intercept=False, tol=tol, max_iter=200)
        assert fit.certificate.converged and fit.certificate.relative_gap <= tol
        assert fit.certificate.n_iter <= 40
