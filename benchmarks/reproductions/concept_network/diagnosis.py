"""Why the network can hurt: ICM on the training rows themselves (Zhang et al., concept network, section 4).

Each local model is trained with the *true* labels of its neighbours in the edge features (eq. 7), but predicts
from ICM's labels, which start from the site scores alone.  Where two labels almost always co-occur (yeast's
functional classes 12 and 13, i.e. columns 11 and 12), the local model of either explains it by the other one,
its site part stops being a predictor on its own, the start labels that pair 0, and the pair then holds itself
at 0 (a fixed point of ICM).  This script shows it on the training file only (no test row is read): for each
sigma, the training micro-F1 of the site-only start labels, of ICM's labels and of the global ascent's, the
mean number of labels predicted per row (true: the label cardinality), and the share of rows given the frequent
pair.  Written to tables/diagnosis.md.

    python benchmarks/reproductions/concept_network/diagnosis.py [--data-home DIR]
"""

from __future__ import annotations

import argparse
import os
import warnings
from pathlib import Path

import numpy as np

from multilabel_core.datasets import load_dataset
from multilabel_core.experiments.preprocessing import Standardizer
from multilabel_core.metrics import micro_f1
from multilabel_core_plugins.concept_network import ConceptNetwork

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=os.environ.get("MULTILABEL_CORE_DATA"))
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # clipping counts; the table reports what matters here
    lines = ["# ICM on the training rows (diagnosis.py)", "",
             "| dataset | sigma | P0 | edges | start micro-F1 | ICM micro-F1 | global micro-F1 | labels per row (true) "
             "| rows given the most frequent pair (true) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for name in ("yeast-train", "emotions-train"):
        data = load_dataset(name, data_home=args.data_home)
        X, Y = Standardizer().fit(data.X).transform(data.X), np.asarray(data.Y)
        together = Y.T @ Y
        np.fill_diagonal(together, 0)
        pair = np.unravel_index(np.argmax(together), together.shape)
        for threshold in (0.05, 0.3):
            for sigma in (0.0, 0.1, 0.5, 1.0):
                model = ConceptNetwork(sigma=sigma, threshold=threshold).fit(X, Y)
                start = (model.site_scores(X) > 0).astype(int)
                icm = model.infer(X).labels
                ascent = ConceptNetwork(**{**model.get_params(), "inference": "global"}).fit(X, Y).infer(X).labels
                lines.append(
                    f"| {name} | {sigma} | {threshold} | {model.concept_graph_.n_edges} | {micro_f1(Y, start):.3f} | "
                    f"{micro_f1(Y, icm):.3f} | {micro_f1(Y, ascent):.3f} | {icm.sum(axis=1).mean():.2f} "
                    f"({Y.sum(axis=1).mean():.2f}) | {np.mean(icm[:, pair[0]] & icm[:, pair[1]]):.2f} "
                    f"({np.mean(Y[:, pair[0]] & Y[:, pair[1]]):.2f}) |"
                )
                print(lines[-1], flush=True)
    (HERE / "tables").mkdir(exist_ok=True)
    (HERE / "tables" / "diagnosis.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
