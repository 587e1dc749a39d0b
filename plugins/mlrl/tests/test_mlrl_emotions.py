"""The label correlations MLRL learns on emotions (section 5.3.1, Table VIII), under the paper's 10-fold CV.

Table VIII's strongest pairs: quiet-still / sad-lonely 0.87, amazed-surprised / relaxing-calm -0.73,
relaxing-calm / angry-aggressive -0.72.  Setting: the RBF kernel with the paper's width, features
standardised on each training part, lambda = 1e-3.  (With our 1/n-scaled loss the CV-best lambda on
emotions is 1e-4 to 1e-3, below the paper's grid; at 1e-3 the three correlations come out closest to
the table's.)
"""

import numpy as np

from multilabel_core.datasets import load_dataset
from multilabel_core.experiments.preprocessing import preprocessed
from multilabel_core.experiments.protocols import kfold
from multilabel_core_plugins.mlrl import MLRL

#: Table VIII's strongest pairs (label indices in the file's order) and the sign of their correlation.
STRONGEST = {(3, 4): +1, (0, 2): -1, (2, 5): -1}


def test_mean_label_correlation_has_the_sign_pattern_of_table_viii(datasets_dir):
    dataset = load_dataset(datasets_dir / "emotions.arff")
    assert dataset.label_names[:3] == ("amazed-suprised", "happy-pleased", "relaxing-calm")
    X, Y = np.asarray(dataset.X, dtype=np.float64), np.asarray(dataset.Y)
    correlations = []
    for train, _ in kfold(Y, n_splits=10, seed=0):
        X_scaled = preprocessed(X, train, "standardize")
        correlations.append(MLRL(lam=1e-3).fit(X_scaled[train], Y[train]).label_correlation_)
    mean = np.mean(correlations, axis=0)
    for (i, j), sign in STRONGEST.items():
        assert sign * mean[i, j] > 0.5, (dataset.label_names[i], dataset.label_names[j], mean[i, j])
    # They are also the three strongest correlations learned.
    upper = np.triu_indices(6, k=1)
    order = np.argsort(-np.abs(mean[upper]))[:3]
    assert {(int(upper[0][k]), int(upper[1][k])) for k in order} == set(STRONGEST)
