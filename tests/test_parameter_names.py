"""One name, one meaning across every registered method's parameters.

The glossary (:mod:`multilabel_core.parameter_names`) gives each name one meaning and the words
any description of that meaning uses; every method's own numpydoc description of each of its
parameters must use them, so a second meaning of a name fails here.  The table in
docs/estimators.md is the glossary's rendering, regenerated and compared.
"""

from __future__ import annotations

import inspect
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from numpydoc.docscrape import NumpyDocString

import multilabel_core
from multilabel_core.parameter_names import (
    DEPRECATED,
    GLOSSARY,
    RENAMED,
    RENAMED_ARGUMENTS,
    parameter_table,
    renamed_parameter,
)


DOCS = Path(__file__).resolve().parents[1] / "docs" / "estimators.md"
START, END = "<!-- parameter-table -->", "<!-- /parameter-table -->"

#: "As :class:`MLRL`", "As for :class:`LaRankSVM`", "as for MLRL (``mlrl``)": the description is another class's.
_REFERENCE = re.compile(r"\bas (?:for |in )?(?::class:`~?\.?(\w+)`|(\w+) \(``\w+``\))", re.IGNORECASE)


def _descriptions(cls) -> dict[str, str]:
    """Parameter name -> its numpydoc description in the class docstring ("name1, name2 : ..." split)."""
    doc = NumpyDocString(inspect.getdoc(cls) or "")
    found = {}
    for parameter in doc["Parameters"]:
        text = " ".join(parameter.desc)
        for name in parameter.name.split(","):
            found[name.strip()] = text
    return found


def _own_methods():
    """This distribution's registered methods (a third-party plugin's are its author's)."""
    return [s for s in multilabel_core.list_methods() if s.estimator.__module__.split(".")[0].startswith("multilabel_core")]


def _classes_by_name() -> dict[str, type]:
    return {spec.estimator.__name__: spec.estimator for spec in _own_methods()}


def meaning_mismatches(cls, classes: dict[str, type]) -> list[str]:
    """Parameters of ``cls`` undocumented or documented with another meaning than the glossary's."""
    problems = []
    own = _descriptions(cls)
    for name, value in cls().get_params(deep=False).items():
        text, seen = own.get(name), {cls.__name__}
        # A description that refers to another class ("As :class:`MLRL`") is that class's.
        while text is not None:
            reference = _REFERENCE.search(text)
            target = reference and (reference.group(1) or reference.group(2))
            if GLOSSARY.get(name) and re.search(GLOSSARY[name].pattern, text, re.IGNORECASE) or not target:
                break
            if target in seen or target not in classes:
                break
            seen.add(target)
            text = _descriptions(classes[target]).get(name)
        if isinstance(value, str) and value == DEPRECATED:
            if text is None or "deprecated" not in text.lower():
                problems.append(f"{cls.__name__}.{name}: a deprecated spelling not documented as such")
            continue
        if name not in GLOSSARY:
            problems.append(f"{cls.__name__}.{name}: no meaning in GLOSSARY")
        elif text is None:
            problems.append(f"{cls.__name__}.{name}: not documented in the class's Parameters section")
        elif not re.search(GLOSSARY[name].pattern, text, re.IGNORECASE):
            problems.append(f"{cls.__name__}.{name}: documented as {text[:120]!r}, not as {GLOSSARY[name].text!r}")
    return problems


def test_every_parameter_keeps_the_one_meaning_of_its_name():
    classes = _classes_by_name()
    problems = [problem for cls in classes.values() for problem in meaning_mismatches(cls, classes)]
    assert not problems, "\n".join(problems)


def test_a_second_meaning_is_caught():
    """The check fails on a name documented with another meaning (it is not a test that cannot fail)."""

    class Collides(multilabel_core.MultiLabelEstimator):
        """A method that reuses a name for something else.

        Parameters
        ----------
        gamma : float, default 1.0
            Weight of the second penalty.
        k : int, default 5
            Rank of the embedding.
        C : float, default 1.0
            Weight of the losses.
        """

        def __init__(self, gamma=1.0, k=5, C=1.0):
            self.gamma = gamma
            self.k = k
            self.C = C

    problems = meaning_mismatches(Collides, {})
    assert [p.split(":")[0] for p in problems] == ["Collides.gamma", "Collides.k"], problems


def test_the_docs_table_is_the_generated_one():
    text = DOCS.read_text(encoding="utf-8")
    assert START in text and END in text, f"docs/estimators.md lacks the markers {START} ... {END}"
    held = text.split(START, 1)[1].split(END, 1)[0].strip("\n") + "\n"
    assert held == parameter_table(), (
        "docs/estimators.md's parameter table is not parameter_table()'s output: regenerate it with\n"
        "python -c 'from multilabel_core.parameter_names import parameter_table; print(parameter_table())'"
    )


def test_every_glossary_entry_is_used():
    used = {name for spec in _own_methods() for name in spec.estimator().get_params(deep=False)}
    assert not set(GLOSSARY) - used, f"meanings of names no method takes: {sorted(set(GLOSSARY) - used)}"


def test_registered_grids_use_no_deprecated_name():
    for spec in _own_methods():
        params = spec.estimator().get_params(deep=False)
        old = [name for name in spec.param_grid if isinstance(params.get(name), str) and params[name] == DEPRECATED]
        assert not old, f"{spec.name}'s param_grid uses the deprecated {old}"


def _data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5))
    Y = (X @ rng.standard_normal((5, 4)) + 0.3 * rng.standard_normal((40, 4)) > 0).astype(int)
    return X, Y


_RENAMED_VALUES = {("RAkEL", "k"): 2, ("PrML", "k"): 2, ("LEML", "k"): 2, ("ConceptNetwork", "threshold"): 0.02}
_FAST = {"PrML": {"max_iter": 2, "sub_solver": "cd"}, "LEML": {"max_iter": 2, "sub_solver": "cd"},
         "ConceptNetwork": {"n_components": 8}}


def _effect(estimator: str, model):
    """Where the renamed parameter acts in a fitted model."""
    if estimator == "RAkEL":
        return max(len(subset) for subset in model.subsets_)
    if estimator in ("PrML", "LEML"):
        return model.parts_["regularizer"].rank
    return model.concept_graph_.threshold


@pytest.mark.parametrize("renamed", RENAMED, ids=lambda r: f"{r.estimator}.{r.old}")
def test_a_renamed_parameter_is_accepted_for_a_release(renamed):
    from sklearn.base import clone

    cls = _classes_by_name()[renamed.estimator]
    value = _RENAMED_VALUES[renamed.estimator, renamed.old]
    X, Y = _data()
    old = cls(**{renamed.old: value}, **_FAST.get(renamed.estimator, {}))
    assert clone(old).get_params()[renamed.old] == value and clone(old).get_params()[renamed.new] != value
    with pytest.warns(FutureWarning, match=rf"'{renamed.old}' was renamed '{renamed.new}'; pass {renamed.new}="):
        old.fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        new = cls(**{renamed.new: value}, **_FAST.get(renamed.estimator, {})).fit(X, Y)
    # The old spelling reached the part the new one sets: the same value where it acts.
    assert _effect(renamed.estimator, old) == _effect(renamed.estimator, new) == value
    with pytest.raises(ValueError, match=rf"pass only {renamed.new}"):
        renamed_parameter(cls(**{renamed.old: value, renamed.new: value}), renamed.old, renamed.new)


def test_the_smo_solvers_cache_size_is_the_methods_name():
    """``cache_size_mb`` of smo_solve and SMOSolver is ``cache_size`` (MB), the old name accepted for a release."""
    from multilabel_core.solvers import SMOSolver, smo_solve

    assert {r.old for r in RENAMED_ARGUMENTS} == {"cache_size_mb"}
    with pytest.warns(FutureWarning, match="'cache_size_mb' was renamed 'cache_size'; pass cache_size=8"):
        old = SMOSolver(cache_size_mb=8)
    assert old.cache_size == 8 and old == SMOSolver(cache_size=8)
    with pytest.raises(ValueError, match="pass only cache_size"):
        SMOSolver(cache_size=4, cache_size_mb=8)
    with pytest.raises(ValueError, match="cache_size_mb"), pytest.warns(FutureWarning):
        SMOSolver(cache_size_mb=-1.0)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((12, 3))
    Y = np.where(X[:, :2] > 0, 1.0, -1.0)
    K = X @ X.T
    with pytest.warns(FutureWarning, match="smo_solve: the argument 'cache_size_mb'"):
        by_old = smo_solve(K, Y, np.eye(2), 1.0, cache_size_mb=1.0)
    by_new = smo_solve(K, Y, np.eye(2), 1.0, cache_size=1.0)
    # One solve, whichever name carried the budget: the same steps (the cache changes the time only).
    assert by_old.n_iter == by_new.n_iter and np.array_equal(by_old.solution.dual, by_new.solution.dual)
