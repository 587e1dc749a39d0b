"""LaRank SVM, CLaRank SVM, MLFS and CMLFS: presets over the family's parts (Gu, Li & Han, CIKM 2011).

Each preset builds the :class:`~multilabel_core.base.Problem` of problem (6) -- the
pairwise ranking hinge (eq. 1), a linear kernel, the bias as a constant feature -- with
its regulariser and relation, runs its solver, and learns the set-size threshold of
section 3.8 on the training scores (in-sample, or out-of-fold with ``threshold_cv``;
its regressors are the ``threshold`` parameter, :mod:`.threshold`).  That threshold is the
registered threshold ``learned_linear`` (:class:`~.threshold.LearnedLinearThreshold`), the
presets' default ``thresholding``; any other registered threshold may replace it:

============  ==============================  ====================  ============================================
method        regulariser                     relation              solver
============  ==============================  ====================  ============================================
``larank``    Frobenius (mu = 0)              Independent           RankingCDSolver (Alg. 1)
``clarank``   FrobeniusLabelCovariance(mu)    LearnedCovariance     AlternatingSolver(inner=RankingCDSolver())
``mlfs``      Frobenius (mu = 0)              Independent           CuttingPlaneSolver (Alg. 2)
``cmlfs``     FrobeniusLabelCovariance(mu)    LearnedCovariance     CuttingPlaneSolver (Alg. 2)
============  ==============================  ====================  ============================================

Each preset builds its parts from the registered components named in :data:`PARTS` (its
MethodSpec's ``parts``), so the same names given to :class:`~multilabel_core.ComposedEstimator`
fit the same W, b and D (its ``predict`` is the sign of the scores unless it is given
``thresholding="learned_linear"`` too).

``decision_function`` returns the label scores ``X W + b`` (the ranking); ``predict``
compares them with the learned threshold t(x), so here predict is ``[scores > t(x)]``,
not ``[scores > 0]``: ``decision_threshold(X)`` gives t(x).  The parameters ``threshold``
(the regressors of t(x)) and ``threshold_cv`` configure ``learned_linear`` and are refused
beside another ``thresholding``.
"""

from __future__ import annotations

import numbers

import numpy as np

from multilabel_core.estimator import ComposedEstimator
from multilabel_core.parallel import blas_limited
from multilabel_core.plugins import make_component
from multilabel_core.validation import NON_NEGATIVE, Interval, NoneOr, Rule

from .cd_solver import RankingCDSolver, check_two_labels
from .threshold import LearnedLinearThreshold, check_regressors

__all__ = ["CMLFS", "MLFS", "PARTS", "CLaRankSVM", "LaRankSVM"]


def _parts(regularizer: str, relation: str, solver: str) -> dict:
    return {
        "loss": "pairwise_ranking_hinge",
        "regularizer": regularizer,
        "relation": relation,
        "kernel": "linear",
        "solver": solver,
    }


#: The registered components each method composes (also its MethodSpec's ``parts``).
PARTS = {
    "larank": _parts("frobenius", "independent", "ranking_cd"),
    "clarank": _parts("frobenius_label_covariance", "learned_covariance", "ranking_alternating"),
    "mlfs": _parts("frobenius", "independent", "cutting_plane"),
    "cmlfs": _parts("frobenius_label_covariance", "learned_covariance", "cutting_plane"),
}


class _LabelRanking(ComposedEstimator):
    """What the four presets share: the problem, the fitted attributes and the threshold.

    Subclasses give ``PARTS`` (their entry of the module's :data:`PARTS`, also their MethodSpec's
    ``parts``) and ``_solver_settings()``, the keyword arguments of the registered solver.
    """

    PARTS: dict = {}
    CERTIFICATE_PER_STEP = True
    # mu and n_features belong to the subclasses that have them; a name a class lacks is never read.
    _parameter_constraints = {
        "mu": NON_NEGATIVE,
        "n_features": Interval(numbers.Integral, 1, None),
        "threshold": Rule(check_regressors, "the regressors of the learned_linear threshold, by name"),
        "threshold_cv": NoneOr(Interval(numbers.Integral, 2, None)),
    }
    #: The fewest label columns ``fit`` accepts: a ranking orders pairs of labels.
    min_labels = 2

    def _fit(self, X, Y):
        # BLAS held to one thread for the fit (threadpoolctl; the caller's setting is restored
        # after it): between its Cython solves the family computes small products (X^T beta for
        # the certificates, eq. 32's scores) whose idle OpenBLAS threads keep spinning, which makes a
        # fit several times slower on few cores (measured: benchmarks/RESULTS.md, "Timings behind code comments").
        with blas_limited(1):
            self._fit_one_thread(X, Y)

    def _fit_one_thread(self, X, Y):
        check_two_labels(Y.shape[1])
        if not np.any(Y.any(axis=1) & ~Y.all(axis=1)):
            raise ValueError(
                "ranking methods need a training row with both a relevant and an irrelevant label: in Y every row "
                "has all its labels or none, so the pairwise ranking loss (eq. 1) has no pair and its optimum, "
                "W = 0, would rank nothing"
            )
        super()._fit(X, Y)

    def _fit_threshold(self, threshold, X, Y, **data):
        # Under the fit's one BLAS thread (see _fit): the out-of-fold refits of threshold_cv are fits too.
        with blas_limited(1):
            return super()._fit_threshold(threshold, X, Y, **data)

    def _threshold_settings(self, name: str) -> dict:
        """``learned_linear`` by name takes the presets' ``threshold`` (regressors), ``threshold_cv`` and seed."""
        if name != LearnedLinearThreshold.name:
            return {}
        return {"regressors": self.threshold, "cv": self.threshold_cv, "random_state": self.random_state}

    def _inner_threshold_params(self) -> dict:
        return super()._inner_threshold_params() | {"threshold": "sorted_scores", "threshold_cv": None}

    def _parts(self) -> dict:
        """The parts of problem (6), built from the registered components the class's ``PARTS`` names."""
        names = self.PARTS
        settings = {"regularizer": self._regularizer_settings(), "solver": self._solver_settings()}
        return {role: make_component(role, name, **settings.get(role, {})) for role, name in names.items()}

    def _regularizer_settings(self) -> dict:
        return {"mu": float(self.mu)} if "mu" in self.get_params(deep=False) else {}

    def decision_threshold(self, X) -> np.ndarray:
        """t(x) (n,), the threshold of section 3.8: label k is predicted for row i when its score exceeds t(x_i).

        In-sample training scores, or with ``threshold_cv = k`` out-of-fold ones (each row scored
        by the model fitted on the other k - 1 folds): a max-margin ranking separates its own
        training rows better than new ones, so in-sample targets are fitted to optimistic
        score profiles.  Only for ``thresholding="learned_linear"`` (the default).  t(x) reads the
        learned labels' scores; a label constant on the training rows is predicted at its value.
        When every label was constant (nothing learned), t(x) = 0: the sign of their constant scores.
        """
        scores = self._fitted_columns(self.decision_function(X))
        if not self._learned_some_label():
            return np.zeros(scores.shape[0])
        if not isinstance(self.threshold_, LearnedLinearThreshold):
            raise ValueError(
                f"decision_threshold is t(x) of the learned_linear threshold; this model was fitted with "
                f"thresholding={self.threshold_.describe()!r}"
            )
        return self.threshold_(scores)

    def _check_parameter_rules(self) -> None:
        if self.thresholding != LearnedLinearThreshold.name:
            # threshold and threshold_cv configure learned_linear by name; beside anything else they would do nothing.
            unused = [
                f"{name}={getattr(self, name)!r}"
                for name, default in (("threshold", "sorted_scores"), ("threshold_cv", None))
                if getattr(self, name) != default
            ]
            if unused:
                raise ValueError(
                    f"{' and '.join(unused)} configure thresholding='learned_linear' by name; with "
                    f"thresholding={self.thresholding!r} set them on a LearnedLinearThreshold object, or leave them "
                    "at their defaults"
                )

    def _cd(self) -> RankingCDSolver:
        return RankingCDSolver(**self._settings("tol"), random_state=self.random_state)

    def _settings(self, *names) -> dict:
        """The given solver settings that are not None (None: the solver's default)."""
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}


class LaRankSVM(_LabelRanking):
    """LaRank SVM (eq. 1; Elisseeff & Weston's ranking SVM), registered as ``larank``.

    Algorithm 1 (dual coordinate descent over the pairs) with R = I and every feature.

    Parameters
    ----------
    C : float, default 1.0
        Weight of the pairwise ranking hinge (each row's pairs weighted 1 / (|y_i||ybar_i|)).
    tol : float or None, default None
        Relative duality gap of the solve (None: 1e-3).
    max_iter : int or None, default None
        Most epochs of Algorithm 1 (None: 10000).
    fit_intercept : bool, default True
        The bias as the weight of a constant feature (eq. 1's ``x <- [x; 1]``).
    random_state : None, int or numpy Generator, default 0
        Seed of the coordinate order (and of the folds of ``threshold_cv``).
    threshold : {"sorted_scores", "scores"}, default "sorted_scores"
        Regressors of the set-size threshold t(x) fitted on eq. 34's targets (section 3.8):
        the row's label scores sorted, or in label order (the paper's and Elisseeff &
        Weston's); see :mod:`.threshold` and docs/methods/ranking.md for the measurements.
    threshold_cv : int >= 2 or None, default None
        Compute eq. 34's targets and the regression on out-of-fold training scores from
        this many folds (as many extra fits); None: on the in-sample scores (the paper).
    thresholding : str or Threshold, default "learned_linear"
        How scores become labels: ``learned_linear`` is section 3.8's t(x), configured by
        ``threshold`` and ``threshold_cv``; any registered threshold (``mlcore`` components of
        kind ``threshold``) or a Threshold object may replace it (``threshold`` and
        ``threshold_cv`` must then keep their defaults).

    Notes
    -----
    Fitted attributes: ``coef_`` (d, c), ``intercept_`` (c,), ``certificate_`` (a list of
    one Certificate), ``n_iter_`` (epochs), ``objective_history_``, ``threshold_`` (the
    fitted :class:`~.threshold.LearnedLinearThreshold` t(x), its ``coef`` (c + 1,), or the
    threshold ``thresholding`` names), ``parts_`` (the part objects of the fit, by role, built
    from ``PARTS``, and the threshold), ``n_features_in_``, ``n_labels_``.
    """

    def __init__(
        self,
        C=1.0,
        tol=None,
        max_iter=None,
        fit_intercept=True,
        random_state=0,
        threshold="sorted_scores",
        threshold_cv=None,
        thresholding="learned_linear",
    ):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.threshold = threshold
        self.threshold_cv = threshold_cv
        self.thresholding = thresholding

    PARTS = PARTS["larank"]

    def _solver_settings(self) -> dict:
        return self._settings("tol", "max_iter") | {"random_state": self.random_state}


class CLaRankSVM(_LabelRanking):
    """CLaRank SVM (problem 6 with p = 1), registered as ``clarank``.

    Alternates Algorithm 1 (R = I + mu D^-1) and the closed-form D of Theorem 3.4.

    Parameters
    ----------
    C : float, default 1.0
        Weight of the pairwise ranking hinge, as for :class:`LaRankSVM`.
    mu : float >= 0, default 1.0
        Strength of the label-covariance prior (mu = 0: LaRank SVM).
    tol : float or None, default None
        Relative duality gap of every alpha-step and relative change of the objective
        that stops the alternation (None: 1e-3).
    max_iter : int or None, default None
        Most alpha-steps (None: 100).
    fit_intercept : bool, default True
        The bias as the weight of a constant feature, as for :class:`LaRankSVM`.
    random_state : None, int or numpy Generator, default 0
        Seed of the coordinate order (and of the folds of ``threshold_cv``).
    threshold : {"sorted_scores", "scores"}, default "sorted_scores"
        Regressors of the set-size threshold t(x), as for :class:`LaRankSVM`.
    threshold_cv : int >= 2 or None, default None
        Folds of the out-of-fold scores t(x) is fitted on, as for :class:`LaRankSVM`.
    thresholding : str or Threshold, default "learned_linear"
        How scores become labels, as for :class:`LaRankSVM`.

    Notes
    -----
    Fitted attributes: those of :class:`LaRankSVM` (``certificate_`` one per alpha-step,
    ``n_iter_`` the alpha-steps, ``objective_history_`` the primal after each), and
    ``label_covariance_`` D (c, c; symmetric positive definite, trace 1) with
    ``label_correlation_``.
    """

    def __init__(
        self,
        C=1.0,
        mu=1.0,
        tol=None,
        max_iter=None,
        fit_intercept=True,
        random_state=0,
        threshold="sorted_scores",
        threshold_cv=None,
        thresholding="learned_linear",
    ):
        self.C = C
        self.mu = mu
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.threshold = threshold
        self.threshold_cv = threshold_cv
        self.thresholding = thresholding

    PARTS = PARTS["clarank"]

    def _solver_settings(self) -> dict:
        return {"cd": self._cd()} | self._settings("tol", "max_iter")


class _FeatureSelecting(_LabelRanking):
    """What MLFS and CMLFS share: Algorithm 2's parameters and its solver's settings.

    CMLFS is MLFS with the label covariance learned (``mu``): its ``__init__`` adds ``mu``
    to this one and its ``PARTS`` name the covariance regulariser and relation.
    """

    def __init__(
        self,
        C=1.0,
        n_features=10,
        tol=None,
        max_iter=None,
        fit_intercept=True,
        random_state=0,
        threshold="sorted_scores",
        threshold_cv=None,
        thresholding="learned_linear",
    ):
        self.C = C
        self.n_features = n_features
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.threshold = threshold
        self.threshold_cv = threshold_cv
        self.thresholding = thresholding

    def _solver_settings(self) -> dict:
        return {"n_features": int(self.n_features), "cd": self._cd()} | self._settings("tol", "max_iter")


class MLFS(_FeatureSelecting):
    """MLFS (problem 6 with mu = 0): Algorithm 2, registered as ``mlfs``.

    Gu, Li & Han, *Correlated multi-label feature selection* (CIKM 2011): the ranking SVM of
    eq. 1 on the m features a cutting plane selects (Algorithm 2, the subsets of eq. 32).

    Parameters
    ----------
    C : float, default 1.0
        Weight of the pairwise ranking hinge, as for :class:`LaRankSVM`.
    n_features : int, default 10
        m, the features of each subset of the cutting plane (p^T 1 = m; m >= d: LaRank SVM).
    tol : float or None, default None
        Relative gap of the bounds (l_t, u_t) at which the cutting plane stops; the
        alpha-steps are solved to a tenth of the current gap, never looser than this
        (None: 1e-3).
    max_iter : int or None, default None
        Most iterations of the proximal bundle (None: 100; it usually converges within 40).
    fit_intercept : bool, default True
        The bias as the weight of a constant feature, always kept (never a candidate for selection).
    random_state : None, int or numpy Generator, default 0
        Seed of the coordinate order (and of the folds of ``threshold_cv``).
    threshold : {"sorted_scores", "scores"}, default "sorted_scores"
        Regressors of the set-size threshold t(x), as for :class:`LaRankSVM`.
    threshold_cv : int >= 2 or None, default None
        Folds of the out-of-fold scores t(x) is fitted on, as for :class:`LaRankSVM`.
    thresholding : str or Threshold, default "learned_linear"
        How scores become labels, as for :class:`LaRankSVM`.

    Notes
    -----
    Fitted attributes: those of :class:`LaRankSVM` (``certificate_`` one per alpha-step and,
    last, the cutting plane's own: primal u_t, dual l_t, ``converged`` only when the outer
    relative bound gap is at most tol and the inner solve converged; ``n_iter_`` the
    cutting-plane iterations), ``selected_features_`` (the union of the subsets, sorted
    indices), ``feature_weights_`` (d,) s = sum_t lambda_t p_t, ``subsets_`` (T, d) and
    ``subset_weights_`` (T,) (s decomposed into m-subsets), ``bound_history_`` (T, 2): the
    lower and upper bounds (l_t, u_t) per iteration (docs/methods/ranking.md).
    """

    PARTS = PARTS["mlfs"]


class CMLFS(_FeatureSelecting):
    """CMLFS (problem 6): Algorithm 2 with the learned label covariance, registered as ``cmlfs``.

    Gu, Li & Han, *Correlated multi-label feature selection* (CIKM 2011): :class:`MLFS` with
    R = I + mu D^-1 and D learned in closed form (Theorem 3.4) between the alpha-steps.

    Parameters
    ----------
    C : float, default 1.0
        Weight of the pairwise ranking hinge, as for :class:`LaRankSVM`.
    mu : float >= 0, default 1.0
        Strength of the label-covariance prior (mu = 0: MLFS).
    n_features : int, default 10
        m, the features of each subset of the cutting plane, as for :class:`MLFS`.
    tol : float or None, default None
        Relative gap of the cutting plane's bounds, as for :class:`MLFS` (None: 1e-3).
    max_iter : int or None, default None
        Most iterations of the proximal bundle, as for :class:`MLFS` (None: 100).
    fit_intercept : bool, default True
        The bias as the weight of a constant feature, as for :class:`MLFS`.
    random_state : None, int or numpy Generator, default 0
        Seed of the coordinate order (and of the folds of ``threshold_cv``).
    threshold : {"sorted_scores", "scores"}, default "sorted_scores"
        Regressors of the set-size threshold t(x), as for :class:`LaRankSVM`.
    threshold_cv : int >= 2 or None, default None
        Folds of the out-of-fold scores t(x) is fitted on, as for :class:`LaRankSVM`.
    thresholding : str or Threshold, default "learned_linear"
        How scores become labels, as for :class:`LaRankSVM`.

    Notes
    -----
    Fitted attributes: those of :class:`MLFS` and ``label_covariance_`` /
    ``label_correlation_`` (D, c x c, symmetric positive definite, trace 1).
    """

    PARTS = PARTS["cmlfs"]

    def __init__(
        self,
        C=1.0,
        mu=1.0,
        n_features=10,
        tol=None,
        max_iter=None,
        fit_intercept=True,
        random_state=0,
        threshold="sorted_scores",
        threshold_cv=None,
        thresholding="learned_linear",
    ):
        super().__init__(
            C=C, n_features=n_features, tol=tol, max_iter=max_iter, fit_intercept=fit_intercept,
            random_state=random_state, threshold=threshold, threshold_cv=threshold_cv, thresholding=thresholding,
        )
        self.mu = mu
