"""The runner's pipelined batches: each parallel call holds the final fits of the previous batch, then the
search tasks of the next, across the methods of a dataset; the records are those of a serial run."""

from __future__ import annotations

import contextlib

import pytest

from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.experiments import runner
from multilabel_core.experiments.store import without_timings

DATA = make_correlated_multilabel(n_samples=120, n_features=6, n_labels=3, random_state=7)
SETTINGS = {"protocol_params": {"n_repeats": 5}, "inner_cv": 2, "progress": False, "plots": False}


@pytest.fixture
def calls(monkeypatch):
    """The task names of every parallel call of a run, which runs them in this process, in order."""
    made = []

    @contextlib.contextmanager
    def recording(n_jobs, client, dataset):
        def parallel(tasks):
            tasks = list(tasks)
            made.append([function.__name__ for function, _, _ in tasks])
            return (function(*args, **kwargs) for function, args, kwargs in tasks)

        yield parallel

    monkeypatch.setattr(runner, "_parallel", recording)
    return made


def compare(out, grids, **execution):
    return runner.run_experiment(["br", "bsvm"], [DATA], "fixed_ratio", out, grids=grids, **SETTINGS, **execution).records


def test_each_call_holds_the_previous_batch_final_fits_then_the_next_searches(calls, tmp_path):
    grids = {"br": {"C": [0.1, 1.0]}, "bsvm": {"lam": [0.01, 0.1]}}
    records = compare(tmp_path / "pipelined", grids, n_jobs=2)
    # 10 searched splits (5 per method) in batches of 2: 5 batches, so 6 calls; the third batch is
    # br's last split and bsvm's first, the methods sharing one call.
    assert len(calls) == 6
    br, bsvm = len(calls[0]) // 2, len(calls[3][2:]) // 2  # search tasks of one split of each method
    assert br >= 2 and bsvm >= 2 and calls[0] == ["score_points"] * (2 * br)
    for call in calls[1:-1]:
        assert call[:2] == ["evaluate_split"] * 2 and set(call[2:]) == {"score_points"}
    assert len(calls[1]) == 2 + 2 * br and len(calls[2]) == 2 + br + bsvm and len(calls[4]) == 2 + 2 * bsvm
    assert calls[-1] == ["evaluate_split"] * 2
    assert [(r["method"], r["split"]) for r in records] == [(m, s) for m in ("br", "bsvm") for s in range(5)]
    assert all(r["status"] == "ok" and len(r["search"]) == 2 for r in records)
    serial = compare(tmp_path / "serial", grids, n_jobs=1)
    assert len(calls) == 6 + 11  # serially, one split per batch: 10 batches, 11 calls
    assert without_timings(records) == without_timings(serial)


def test_splits_without_a_search_are_fitted_in_the_call_of_their_batch(calls, tmp_path):
    # br: one grid point (no search); bsvm: searched.  br's five final fits ride with bsvm's first batch.
    grids = {"br": {"C": [1.0]}, "bsvm": {"lam": [0.01, 0.1]}}
    records = compare(tmp_path, grids, n_jobs=2)
    assert calls[0][:5] == ["evaluate_split"] * 5 and set(calls[0][5:]) == {"score_points"}
    assert calls[-1] == ["evaluate_split"]  # bsvm's fifth split, a batch of its own
    assert sum(call.count("evaluate_split") for call in calls) == 10
    assert [r["search"] for r in records if r["method"] == "br"] == [[]] * 5
    assert all(r["status"] == "ok" for r in records)


def test_batches_count_only_the_searched_splits():
    class Group:
        def __init__(self, pending, searched):
            self.pending, self.searches = pending, {s: None for s in searched}

    plain, searched = Group([0, 1, 2], []), Group([0, 1, 2], [0, 1, 2])
    batches = runner._batches([plain, searched], 2)
    assert [[(g is searched, s) for g, s in batch] for batch in batches] == [
        [(False, 0), (False, 1), (False, 2), (True, 0), (True, 1)],
        [(True, 2)],
    ]
    assert runner._batches([plain], 2) == [[(plain, 0), (plain, 1), (plain, 2)]]
    assert runner._batches([], 2) == []
