"""Refit the models a reproduction run chose, with today's code, and compare their test measures.

A reproduction's store (``runs/NAME/results.jsonl``) records for every (method, dataset, split)
the hyper-parameters the inner search chose and the test measures of the model fitted with them.
This script refits each such model on the same training rows with the current code and prints the
stored and the new measures side by side, so a change to a solver can be checked against the
published tables without rerunning the searches.  Only the ``given`` protocol (a fixed train/test
pair, ``NAME-train+NAME-test``) is supported: its rows need no stored split.

    python benchmarks/reproductions/refit_chosen.py benchmarks/reproductions/concept_network/runs/fixed/results.jsonl
    python benchmarks/reproductions/refit_chosen.py RESULTS --methods concept_network,mlrl --data-home ../shared/datasets
"""

from __future__ import annotations

import argparse
import json
import warnings

import numpy as np
import scipy.sparse as sp

import multilabel_core as mlc
from multilabel_core.datasets import load_dataset
from multilabel_core.experiments.runner import evaluate_split

MEASURES = ("micro_f1", "macro_f1", "average_precision", "hamming_loss")


def rows(data_home, pair: str):
    """X, Y and the train/test row indices of a ``given`` pair ``A+B``."""
    first, second = pair.split("+")
    train, test = load_dataset(first, data_home), load_dataset(second, data_home)
    stack = sp.vstack if sp.issparse(train.X) else np.vstack
    X, Y = stack([train.X, test.X]), np.vstack([train.Y, test.Y])
    n = train.n_samples
    return X, Y, np.arange(n), np.arange(n, n + test.n_samples)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="a run's results.jsonl")
    parser.add_argument("--methods", help="comma-separated methods (default: every method of the run)")
    parser.add_argument("--data-home", default=None, help="the data folder (default: the usual lookup)")
    args = parser.parse_args(argv)
    wanted = set(args.methods.split(",")) if args.methods else None
    largest = 0.0
    with open(args.results, encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    print("| method | dataset | chosen | " + " | ".join(f"{m} stored / now" for m in MEASURES) + " |")
    print("| --- | --- | --- | " + " | ".join("---" for _ in MEASURES) + " |")
    for record in records:
        if record["status"] != "ok" or record["protocol"] != "given" or (wanted and record["method"] not in wanted):
            continue
        X, Y, train, test = rows(args.data_home, record["dataset"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outcome = evaluate_split(mlc.make_method(record["method"]), record["params"], X, Y, train, test,
                                     preprocess=record["preprocess"])  # fmt: skip
        if outcome["status"] != "ok":
            print(f"| {record['method']} | {record['dataset']} | {record['params']} | failed now: {outcome['error']} |")
            continue
        cells = []
        for name in MEASURES:
            stored, now = record["metrics"][name], outcome["metrics"][name]
            largest = max(largest, abs(stored - now))
            cells.append(f"{stored:.4f} / {now:.4f}")
        print(f"| {record['method']} | {record['dataset']} | {record['params']} | " + " | ".join(cells) + " |")
    print(f"\nlargest difference in a measure: {largest:.2g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
