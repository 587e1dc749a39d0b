"""The papers' protocols: the promised properties of their splits."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.experiments.protocols import (
    PROTOCOLS,
    fixed_ratio,
    get_protocol,
    kfold,
    repeated_fixed_train,
    semi_supervised,
)


@pytest.fixture(scope="module")
def Y():
    """400 rows, 8 labels with 14 to 28 positives each: rare enough for random splits to skew them."""
    return make_correlated_multilabel(n_samples=400, n_labels=8, density=0.06, random_state=3).Y


def label_imbalance(Y, part) -> float:
    """Mean over labels of |share of the label's positives in ``part`` - share of rows in ``part``|.

    Sechidis et al. (2011)'s label-distribution idea: 0 for a perfectly stratified part.
    """
    positives = Y.sum(axis=0)
    return float(np.mean(np.abs(Y[part].sum(axis=0) / positives - len(part) / len(Y))))


def assert_partition(n, *parts):
    joined = np.concatenate(parts)
    assert len(joined) == n and len(np.unique(joined)) == n, "parts overlap or miss rows"
    for part in parts:
        assert part.dtype.kind == "i" and np.all(np.diff(part) > 0), "indices are sorted and distinct"


def same_splits(a, b) -> bool:
    return len(a) == len(b) and all(all(np.array_equal(x, y) for x, y in zip(s, t)) for s, t in zip(a, b))


# ------------------------------------------------------------------ each protocol
def test_kfold_tests_every_row_once_and_stratifies_better_than_random(Y):
    splits = kfold(Y, n_splits=5, seed=0)
    assert len(splits) == 5
    for train, test in splits:
        assert_partition(len(Y), train, test)
    assert_partition(len(Y), *(test for _, test in splits))
    stratified = np.mean([label_imbalance(Y, test) for _, test in splits])
    rng = np.random.default_rng(0)
    random_folds = [np.array_split(rng.permutation(len(Y)), 5) for _ in range(20)]
    random = np.mean([label_imbalance(Y, np.sort(fold)) for folds in random_folds for fold in folds])
    assert stratified < random / 3


def test_repeated_fixed_train_sizes_and_every_label_in_both_parts(Y):
    splits = repeated_fixed_train(Y, n_train=100, n_repeats=10, seed=0)
    assert len(splits) == 10
    for train, test in splits:
        assert_partition(len(Y), train, test)
        assert len(train) == 100
        assert np.all(Y[train].sum(axis=0) > 0) and np.all(Y[test].sum(axis=0) > 0)
    assert len({tuple(train) for train, _ in splits}) == 10, "repetitions draw different training sets"


@given(n_train=st.integers(3, 37), seed=st.integers(0, 2**31))
def test_repeated_fixed_train_guarantee_holds_for_any_size_and_seed(n_train, seed):
    # 40 rows, a label with exactly two positives and one with all but one: every size works.
    rng = np.random.default_rng(seed)
    Y = (rng.random((40, 4)) < 0.3).astype(np.int8)
    Y[:, 0] = 0
    Y[rng.choice(40, 2, replace=False), 0] = 1
    Y[:, 1] = 1
    Y[rng.integers(40), 1] = 0
    Y[:3, 2:] = [[1, 0], [0, 1], [1, 1]]
    Y[3:6, 2:] = [[1, 0], [0, 1], [1, 1]]
    ((train, test),) = repeated_fixed_train(Y, n_train=n_train, n_repeats=1, seed=seed)
    assert len(train) == n_train
    assert np.all(Y[train].sum(axis=0) > 0) and np.all(Y[test].sum(axis=0) > 0)


def test_repeated_fixed_train_rows_beyond_the_carriers_are_uniform():
    # With one label carried by every row, nothing is reserved beyond two rows: each row is a
    # training row in about n_train / n of the repetitions.
    Y = np.ones((20, 1), dtype=np.int8)
    Y[0, 0] = 0
    splits = repeated_fixed_train(Y, n_train=10, n_repeats=2000, seed=1)
    frequency = np.bincount(np.concatenate([train for train, _ in splits]), minlength=20) / 2000
    assert np.all(np.abs(frequency[1:] - 0.5) < 0.06)


@pytest.mark.parametrize(
    "labels, n_train, needle",
    [
        ([[1, 0]] + [[0, 1]] * 9, 5, "label(s) [0] have fewer than 2 relevant rows"),
        ([[1, 0]] * 10, 5, "label(s) [1] have fewer than 2 relevant rows ([0])"),
        ([[1, 0]] * 2 + [[0, 1]] * 2 + [[0, 0]] * 6, 1, "leaves 1 row(s) for the training part, but 2 are needed"),
        ([[1, 0]] * 5 + [[0, 1]] * 5, 10, "n_train must be <= 9"),
    ],
)
def test_repeated_fixed_train_refuses_impossible_splits_clearly(labels, n_train, needle):
    with pytest.raises(ValueError) as info:
        repeated_fixed_train(np.array(labels), n_train=n_train, n_repeats=1)
    assert needle in str(info.value)


def test_fixed_ratio_exact_sizes_stratified_better_than_the_papers_random_split(Y):
    stratified = fixed_ratio(Y, train_fraction=0.5, n_repeats=10, seed=0)
    random = fixed_ratio(Y, train_fraction=0.5, n_repeats=10, stratify=False, seed=0)
    for train, test in stratified + random:
        assert_partition(len(Y), train, test)
        assert len(train) == 200
    imbalance = [np.mean([label_imbalance(Y, train) for train, _ in splits]) for splits in (stratified, random)]
    assert imbalance[0] < imbalance[1] / 3


@given(seed=st.integers(0, 2**16), fraction=st.sampled_from([0.1, 0.5, 0.9]), stratify=st.booleans())
def test_fixed_ratio_can_keep_every_label_in_the_training_part(seed, fraction, stratify):
    # Labels 0-2 have a single relevant row and label 3 two: a plain split loses them from training often.
    rng = np.random.default_rng(seed)
    Y = (rng.random((60, 6)) < 0.3).astype(np.int8)
    Y[:, :4] = 0
    Y[rng.choice(60, 3, replace=False), [0, 1, 2]] = 1
    Y[rng.choice(60, 2, replace=False), 3] = 1
    Y[:, 5] = np.maximum(Y[:, 5], Y[:, 4] == 0)  # no empty column 4/5 by chance
    for train, test in fixed_ratio(Y, train_fraction=fraction, n_repeats=3, stratify=stratify,
                                   require_labels_in="train", seed=seed):
        assert_partition(60, train, test)
        assert len(train) == round(fraction * 60)
        assert np.all(Y[train].sum(axis=0) >= 1), "every label has a relevant training row"


def test_fixed_ratio_without_the_guarantee_loses_rare_labels_from_training():
    Y = np.zeros((40, 2), dtype=np.int8)
    Y[0, 0] = 1
    Y[:, 1] = 1
    lost = [Y[train, 0].sum() == 0 for train, _ in fixed_ratio(Y, n_repeats=20, stratify=False, seed=1)]
    assert any(lost)
    kept = fixed_ratio(Y, n_repeats=20, stratify=False, require_labels_in="train", seed=1)
    assert all(Y[train, 0].sum() == 1 for train, _ in kept)


def test_semi_supervised_is_20_80_transductive(Y):
    splits = semi_supervised(Y, seed=4)
    assert len(splits) == 10
    for labeled, test, unlabeled in splits:
        assert_partition(len(Y), labeled, unlabeled)
        assert test is unlabeled, "the unlabelled rows are the evaluated ones"
        assert len(labeled) == 80 and len(unlabeled) == 320
        assert label_imbalance(Y, labeled) < 0.1
    assert PROTOCOLS["semi_supervised"].transductive


# ``given`` is left out: its one split is fixed by the data, whatever the seed (tests/test_protocol_given.py).
@pytest.mark.parametrize("name", [name for name in PROTOCOLS if name != "given"])
def test_every_protocol_is_deterministic_with_its_seed(Y, name):
    protocol = get_protocol(name)
    params = {"n_train": 100} if name == "repeated_fixed_train" else {}
    first = protocol.split(Y, seed=7, **params)
    assert len({tuple(split[0]) for split in first}) == len(first), "every split is a new draw"
    assert same_splits(first, protocol.split(Y, seed=7, **params))
    assert not same_splits(first, protocol.split(Y, seed=8, **params))


@pytest.mark.parametrize("name", [name for name, protocol in PROTOCOLS.items() if protocol.extensible])
@given(seed=st.integers(0, 2**31 - 1), first=st.integers(1, 4), more=st.integers(1, 4))
def test_an_extensible_protocol_keeps_its_first_splits_when_given_more(Y, name, seed, first, more):
    # What lets a finished run be extended and keep its records (mlcore compare --extend).
    params = {"n_train": 100} if name == "repeated_fixed_train" else {}
    if name == "fixed_ratio":
        params["require_labels_in"] = "train" if seed % 2 else None
    protocol = get_protocol(name)
    few = protocol.split(Y, seed=seed, n_repeats=first, **params)
    many = protocol.split(Y, seed=seed, n_repeats=first + more, **params)
    assert len(many) == first + more and same_splits(few, many[:first])


def test_only_protocols_drawn_one_repetition_at_a_time_are_extensible():
    assert {name for name, protocol in PROTOCOLS.items() if protocol.extensible} == {
        "repeated_fixed_train", "fixed_ratio", "semi_supervised",
    }  # fmt: skip


def test_registry_defaults_are_the_papers_settings():
    assert PROTOCOLS["kfold"].defaults == {"n_splits": 10}
    assert PROTOCOLS["repeated_fixed_train"].defaults == {"n_train": 1000, "n_repeats": 10}
    assert PROTOCOLS["fixed_ratio"].defaults == {
        "train_fraction": 0.5,
        "n_repeats": 10,
        "stratify": True,
        "require_labels_in": None,
    }
    assert PROTOCOLS["semi_supervised"].defaults == {"labeled_fraction": 0.2, "n_repeats": 10, "stratify": True}
    assert PROTOCOLS["given"].defaults == {"n_train": None}
    assert get_protocol("kfold").params({"n_splits": 3}) == {"n_splits": 3}


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda Y: get_protocol("bootstrap"), "unknown protocol 'bootstrap'"),
        (lambda Y: get_protocol("kfold").split(Y, n_folds=3), "no parameter 'n_folds'; valid: n_splits"),
        (lambda Y: get_protocol("kfold").split(Y, seed=-1), "seed"),
        (lambda Y: fixed_ratio(Y, train_fraction=1.5), "train_fraction"),
        (lambda Y: fixed_ratio(Y, train_fraction=0.001), "leaves one part empty"),
        (lambda Y: fixed_ratio(Y, stratify="yes"), "stratify"),
        (lambda Y: fixed_ratio(Y, require_labels_in="test"), "require_labels_in"),
        (lambda Y: fixed_ratio(np.c_[Y, np.zeros(len(Y), int)], require_labels_in="train"), "no relevant row"),
        (lambda Y: fixed_ratio(np.eye(6, dtype=int), train_fraction=0.5, require_labels_in="train"), "needed"),
        (lambda Y: semi_supervised(Y, labeled_fraction=0), "labeled_fraction"),
        (lambda Y: kfold(Y, n_splits=1), "n_splits"),
        (lambda Y: kfold(Y[:, :0]), "no label columns"),
    ],
)
def test_bad_parameters_are_value_errors_naming_them(Y, call, needle):
    with pytest.raises(ValueError) as info:
        call(Y)
    assert needle in str(info.value)
