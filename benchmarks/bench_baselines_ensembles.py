"""Label powerset and RAkEL-d against scikit-multilearn-ng's, side by side in one run; ECC beside a single chain.

    python benchmarks/bench_baselines_ensembles.py          # needs scikit-multilearn-ng (pip install scikit-multilearn-ng)

On the standard Mulan train/test splits of emotions and yeast (features standardised on the training part), both
libraries over the same ``LogisticRegression(max_iter=1000)``: Hamming loss and micro-F1 of the 0/1 predictions,
average precision of the scores (ours: the vote score of ``multilabel_core_plugins.baselines.ensembles``;
scikit-multilearn's: its ``predict_proba``), and fit + predict time, best of three, as the ratio ours / theirs.
Label powerset is the same model in both (predictions should agree but for rounding in lbfgs); RAkEL-d draws its
random label partition with each library's own generator, so its metrics agree within the spread of partitions.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from _common import best_time, data_dir, markdown_table
from multilabel_core_plugins.baselines import EnsembleClassifierChains, LabelPowerset, RAkEL
from sklearn.linear_model import LogisticRegression

import multilabel_core as mlc
from multilabel_core.datasets import load_dataset
from multilabel_core.metrics import average_precision, hamming_loss, micro_f1


def split(name):
    train, test = (load_dataset(f"{name}-{part}", data_home=data_dir()) for part in ("train", "test"))
    Xtr, Xte = (np.asarray(d.X.toarray() if hasattr(d.X, "toarray") else d.X, dtype=float) for d in (train, test))
    Ytr, Yte = (np.asarray(d.Y.toarray() if hasattr(d.Y, "toarray") else d.Y) for d in (train, test))
    centre, scale = Xtr.mean(0), Xtr.std(0)
    scale[scale == 0] = 1.0
    return (Xtr - centre) / scale, Ytr, (Xte - centre) / scale, Yte


def _dense(matrix):
    return np.asarray(matrix.toarray() if hasattr(matrix, "toarray") else matrix)


def run(make, Xtr, Ytr, Xte, ours: bool):
    def fit_predict():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = make().fit(Xtr, Ytr)
            if ours:
                scores = model.decision_function(Xte)
                return (scores > 0).astype(int), scores
            return _dense(model.predict(Xte)), _dense(model.predict_proba(Xte))

    return best_time(fit_predict, 3)


def main():
    from skmultilearn.ensemble import RakelD
    from skmultilearn.problem_transform import LabelPowerset as SkmlLabelPowerset

    def logistic():
        return LogisticRegression(max_iter=1000)

    pairs = {
        "label powerset": (lambda: LabelPowerset(), lambda: SkmlLabelPowerset(classifier=logistic(), require_dense=[True, True])),
        "RAkEL-d, k = 3": (lambda: RAkEL(labelset_size=3, random_state=0),
                           lambda: RakelD(base_classifier=logistic(), labelset_size=3, base_classifier_require_dense=[True, True])),
    }  # fmt: skip
    rows = []
    for name in ("emotions", "yeast"):
        Xtr, Ytr, Xte, Yte = split(name)
        for label, (ours, theirs) in pairs.items():
            results = {}
            for who, make in (("ours", ours), ("scikit-multilearn-ng", theirs)):
                seconds, (predicted, scores) = run(make, Xtr, Ytr, Xte, who == "ours")
                results[who] = seconds
                rows.append([name, label, who, f"{hamming_loss(Yte, predicted):.4f}", f"{micro_f1(Yte, predicted):.4f}",
                             f"{average_precision(Yte, scores):.4f}", f"{seconds:.2f}", ""])  # fmt: skip
            rows[-2][-1] = f"{results['ours'] / results['scikit-multilearn-ng']:.2f}"
        for label, make in (("ECC, 10 chains", lambda: EnsembleClassifierChains(random_state=0)),
                            ("one chain (classifier_chain)", lambda: mlc.make_method("classifier_chain"))):  # fmt: skip
            seconds, (predicted, scores) = run(make, Xtr, Ytr, Xte, True)
            rows.append([name, label, "ours", f"{hamming_loss(Yte, predicted):.4f}", f"{micro_f1(Yte, predicted):.4f}",
                         f"{average_precision(Yte, scores):.4f}", f"{seconds:.2f}", ""])  # fmt: skip
    print(markdown_table("## Label powerset, RAkEL-d and ECC (Mulan train/test splits, logistic regression)",
                         ["data", "method", "library", "Hamming loss", "micro-F1", "average precision", "seconds",
                          "time ours / theirs"], rows))  # fmt: skip


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"\n(total {time.perf_counter() - start:.0f} s)")
