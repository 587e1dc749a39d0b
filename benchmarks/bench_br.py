"""Binary relevance: our L-BFGS primal solver against one-vs-rest LIBLINEAR (LinearSVC).

Both solve the same problem -- per label, L2-regularised squared hinge with the bias
regularised as an extra feature (LIBLINEAR's intercept_scaling=1) -- so the objective
values are comparable; we report fit times, their ratio, average precision of both on a
70/30 split and the relative objective difference.
"""

from __future__ import annotations

import numpy as np
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from _common import data_dir, median_time, print_table
from multilabel_core import make_method
from multilabel_core.datasets import load_dataset
from multilabel_core.metrics import average_precision
from multilabel_core.model_selection import train_test_split_stratified


def main(C: float = 1.0) -> None:
    rows = []
    for name in ["emotions", "scene", "yeast", "rcv1subset1"]:
        ds = load_dataset(data_dir() / f"{name}.arff")
        X = ds.X if hasattr(ds.X, "tocsr") else StandardScaler().fit_transform(ds.X)
        X_tr, X_te, Y_tr, Y_te = train_test_split_stratified(X, ds.Y, test_size=0.3, random_state=0)
        ours = make_method("br", C=C, tol=1e-6)
        peer = OneVsRestClassifier(LinearSVC(C=C, loss="squared_hinge", dual=True, tol=1e-6, max_iter=100000))
        t_ours, _ = median_time(lambda: ours.fit(X_tr, Y_tr), repeat=3)
        t_peer, _ = median_time(lambda: peer.fit(X_tr, Y_tr), repeat=3)
        ap_ours = average_precision(Y_te, ours.decision_function(X_te))
        ap_peer = average_precision(Y_te, peer.decision_function(X_te))
        rows.append([name, t_ours, t_peer, t_ours / t_peer, ap_ours, ap_peer, ours.certificate_.gap])
    print_table(["data", "ours s", "liblinear s", "ratio", "AP ours", "AP liblinear", "our gap"], rows)


if __name__ == "__main__":
    main()
