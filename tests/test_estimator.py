"""The estimator contract (MultiLabelEstimator) and the composable estimator."""

import subprocess
import sys
import textwrap

import attrs
import numpy as np
import pytest
import scipy.sparse as sp

from multilabel_core import CapabilityError, Fit, Solution, Solver
from multilabel_core.estimator import ComposedEstimator, MultiLabelEstimator, NotFittedError
from multilabel_core.kernels import LinearKernel
from multilabel_core.losses import SquaredHinge
from multilabel_core.regularizers import Frobenius, LabelCovariance
from multilabel_core.relations import Independent, LearnedCovariance
from multilabel_core.solvers import ConvergenceWarning, LBFGSSolver


def data(seed=0, n=60, d=5, L=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = (X @ rng.standard_normal((d, L)) + 0.3 * rng.standard_normal((n, L)) > 0).astype(np.int64)
    return X, Y


# -- the contract ----------------------------------------------------------------------


def test_outputs_follow_the_contract():
    X, Y = data()
    model = ComposedEstimator().fit(X, Y)
    scores, predictions = model.decision_function(X), model.predict(X)
    assert scores.shape == predictions.shape == Y.shape
    assert scores.dtype == np.float64 and predictions.dtype == np.int64
    np.testing.assert_array_equal(predictions, (scores > 0).astype(np.int64))
    assert model.n_features_in_ == 5 and model.n_labels_ == 3
    np.testing.assert_array_equal(model.classes_, [0, 1])
    assert model.coef_.shape == (5, 3) and model.intercept_.shape == (3,)
    assert model.n_iter_ == model.certificate_.n_iter >= 1
    assert model.score(X, Y) == np.mean(np.all(predictions == Y, axis=1))


def test_fit_returns_self_and_parameters_are_stored_unchanged():
    C = np.float32(0.5)
    model = ComposedEstimator(C=C, tol=1e-5)
    assert model.C is C and model.fit(*data()) is model


@pytest.mark.parametrize(
    "make_input",
    [
        lambda X: X.astype(np.float32),
        lambda X: sp.csr_matrix(X),
        lambda X: sp.csc_matrix(X.astype(np.float32)),
        lambda X: X.tolist(),
    ],
)
def test_every_accepted_input_gives_the_same_model(make_input):
    X, Y = data()
    # A tight tolerance: dense and sparse rows take different BLAS paths, so the two fits agree within
    # what the certificate promises, not bitwise.
    reference = ComposedEstimator(tol=1e-9).fit(X, Y)
    model = ComposedEstimator(tol=1e-9).fit(make_input(X), sp.csr_matrix(Y))
    np.testing.assert_allclose(model.decision_function(make_input(X)), reference.decision_function(X), atol=1e-4)


def test_predict_before_fit_raises_not_fitted_error():
    model = ComposedEstimator()
    with pytest.raises(NotFittedError, match="not fitted yet"):
        model.predict(np.zeros((2, 5)))
    assert issubclass(NotFittedError, ValueError) and issubclass(NotFittedError, AttributeError)


def test_not_fitted_error_is_scikit_learns():
    exceptions = pytest.importorskip("sklearn.exceptions")
    assert issubclass(NotFittedError, exceptions.NotFittedError)


def test_wrong_number_of_features_at_predict_time():
    X, Y = data()
    model = ComposedEstimator().fit(X, Y)
    with pytest.raises(ValueError, match="X has 4 features, but ComposedEstimator is expecting 5 features"):
        model.decision_function(X[:, :4])


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda X, Y: (np.where(X > 1, np.nan, X), Y), "NaN"),
        (lambda X, Y: (X, 2 * Y), "binary"),
        (lambda X, Y: (X, Y[:, 0]), "2-D"),
        (lambda X, Y: (X, Y[:-1]), "rows"),
        (lambda X, Y: (X[:, 0], Y), "Reshape your data"),
        (lambda X, Y: (X, None), "requires y to be passed"),
        (lambda X, Y: (X + 1j, Y), "Complex data not supported"),
    ],
)
def test_bad_data_is_refused_with_a_clear_message(change, message):
    with pytest.raises(ValueError, match=message):
        ComposedEstimator().fit(*change(*data()))


@pytest.mark.parametrize(
    "params, name",
    [
        ({"C": 0.0}, "C"),
        ({"C": "large"}, "C"),
        ({"tol": -1.0}, "tol"),
        ({"max_iter": 0}, "max_iter"),
        ({"max_iter": 10.5}, "max_iter"),
        ({"fit_intercept": "yes"}, "fit_intercept"),
        ({"gamma": -2.0, "kernel": "rbf"}, "gamma"),
    ],
)
def test_hyper_parameters_are_validated_in_fit_not_in_init(params, name):
    model = ComposedEstimator(**params)
    with pytest.raises(ValueError, match=name):
        model.fit(*data())


class WithCommonParameters(ComposedEstimator):
    """A composed estimator exposing the common parameters it does not use, to test their checks."""

    def __init__(self, n_jobs=None, random_state=None, lam=1.0):
        super().__init__()
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.lam = lam


@pytest.mark.parametrize(
    "params, name",
    [({"n_jobs": 0}, "n_jobs"), ({"n_jobs": 1.5}, "n_jobs"), ({"random_state": "seed"}, "random_state"), ({"lam": -1}, "lam")],
)
def test_common_parameters_are_validated(params, name):
    with pytest.raises(ValueError, match=name):
        WithCommonParameters(**params).fit(*data())
    WithCommonParameters(n_jobs=-1, random_state=3, lam=0.1).fit(*data())


# -- composing parts ------------------------------------------------------------------


def test_parts_by_name_and_by_object_give_the_same_model():
    X, Y = data()
    by_name = ComposedEstimator("squared_hinge", "frobenius", "independent", "linear", "lbfgs", C=3.0, tol=1e-7)
    by_object = ComposedEstimator(
        SquaredHinge(), Frobenius(), Independent(), LinearKernel(), LBFGSSolver(tol=1e-7), C=3.0
    )
    np.testing.assert_allclose(by_name.fit(X, Y).coef_, by_object.fit(X, Y).coef_)


def test_a_fixed_label_covariance_changes_the_model():
    X, Y = data()
    omega = np.array([[1.0, 0.8, 0.0], [0.8, 1.0, 0.0], [0.0, 0.0, 1.0]])
    coupled = ComposedEstimator(regularizer=LabelCovariance(omega)).fit(X, Y)
    independent = ComposedEstimator().fit(X, Y)
    assert coupled.certificate_.relative_gap < 1e-8
    assert not np.allclose(coupled.coef_[:, :2], independent.coef_[:, :2], atol=1e-3)
    np.testing.assert_allclose(coupled.coef_[:, 2], independent.coef_[:, 2], atol=1e-5)
    assert not hasattr(coupled, "label_covariance_")


@pytest.mark.parametrize(
    "params, message",
    [
        ({"loss": "no_such_loss"}, "unknown loss component 'no_such_loss'"),
        ({"loss": 3}, "loss must be a registered loss name or a Loss"),
        ({"solver": LBFGSSolver(), "tol": 1e-3}, "tol cannot be combined with a solver object"),
        ({"kernel": LinearKernel(), "gamma": 0.5}, "gamma cannot be combined with a kernel object"),
        ({"kernel": "linear", "gamma": 0.5}, "gamma"),
    ],
)
def test_bad_parts_are_refused(params, message):
    with pytest.raises(ValueError, match=message):
        ComposedEstimator(**params).fit(*data())


@pytest.mark.parametrize(
    "params, missing",
    [
        ({"loss": "hinge"}, "loss.smooth"),
        ({"kernel": "rbf"}, "kernel.linear"),
        # Before the smoothness capability, L-BFGS "converged" here with gap=inf.
        ({"regularizer": "nuclear_norm"}, "LBFGSSolver requires regularizer.smooth, which NuclearNorm does not provide"),
    ],
)
def test_a_solver_refuses_parts_it_cannot_handle(params, missing):
    with pytest.raises(CapabilityError, match=missing):
        ComposedEstimator(**params, solver="lbfgs").fit(*data())


def test_the_label_covariance_by_name_starts_from_mlrls_omega():
    # Omega = I / L turns 1/2 tr(W Omega^-1 W^T) into L/2 ||W||_F^2: Frobenius with C / L.
    X, Y = data(L=3)
    by_name = ComposedEstimator(regularizer="label_covariance", C=3.0, tol=1e-8).fit(X, Y)
    frobenius = ComposedEstimator(regularizer="frobenius", C=1.0, tol=1e-8).fit(X, Y)
    assert by_name.certificate_.converged and by_name.certificate_.relative_gap < 1e-8
    scale = max(1.0, np.abs(frobenius.coef_).max())
    np.testing.assert_allclose(by_name.coef_, frobenius.coef_, atol=1e-5 * scale)
    np.testing.assert_allclose(by_name.intercept_, frobenius.intercept_, atol=1e-5 * scale)


def test_mlrl_composes_by_name():
    X, Y = data(L=3)
    model = ComposedEstimator(
        loss="hinge", regularizer="label_covariance", relation="learned_covariance", solver="alternating"
    ).fit(X, Y)
    assert model.certificate_.converged and model.certificate_.relative_gap < 1e-3
    np.testing.assert_allclose(np.trace(model.label_covariance_), 1.0)


def test_convergence_warning_and_certificate_at_the_iteration_limit():
    X, Y = data()
    with pytest.warns(ConvergenceWarning):
        model = ComposedEstimator(max_iter=1, C=100.0).fit(X, Y)
    assert not model.certificate_.converged


@attrs.frozen
class AlternatingSolver(Solver):
    """Alternate a fixed-relation solve of W and the relation's closed-form update (MLRL's scheme)."""

    inner: LBFGSSolver = LBFGSSolver(tol=1e-8)
    n_steps: int = 5

    # It runs the relation's update: a solver that learns a relation says so.
    requires = {"relation": ("initial", "update")}

    def solve(self, problem, warm_start=None):
        omega = problem.relation.initial(problem.n_labels)
        solution = warm_start
        for _ in range(self.n_steps):
            step = attrs.evolve(problem, regularizer=LabelCovariance(omega), relation=Independent())
            fit = self.inner.solve(step, warm_start=solution)
            solution = fit.solution
            omega = problem.relation.update(solution.coef.T @ solution.coef)
        return Fit(attrs.evolve(solution, relation=omega), fit.certificate)


def test_a_learned_relation_is_exposed_as_covariance_and_correlation():
    X, Y = data(L=3)
    model = ComposedEstimator(relation="learned_covariance", solver=AlternatingSolver()).fit(X, Y)
    np.testing.assert_allclose(model.label_covariance_, LearnedCovariance().update(model.coef_.T @ model.coef_))
    np.testing.assert_allclose(np.trace(model.label_covariance_), 1.0)
    scale = np.sqrt(np.diag(model.label_covariance_))
    np.testing.assert_allclose(model.label_correlation_, model.label_covariance_ / np.outer(scale, scale))
    refit = model.set_params(relation="independent", solver="lbfgs").fit(X, Y)
    assert not hasattr(refit, "label_covariance_")


@attrs.frozen
class IgnoresTheRelation(Solver):
    def solve(self, problem, warm_start=None):
        return LBFGSSolver().solve(attrs.evolve(problem, relation=Independent()))


@attrs.frozen
class ClaimsTheRelation(IgnoresTheRelation):
    requires = {"relation": ("update",)}


def test_a_learned_relation_a_solver_does_not_read_is_refused_before_the_fit():
    with pytest.raises(CapabilityError, match="IgnoresTheRelation solves for a fixed label relation, but Learned"):
        ComposedEstimator(relation="learned_covariance", solver=IgnoresTheRelation()).fit(*data())


def test_a_learned_relation_the_solver_does_not_return_is_an_error():
    with pytest.raises(CapabilityError, match="ClaimsTheRelation returned no label relation"):
        ComposedEstimator(relation="learned_covariance", solver=ClaimsTheRelation()).fit(*data())


@attrs.frozen
class LinearDualSolver(Solver):
    """Return the L-BFGS solution in its dual form: W = X^T A, b = 1^T A (A the dual point)."""

    def solve(self, problem, warm_start=None):
        fit = LBFGSSolver(tol=1e-8).solve(attrs.evolve(problem, kernel=LinearKernel()))
        solution = fit.solution
        A = -problem.C * problem.loss.gradient(problem.Y, problem.X @ solution.coef + solution.intercept)
        return Fit(Solution(coef=None, intercept=A.sum(axis=0), dual_coef=A), fit.certificate)


def test_a_dual_solution_predicts_through_the_kernel():
    X, Y = data()
    primal = ComposedEstimator(tol=1e-8).fit(X, Y)
    dual = ComposedEstimator(solver=LinearDualSolver()).fit(X, Y)
    assert not hasattr(dual, "coef_") and dual.dual_coef_.shape == Y.shape
    np.testing.assert_allclose(dual.decision_function(X[:7]), primal.decision_function(X[:7]), atol=1e-4)


def test_is_a_multilabel_estimator():
    assert issubclass(ComposedEstimator, MultiLabelEstimator)


def test_fallbacks_without_scikit_learn(tmp_path):
    # A fresh interpreter in which `import sklearn` fails: the fallbacks take over.
    script = textwrap.dedent(
        """
        import sys
        sys.modules["sklearn"] = None
        import numpy as np
        from multilabel_core.estimator import ComposedEstimator, NotFittedError
        from multilabel_core.solvers import ConvergenceWarning
        assert NotFittedError.__mro__[1:3] == (ValueError, AttributeError)
        assert ConvergenceWarning.__mro__[1] is UserWarning
        model = ComposedEstimator(C=2.0)
        assert model.get_params()["C"] == 2.0 and model.set_params(C=3.0) is model and model.C == 3.0
        assert repr(model).startswith("ComposedEstimator(C=3.0, fit_intercept=True, gamma=None")
        try:
            model.set_params(D=1)
        except ValueError as exc:
            assert "Invalid parameter 'D'" in str(exc)
        else:
            raise AssertionError("set_params accepted an unknown name")
        try:
            model.predict(np.zeros((1, 2)))
        except NotFittedError:
            pass
        rng = np.random.default_rng(0)
        X = rng.standard_normal((40, 3))
        Y = (X @ rng.standard_normal((3, 2)) > 0).astype(int)
        model.fit(X, Y)
        assert model.score(X, Y) == np.mean(np.all(model.predict(X) == Y, axis=1))
        assert "sklearn" not in {m.split(".")[0] for m in sys.modules if sys.modules[m] is not None}
        print("ok")
        """
    )
    # run outside the checkout: `python -c` puts the working directory on sys.path
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
