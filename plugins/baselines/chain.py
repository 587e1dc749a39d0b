"""Classifier chains (Read, Pfahringer, Holmes & Frank 2011) with scikit-learn's ``ClassifierChain``.

A chain orders the labels l_1, ..., l_L and fits one binary classifier per label, the
classifier of l_j seeing the features x and the labels of l_1, ..., l_{j-1} (the true
labels when fitting, its predecessors' predictions when predicting): a cheap way for
one-vs-rest to use how labels relate.  An ensemble of chains (ECC) fits ``n_chains``
chains in random orders and averages their scores, so no single order decides.

Scores: the positive-class probability minus 1/2 (``scores="predict_proba"``) or the
decision value (``scores="decision_function"``) of each label's classifier, averaged
over the chains; ``predict = [score > 0]`` is then a single chain's own prediction,
and for an ensemble the vote of the averaged probability (or decision value).
"""

from __future__ import annotations

import numbers
import time

import numpy as np
import scipy.sparse as sp

from multilabel_core.validation import Interval, NoneOr, Options, to_signs
from multilabel_core.estimator import MultiLabelEstimator

from ._sklearn import import_sklearn, seeds
from .binary import certificate, objectives
from .limits import check_liblinear_scale, check_libsvm_scale
from .ovr import GAMMA, MAX_ITER, TOL, liblinear_model, svc_model

__all__ = ["BASES", "SCORES", "ClassifierChains"]

#: The binary classifiers a chain is made of: liblinear's logistic regression or
#: L2-loss SVM, or LIBSVM's RBF SVC.
BASES = ("logistic", "linear_svc", "svc")

#: Where the scores come from; "auto" is the probabilities when the base has them.
SCORES = ("auto", "predict_proba", "decision_function")

#: What ``ClassifierChain.order`` may be: None keeps the labels' order.
ORDERS = (None, "random")


class ClassifierChains(MultiLabelEstimator):
    """A classifier chain, or an ensemble of them (registered as ``classifier_chain``).

    Parameters
    ----------
    base : {"logistic", "linear_svc", "svc"}, default "logistic"
        Each link's classifier: ``LogisticRegression(solver="liblinear")``,
        ``LinearSVC`` or an RBF ``SVC`` (:mod:`.ovr`).
    C : float, default 1.0
        The base classifier's C.
    gamma : "scale", "auto" or float > 0, default "scale"
        RBF width of the ``"svc"`` base (scikit-learn's rules).
    n_chains : int, default 1
        Chains in the ensemble.
    order : None or "random", default None
        None: a single chain in the labels' order; "random": each chain draws its own
        order.  An ensemble needs random orders.
    scores : {"auto", "predict_proba", "decision_function"}, default "auto"
        The scores of each chain (module docstring); "auto" is "predict_proba" for the
        logistic base, "decision_function" for the others (which have no probabilities).
    tol, max_iter : float, int or None
        The base classifier's stopping tolerance (in [2.2e-16, 1), :mod:`.limits`) and
        iteration limit; None for its defaults (tol 1e-3 for LIBSVM, 1e-4 for LIBLINEAR;
        max_iter LIBSVM's ``max(10^7, 100 n)``, LIBLINEAR's 1000 or 100).
    random_state : None, int or numpy Generator
        Seeds the chains' orders and the liblinear solvers.
    thresholding : str or Threshold, default "zero"
        How scores become labels: a registered threshold name (``"zero"``: a label is predicted
        where its score is positive) or a Threshold object.

    Notes
    -----
    Fitted attributes: ``chains_`` (the fitted ``ClassifierChain`` objects),
    ``certificate_`` (the sum of the duality gaps of every link, :mod:`.binary`),
    ``n_iter_``.
    """

    def __init__(
        self,
        base="logistic",
        C=1.0,
        gamma="scale",
        n_chains=1,
        order=None,
        scores="auto",
        tol=None,
        max_iter=None,
        random_state=None,
        thresholding="zero",
    ):
        self.base = base
        self.C = C
        self.gamma = gamma
        self.n_chains = n_chains
        self.order = order
        self.scores = scores
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.thresholding = thresholding

    method = "classifier_chain"
    _parameter_constraints = {
        "base": Options(BASES),
        "gamma": GAMMA,
        "n_chains": Interval(numbers.Integral, 1, None),
        "order": Options(ORDERS),
        "scores": Options(SCORES),
        "tol": NoneOr(TOL),
        "max_iter": MAX_ITER,
    }

    def _check_parameter_rules(self) -> None:
        if self.n_chains > 1 and self.order is None:
            raise ValueError("an ensemble of chains needs order='random': chains in one order are the same chain")
        if self.scores == "predict_proba" and self.base != "logistic":
            raise ValueError(f"scores='predict_proba' needs base='logistic'; {self.base!r} has no probabilities")

    @property
    def _score_method(self) -> str:
        if self.scores != "auto":
            return self.scores
        return "predict_proba" if self.base == "logistic" else "decision_function"

    def _fit(self, X, Y):
        multioutput = import_sklearn("multioutput", self.method)
        # The last link sees X and the other L - 1 labels, each adding at most 1 to ||x_i||^2.
        predecessors = float(Y.shape[1] - 1)
        if self.base == "svc":
            check_libsvm_scale(X, self.C, self.method, gamma=self.gamma, extra_squared_norm=predecessors)
        else:
            check_liblinear_scale(X, self.C, self.method, extra_squared_norm=predecessors)
        start = time.perf_counter()
        chain_seeds = seeds(self.random_state, 2 * self.n_chains)
        chains = [
            multioutput.ClassifierChain(
                self._base_model(model_seed, X.shape[0]), order=self.order, random_state=order_seed
            )
            for model_seed, order_seed in zip(chain_seeds[::2], chain_seeds[1::2])
        ]
        self.chains_ = [chain.fit(X, Y) for chain in chains]
        elapsed = time.perf_counter() - start
        self.certificate_ = certificate(
            self._link_objectives(X, Y), "libsvm" if self.base == "svc" else "liblinear", elapsed, self.method
        )
        self.n_iter_ = self.certificate_.n_iter

    def _base_model(self, seed: int, n_samples: int):
        # tol=None: LIBSVM's eps 1e-3, LIBLINEAR's 1e-4 (scikit-learn's defaults).
        if self.base == "svc":
            tol = 1e-3 if self.tol is None else self.tol
            return svc_model(self.method, n_samples, C=self.C, gamma=self.gamma, tol=tol, max_iter=self.max_iter)
        tol = 1e-4 if self.tol is None else self.tol
        return liblinear_model(self.base, self.method, C=self.C, tol=tol, max_iter=self.max_iter, seed=seed)

    def _link_objectives(self, X, Y):
        """Each link's objectives, on the features it was fitted on: X and its predecessors' true labels."""
        signs = to_signs(Y)
        for chain in self.chains_:
            for j, (label, model) in enumerate(zip(chain.order_, chain.estimators_)):
                predecessors = Y[:, chain.order_[:j]].astype(X.dtype)
                if sp.issparse(X):
                    features = sp.hstack([X, sp.csr_matrix(predecessors)], format="csr")
                else:
                    features = np.hstack([X, predecessors])
                yield objectives(model, features, signs[:, label])

    def _decision_function(self, X):
        method = self._score_method
        shift = 0.5 if method == "predict_proba" else 0.0
        return np.mean([getattr(chain, method)(X) - shift for chain in self.chains_], axis=0)
