"""One-vs-rest baselines: one scikit-learn binary classifier per label.

Label j gets its own classifier, trained on all rows with the targets Y[:, j]; the
score t_ij is that classifier's ``decision_function`` (the signed distance to its
separating surface), so ``predict = [t_ij > 0]`` is the classifier's own prediction and
the scores rank the labels of a row.  This is binary relevance with the solvers users
reach for first: LIBSVM's kernel SVM (``ovr_svc``) and LIBLINEAR's linear models
(``ovr_linear``).  Each fit is certified (:mod:`.binary`), and what the solvers cannot
compute with is refused before they run (:mod:`.limits`).

The labels are fitted one after the other, from Python: LIBSVM and LIBLINEAR do not
look at signals, so Ctrl-C (KeyboardInterrupt) takes effect when the binary problem
being solved is done.
"""

from __future__ import annotations

import numbers
import time

import numpy as np

from multilabel_core.validation import MAX_ITER_LIMIT, COUNT, POSITIVE, AllOf, Interval, NoneOr, Options, Rule, check_scalar, to_signs
from multilabel_core.estimator import MultiLabelEstimator

from ._sklearn import import_sklearn, seeds
from .binary import certificate, libsvm_objectives, objectives, svc_training_scores
from .limits import check_liblinear_scale, check_libsvm_scale, check_max_iter, check_tol, libsvm_budget

__all__ = ["GAMMA_RULES", "KERNELS", "LINEAR_MODELS", "OneVsRestLinear", "OneVsRestSVC"]

#: The kernels of ``ovr_svc`` (LIBSVM's, as scikit-learn names them).
KERNELS = ("linear", "rbf", "poly", "sigmoid")

#: The models of ``ovr_linear``: LIBLINEAR's L2-loss SVM and its logistic regression.
LINEAR_MODELS = ("linear_svc", "logistic")

#: scikit-learn's rules for the RBF, polynomial and sigmoid width.
GAMMA_RULES = ("scale", "auto")


def check_gamma(gamma, name: str = "gamma") -> None:
    """``gamma`` is one of :data:`GAMMA_RULES` or a float > 0; ValueError naming ``name`` otherwise."""
    if isinstance(gamma, str):
        if gamma not in GAMMA_RULES:
            raise ValueError(f"{name} must be one of {GAMMA_RULES} or a float > 0, got {gamma!r}")
    else:
        check_scalar(gamma, name, low=0.0, low_inclusive=False)


#: The constraints of LIBSVM's and LIBLINEAR's settings (:mod:`.limits`), as the baselines declare them:
#: the common rule first (its message), then the solvers' narrower one.
TOL = AllOf(POSITIVE, Rule(check_tol, "in [2.2e-16, 1), the tolerances LIBSVM and LIBLINEAR can meet (limits.TOL_RANGE)"))
MAX_ITER = NoneOr(AllOf(COUNT, Rule(check_max_iter, "within the C int the solvers count in")))
GAMMA = Rule(check_gamma, "'scale', 'auto' or a float > 0 (scikit-learn's SVC gamma)")


class _OneVsRest(MultiLabelEstimator):
    """Fits one binary model per label.

    Subclasses define ``_binary_models(n_samples, n_labels)``, the unfitted scikit-learn
    classifiers, ``_check_scale(X)``, the refusal of data the solver cannot compute
    with (:mod:`.limits`), ``solver``, the solver named in the certificate, and
    ``method``, the registered name.
    """

    def _fit(self, X, Y):
        self._check_scale(X)
        start = time.perf_counter()
        models = self._binary_models(*Y.shape)
        self.estimators_ = [model.fit(X, Y[:, j]) for j, model in enumerate(models)]
        elapsed = time.perf_counter() - start
        self.certificate_ = certificate(self._objectives(X, to_signs(Y)), self.solver, elapsed, self.method)
        self.n_iter_ = self.certificate_.n_iter

    def _objectives(self, X, signs) -> list:
        return [objectives(model, X, signs[:, j]) for j, model in enumerate(self.estimators_)]

    def _decision_function(self, X):
        return np.column_stack([model.decision_function(X) for model in self.estimators_])


class OneVsRestSVC(_OneVsRest):
    """One scikit-learn ``SVC`` (LIBSVM's C-SVC) per label (registered as ``ovr_svc``).

    Parameters
    ----------
    C : float, default 1.0
        Weight of the hinge losses (LIBSVM's C).
    kernel : {"linear", "rbf", "poly", "sigmoid"}, default "rbf"
        The kernel of scikit-learn's ``SVC``, by its name there.
    gamma : "scale", "auto" or float > 0, default "scale"
        Width of the RBF, polynomial and sigmoid kernels.  scikit-learn's rules:
        "scale" is ``1 / (d * X.var())``, "auto" is ``1 / d``.  (Not the project's
        mean-distance convention of ``gamma=None``: this baseline is what scikit-learn
        users run.)
    degree : int, default 3
        Degree of the polynomial kernel.
    coef0 : float, default 0.0
        Constant of the polynomial and sigmoid kernels.
    tol : float, default 1e-3
        LIBSVM's stopping tolerance (its ``eps``), in [2.2e-16, 1) (:mod:`.limits`).
    max_iter : int or None, default None
        Iteration limit per label; None for LIBSVM's own budget ``max(10^7, 100 n)``.
    cache_size : float, default 200
        LIBSVM's kernel cache, in MB.

    thresholding : str or Threshold, default "zero"
        How scores become labels: a registered threshold name (``"zero"``: a label is predicted
        where its score is positive) or a Threshold object.

    Notes
    -----
    Fitted attributes: ``estimators_`` (one fitted SVC per label), ``certificate_`` (the
    sum of the per-label C-SVC duality gaps, :mod:`.binary`), ``n_iter_``.
    """

    solver = "libsvm"
    method = "ovr_svc"
    _parameter_constraints = {
        "kernel": Options(KERNELS),
        "gamma": GAMMA,
        "degree": Interval(numbers.Integral, 1, MAX_ITER_LIMIT),  # LIBSVM's C int
        "coef0": Interval(numbers.Real),
        "tol": TOL,
        "max_iter": MAX_ITER,
        "cache_size": POSITIVE,
    }

    def __init__(
        self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, tol=1e-3, max_iter=None, cache_size=200.0,
        thresholding="zero",
    ):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.thresholding = thresholding

    def _check_scale(self, X) -> None:
        check_libsvm_scale(X, self.C, self.method, kernel=self.kernel, gamma=self.gamma, degree=self.degree,
                           coef0=self.coef0)  # fmt: skip

    def _binary_models(self, n_samples: int, n_labels: int) -> list:
        # LIBSVM's C-SVC is deterministic: no seed to give.
        # thresholding is the multi-label part that turns scores into labels, not a setting of LIBSVM's.
        params = {name: value for name, value in self.get_params(deep=False).items() if name != "thresholding"}
        return [svc_model(self.method, n_samples, **params) for _ in range(n_labels)]

    def _objectives(self, X, signs) -> list:
        # The labels share X and the kernel: their training scores come from one pass over K.
        scores = svc_training_scores(self.estimators_, X)
        return [libsvm_objectives(model, scores[:, j], signs[:, j]) for j, model in enumerate(self.estimators_)]


class OneVsRestLinear(_OneVsRest):
    """One LIBLINEAR linear classifier per label (registered as ``ovr_linear``).

    Parameters
    ----------
    model : {"linear_svc", "logistic"}, default "linear_svc"
        ``"linear_svc"``: scikit-learn's ``LinearSVC`` (L2-regularised squared hinge,
        the problem of ``br``); ``"logistic"``: ``LogisticRegression(solver="liblinear")``,
        L2-regularised logistic regression.  Both regularise the bias as the weight of a
        constant feature (LIBLINEAR's convention), so both are certified alike.
    C : float, default 1.0
        Weight of the losses.
    tol : float, default 1e-4
        LIBLINEAR's stopping tolerance, in [2.2e-16, 1) (:mod:`.limits`).
    max_iter : int or None, default None
        Iteration limit per label; None is scikit-learn's default (1000 for
        ``linear_svc``, 100 for ``logistic``).
    random_state : None, int or numpy Generator
        Seeds the order in which LIBLINEAR's dual solvers visit the rows.

    thresholding : str or Threshold, default "zero"
        How scores become labels: a registered threshold name (``"zero"``: a label is predicted
        where its score is positive) or a Threshold object.

    Notes
    -----
    Fitted attributes: ``estimators_``, ``certificate_`` (:mod:`.binary`), ``n_iter_``.
    """

    solver = "liblinear"
    method = "ovr_linear"
    _parameter_constraints = {"model": Options(LINEAR_MODELS), "tol": TOL, "max_iter": MAX_ITER}

    def __init__(self, model="linear_svc", C=1.0, tol=1e-4, max_iter=None, random_state=None, thresholding="zero"):
        self.model = model
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.thresholding = thresholding

    def _check_scale(self, X) -> None:
        check_liblinear_scale(X, self.C, self.method)

    def _binary_models(self, n_samples: int, n_labels: int) -> list:
        return [
            liblinear_model(self.model, self.method, C=self.C, tol=self.tol, max_iter=self.max_iter, seed=seed)
            for seed in seeds(self.random_state, n_labels)
        ]


def svc_model(method: str, n_samples: int, *, C, gamma, kernel="rbf", degree=3, coef0=0.0, tol=1e-3, max_iter=None,
              cache_size=200.0):  # fmt: skip
    """An unfitted ``SVC`` (the parameters of :class:`OneVsRestSVC`) for the baseline ``method``, to be fitted
    on ``n_samples`` rows: max_iter=None is LIBSVM's budget for them (:func:`.limits.libsvm_budget`)."""
    svm = import_sklearn("svm", method)
    return svm.SVC(
        C=C, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, tol=tol,
        max_iter=libsvm_budget(n_samples, max_iter), cache_size=cache_size,
    )  # fmt: skip


def liblinear_model(model: str, method: str, *, C, tol, max_iter, seed):
    """An unfitted ``LinearSVC`` or liblinear ``LogisticRegression`` (``model`` in :data:`LINEAR_MODELS`)."""
    limit = {} if max_iter is None else {"max_iter": max_iter}
    if model == "linear_svc":
        return import_sklearn("svm", method).LinearSVC(C=C, tol=tol, random_state=seed, **limit)
    linear_model = import_sklearn("linear_model", method)
    return linear_model.LogisticRegression(solver="liblinear", C=C, tol=tol, random_state=seed, **limit)
