"""Composition that never lies: every part used or refused, a solver found by capability.

- the composition matrix (every registered loss x regulariser x relation x solver, ``auto`` included,
  x two kernels, by name) ends only in certified fits whose every non-default part changes the model,
  or in refusals naming a part: 0 ignored parts, 0 raw exceptions;
- ``solver="auto"`` picks by the documented order and docs/components.md's table is what it picks;
- a parameter without a default is a ValueError saying how to pass it, never a raw TypeError;
- the core families' presets are their parts by name (BR, BSVM, MLRL, SSMLRL, MTRL): the same decision
  values within the certificates' bound;
- MLRL's learned covariance composes by name with the logistic and squared-hinge losses, certified, and
  changes the model.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import multilabel_core as mlc
from multilabel_core import CapabilityError, ComposedEstimator
from multilabel_core.composition import auto_table_markdown, solver_order
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.kernels import RBFKernel
from multilabel_core.testing.composition import DEFAULT_PARTS, composition_matrix, summarize

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def small():
    data = make_correlated_multilabel(n_samples=80, random_state=0)
    return np.asarray(data.X), np.asarray(data.Y)


# -- the matrix ------------------------------------------------------------------------------------


def test_the_composition_matrix_has_no_ignored_part_and_no_raw_exception(small):
    X, Y = small
    outcomes = composition_matrix(X, Y, component_params={("regularizer", "low_rank"): {"rank": 2}})
    summary = summarize(outcomes)
    counts = summary["counts"]
    print("composition matrix:", counts, "of", summary["total"], f"in {summary['seconds']:.1f} s")
    n_solvers = len(mlc.list_components("solver")) + 1
    sizes = [len(mlc.list_components(kind)) for kind in ("loss", "regularizer", "relation")]
    assert summary["total"] == int(np.prod(sizes)) * n_solvers * 2
    assert counts["fitted"] > 0 and counts["refused"] > 0
    assert summary["failures"] == [], "\n".join(map(str, summary["failures"][:20]))


def test_a_part_a_solver_would_ignore_is_refused_by_name(small):
    X, Y = small
    # (label_enhancement is not here: it feeds a generic solver its enhanced labels instead.)
    for relation in ("concept_network", "privileged_labels"):
        with pytest.raises(CapabilityError, match=r"LBFGSSolver would ignore the relation \w+: it does not read"):
            ComposedEstimator(relation=relation, solver="lbfgs").fit(X, Y)
    with pytest.raises(CapabilityError, match="LBFGSSolver solves for a fixed label relation, but LearnedCovariance"):
        ComposedEstimator(relation="learned_covariance", solver="lbfgs").fit(X, Y)


def test_a_parameter_without_a_default_says_how_to_pass_it(small):
    X, Y = small
    with pytest.raises(ValueError, match=r"regularizer 'low_rank' needs rank, which has no default.*regularizer_params"):
        ComposedEstimator(regularizer="low_rank").fit(X, Y)
    with pytest.raises(ValueError, match="regularizer 'low_rank' needs rank"):
        mlc.make_component("regularizer", "low_rank")


def test_settings_beside_an_object_and_bad_params_are_refused(small):
    X, Y = small
    with pytest.raises(ValueError, match="cannot be combined with a loss object"):
        ComposedEstimator(loss=mlc.Hinge(), loss_params={"x": 1}).fit(X, Y)
    with pytest.raises(ValueError, match="kernel_params must be a dict"):
        ComposedEstimator(kernel_params=[1]).fit(X, Y)
    with pytest.raises(ValueError, match="inner='lbfgs' names a model-step solver, but solver 'cd' has none"):
        ComposedEstimator(solver="cd", inner="lbfgs").fit(X, Y)
    with pytest.raises(ValueError, match="gamma is given twice"):
        ComposedEstimator(kernel="rbf", gamma=0.1, kernel_params={"gamma": 0.2}).fit(X, Y)


# -- solver="auto" -----------------------------------------------------------------------------------


def test_auto_tries_the_solvers_in_the_documented_order():
    order = solver_order()
    assert order[:1] == ["cd"] and order.index("smo") < order.index("lbfgs") < order.index("alternating")
    text = (ROOT / "docs" / "components.md").read_text(encoding="utf-8")
    documented = re.findall(r"`(\w+)` (\d+)", text.split("## Composing parts", 1)[1].split("```", 1)[0])
    assert [name for name, _ in sorted(documented, key=lambda item: int(item[1]))] == order


@pytest.mark.parametrize(
    "parts, chosen",
    [
        ({}, "cd"),
        ({"loss": "hinge", "kernel": "rbf", "regularizer": "label_covariance"}, "cd"),
        ({"loss": "logistic"}, "lbfgs"),
        ({"loss": "hinge", "regularizer": "label_covariance", "relation": "learned_covariance", "kernel": "rbf"},
         "alternating(inner=smo)"),
        ({"loss": "logistic", "regularizer": "label_covariance", "relation": "learned_covariance"},
         "alternating(inner=lbfgs)"),
    ],
)  # fmt: skip
def test_auto_picks_the_first_solver_that_takes_the_parts(small, parts, chosen):
    X, Y = small
    model = ComposedEstimator(**parts).fit(X, Y)
    assert model.solver_name_ == chosen
    assert all(c.converged for c in model.step_certificates_)
    assert model.choose_solver(X, Y).name == chosen.split("(")[0]


def test_auto_passes_over_solvers_without_the_settings_asked(small):
    X, Y = small
    # cd has no "shrinking"-free variant of this setting; lbfgs has no shrinking at all: auto must not drop it.
    model = ComposedEstimator(solver_params={"shrinking": False}).fit(X, Y)
    assert model.solver_name_ == "cd" and model.parts_["solver"].shrinking is False
    with pytest.raises(CapabilityError, match="lbfgs: takes no shrinking"):
        ComposedEstimator(loss="logistic", solver_params={"shrinking": False}).fit(X, Y)


def test_the_docs_table_is_what_auto_picks():
    text = (ROOT / "docs" / "components.md").read_text(encoding="utf-8")
    documented = text.split("<!-- auto-table -->\n", 1)[1].split("\n<!-- /auto-table -->", 1)[0]
    expected = auto_table_markdown()
    assert documented == expected, "docs/components.md's auto table should read:\n" + expected


# -- the core families by name ---------------------------------------------------------------------


def weight_bound(*models, kernel_diagonal) -> float:
    """|t_a(x) - t_b(x)| <= sqrt(k(x, x) + 1) (sqrt(2 gap_a) + sqrt(2 gap_b)) for fits of one problem whose
    regulariser is 1-strongly convex in (W, b) (||W - W*||^2 <= 2 gap for such a primal), plus rounding."""
    gaps = [max(float(m.step_certificates_[-1].gap), 0.0) for m in models]
    return float(np.sqrt(np.max(kernel_diagonal) + 1.0) * sum(np.sqrt(2.0 * g) for g in gaps)) + 1e-9


def assert_same_model(preset, composed, X, kernel_diagonal):
    a, b = preset.decision_function(X), composed.decision_function(X)
    bound = weight_bound(preset, composed, kernel_diagonal=kernel_diagonal)
    assert np.abs(a - b).max() <= bound * max(1.0, np.abs(a).max()), (np.abs(a - b).max(), bound)
    for role in ("loss", "regularizer", "relation"):
        assert type(preset.parts_[role]) is type(composed.parts_[role]), role


def test_br_is_its_parts_by_name(small):
    X, Y = small
    preset = mlc.make_method("br", C=0.5, tol=1e-8).fit(X, Y)
    composed = ComposedEstimator(
        loss="squared_hinge", regularizer="frobenius", relation="independent", kernel="linear", solver="cd",
        C=0.5, tol=1e-8,
    ).fit(X, Y)  # fmt: skip
    assert_same_model(preset, composed, X, kernel_diagonal=np.einsum("ij,ij->i", X, X))


@pytest.mark.parametrize("name", ["bsvm", "mlrl", "mtrl"])
def test_the_mlrl_family_is_its_parts_by_name(small, name):
    X, Y = small
    n, lam = X.shape[0], 1e-2
    if name == "mtrl":
        preset = mlc.make_method("mtrl", lam1=lam, lam2=2 * lam, smo_tol=1e-6).fit(X, Y)
        extra = dict(regularizer="frobenius_label_covariance", regularizer_params={"mu": 2.0},
                     relation="learned_covariance", solver="alternating", tol=1e-4, max_iter=100)
    elif name == "mlrl":
        preset = mlc.make_method("mlrl", lam=lam, smo_tol=1e-6).fit(X, Y)
        extra = dict(regularizer="label_covariance", relation="learned_covariance", solver="alternating",
                     tol=1e-4, max_iter=100)
    else:
        preset = mlc.make_method("bsvm", lam=lam, tol=1e-6).fit(X, Y)
        extra = dict(regularizer="frobenius", relation="independent", solver="smo", tol=1e-6)
    inner = {"inner": mlc.make_component("solver", "smo", tol=1e-6)} if extra["solver"] == "alternating" else {}
    composed = ComposedEstimator(loss="hinge", kernel="rbf", C=1.0 / (n * lam), **extra, **inner).fit(X, Y)
    assert_same_model(preset, composed, X, kernel_diagonal=np.ones(n))
    if name != "bsvm":
        np.testing.assert_allclose(composed.label_covariance_, preset.label_covariance_, atol=1e-6)


def test_ssmlrl_is_its_parts_with_the_data_dependent_kernel_as_an_object(small):
    """SSMLRL's kernel k' (eq. 22) is built from the unlabelled rows, so it is given as an object."""
    from multilabel_core_plugins.mlrl.kernel import DataDependentKernel, stack_rows

    X, Y = small
    labelled, unlabelled = slice(0, 50), slice(50, None)
    lam1, lam2 = 1e-2, 1e-2
    preset = mlc.make_method("ssmlrl", lam1=lam1, lam2=lam2, smo_tol=1e-6).fit(
        X[labelled], Y[labelled], X_unlabeled=X[unlabelled]
    )
    kernel = DataDependentKernel(RBFKernel().resolve(stack_rows(X[labelled], X[unlabelled])), X[unlabelled], lam1 / lam2)
    composed = ComposedEstimator(
        loss="hinge", regularizer="label_covariance", relation="learned_covariance", kernel=kernel,
        solver="alternating", inner=mlc.make_component("solver", "smo", tol=1e-6), C=1.0 / (50 * lam1), tol=1e-4,
        max_iter=100,
    ).fit(X[labelled], Y[labelled])  # fmt: skip
    assert_same_model(preset, composed, X, kernel_diagonal=np.ones(len(X)))


# -- the learned covariance with other losses --------------------------------------------------------


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_the_learned_covariance_composes_by_name_with_smooth_losses(small, loss):
    X, Y = small
    learned = ComposedEstimator(
        loss=loss, regularizer="label_covariance", relation="learned_covariance", solver="alternating", inner="lbfgs"
    ).fit(X, Y)
    assert learned.solver_name_ == "alternating(inner=lbfgs)"
    assert all(c.converged for c in learned.step_certificates_) and learned.certificate_.relative_gap < 1e-6
    np.testing.assert_allclose(np.trace(learned.label_covariance_), 1.0)
    assert np.all(np.linalg.eigvalsh(learned.label_covariance_) > 0)
    fixed = ComposedEstimator(loss=loss, regularizer="label_covariance", relation="independent").fit(X, Y)
    assert np.abs(learned.decision_function(X) - fixed.decision_function(X)).max() > 1e-3
    auto = ComposedEstimator(loss=loss, regularizer="label_covariance", relation="learned_covariance").fit(X, Y)
    np.testing.assert_allclose(auto.decision_function(X), learned.decision_function(X), rtol=1e-10, atol=1e-10)


def test_the_relation_step_sees_the_weights_the_regulariser_holds(small):
    """L-BFGS regularises the bias with W: the relation update is computed from [W; b], so the joint
    objective decreases at every accepted step (before, the alternation stopped after one step)."""
    X, Y = small
    model = ComposedEstimator(loss="logistic", regularizer="label_covariance", relation="learned_covariance").fit(X, Y)
    history = np.asarray(model.objective_history_)
    assert len(history) > 2 and np.all(np.diff(history) <= 1e-9 * np.abs(history[:-1]))


def test_defaults_are_the_documented_ones():
    model = ComposedEstimator()
    assert model.solver == "auto" and model.inner == "auto"
    assert {role: getattr(model, role) for role in DEFAULT_PARTS} == DEFAULT_PARTS
