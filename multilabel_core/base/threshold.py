"""The :class:`Threshold` interface: how a method turns its scores into labels.

A multi-label method scores every (row, label) pair, t_ij; the sixth part of a method decides
which pairs are predicted relevant.  The classical rule is ``t_ij > 0`` (the sign of a
max-margin score); others learn where to cut from the training data: per-label score
thresholds (Fan & Lin, *A Study on Threshold Selection for Multi-label Classification*, 2007;
Yang, *A Study of Thresholding Strategies for Text Categorization*, SIGIR 2001: SCut, RCut and
PCut), or a threshold that is a function of the row's scores (Elisseeff & Weston, *A Kernel
Method for Multi-Labelled Classification*, NIPS 2001; Gu, Li & Han, *Correlated Multi-Label
Feature Selection*, CIKM 2011, section 3.8, eq. 34).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np


class Threshold(ABC):
    """Base class of a threshold: the rule that turns a score matrix into a {0, 1} label matrix.

    A threshold is a frozen value, like every part.  Its hyper-parameters are fields given
    when it is built; what it learns from the training data is held in further fields, as
    numpy arrays, filled by :meth:`fit`, which returns a *new* fitted threshold (the
    unfitted one, which may be an estimator's parameter, is never changed).

    Methods
    -------
    fit(estimator, X, Y, scores, **data)
        Required.  The fitted threshold, learned from the training rows only: ``estimator`` is the
        method just fitted on ``X`` (validated) and ``Y`` (dense int8 {0, 1}, n x L),
        ``scores`` its in-sample decision values (n, L), ``data`` the further inputs its
        ``fit`` received (e.g. unlabeled rows).  A threshold that needs out-of-fold scores
        refits copies of ``estimator`` on parts of ``X`` (:func:`multilabel_core.thresholds.out_of_fold_scores`).
    predict(scores)
        Required.  The labels of a score matrix by the fitted rule, an int64 ndarray of
        shape ``(n, L)``.

    Notes
    -----
    ``name`` is the name the class is registered under (what reports show); ``fitted`` is
    true once :meth:`fit` has filled the learned fields (always true for a rule that learns
    nothing).  A rule that does not look at the training scores sets ``needs_scores = False``
    and gets ``scores=None`` (computing them costs a prediction on every training row, and
    the concept network's is an inference).
    """

    #: The registered name (``make_component("threshold", name)``); reports show it.
    name: ClassVar[str] = ""
    #: Whether :meth:`fit` reads ``scores`` (False: it is given None).
    needs_scores: ClassVar[bool] = True

    @abstractmethod
    def fit(self, estimator, X, Y, scores, **data) -> "Threshold":
        """Learn the cut from a fitted estimator's training scores.

        Parameters
        ----------
        estimator : MultiLabelEstimator
            The estimator just fitted (a threshold that refits it out of fold clones it).
        X : array or sparse matrix of shape (n, d)
            The training rows.
        Y : ndarray of shape (n, L)
            The {0, 1} training labels.
        scores : ndarray of shape (n, L)
            The estimator's decision values on ``X``.
        **data
            Further inputs of the estimator's ``fit`` (e.g. SSMLRL's ``X_unlabeled``).

        Returns
        -------
        Threshold
            ``self``, fitted.
        """

    @abstractmethod
    def predict(self, scores) -> np.ndarray:
        """Cut scores into labels.

        Parameters
        ----------
        scores : ndarray of shape (n, L)
            Decision values.

        Returns
        -------
        ndarray of shape (n, L)
            The {0, 1} labels, int64.
        """

    @property
    def fitted(self) -> bool:
        """Whether the rule is ready to predict (the learned fields are set)."""
        return True

    def describe(self) -> str:
        """Describe the rule in one line for reports.

        Returns
        -------
        str
            The registered name and the hyper-parameters that differ from the defaults (the
            base class gives the name alone, or the class name when unregistered).
        """
        return self.name or type(self).__name__
