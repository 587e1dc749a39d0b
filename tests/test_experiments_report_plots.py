"""The report's PNG figures: written, readable, drawn from the right records; a clear error without matplotlib."""

import builtins
import json

import numpy as np
import pytest

from multilabel_core.certificate import GAP_RTOL, Certificate
from multilabel_core.experiments import plots as plots_module
from multilabel_core.experiments.plots import (
    PLOT_EXTRA,
    matplotlib_available,
    plot_concept_graph,
    plot_convergence,
    plot_label_correlation,
    plot_metric_vs_param,
    plots_from_records,
)
from multilabel_core.experiments.report import write_report

imread = pytest.importorskip("matplotlib.image").imread

LABELS = ["amazed-surprised", "happy-pleased", "relaxing-calm", "quiet-still"]
CORRELATION = np.array(
    [[1.0, 0.0, -0.73, -0.34], [0.0, 1.0, 0.0, 0.0], [-0.73, 0.0, 1.0, 0.27], [-0.34, 0.0, 0.27, 1.0]]
)


def certificates(split, steps):
    return [
        Certificate.from_objectives(1.0 + 2.0 ** -k, 1.0 - 10.0 ** -(k + split), kkt_violation=0.0, n_iter=10,
                                    time=0.01, converged=True, solver="smo").as_dict()
        for k in range(steps)
    ]  # fmt: skip


def make_record(method, dataset, split, *, status="ok"):
    """A record as the runner writes it; mlrl learns a relation over three outer steps, br solves once."""
    search = [
        {"params": {"C": C, "kernel": "rbf"}, "score": 0.8 - 0.01 * abs(np.log10(C)), "status": "ok", "error": None}
        for C in (0.01, 1.0, 100.0)
    ]
    search.append({"params": {"C": 10.0, "kernel": "rbf"}, "score": None, "status": "failed", "error": "ValueError: x"})
    return {
        "config_hash": "c" * 64, "method": method, "dataset": dataset, "protocol": "kfold", "split": split,
        "status": status, "error": None if status == "ok" else "RuntimeError: diverged", "params": {"C": 1.0},
        "search": search, "selection_metric": "average_precision",
        "metrics": {"average_precision": 0.8 - 0.01 * split} if status == "ok" else {},
        "fit_time": 0.1, "predict_time": 0.01, "n_train": 50, "n_test": 10, "n_labels": 4, "label_names": LABELS,
        "certificates": certificates(split, 3 if method == "mlrl" else 1) if status == "ok" else [],
        "converged": True if status == "ok" else None,
        "label_correlation": CORRELATION.tolist() if method == "mlrl" and status == "ok" else None,
        "warnings": [],
    }  # fmt: skip


def records():
    run = [make_record(m, "emotions", k) for m in ("mlrl", "br") for k in range(3)]
    run.append(make_record("mlrl", "emotions", 3, status="failed"))
    return run


def assert_png(path):
    assert path.suffix == ".png" and path.is_file()
    image = imread(path)
    assert image.ndim == 3 and image.shape[0] > 0 and image.shape[1] > 0 and image.shape[2] in (3, 4)
    assert image.std() > 0  # something is drawn


# ---------------------------------------------------------------- single figures
def test_label_correlation_heatmap(tmp_path):
    assert_png(plot_label_correlation(CORRELATION, LABELS, tmp_path / "corr.png", "emotions"))
    assert_png(plot_label_correlation(-CORRELATION, None, tmp_path / "sub" / "unnamed.png"))  # L1..L4, folder made


@pytest.mark.parametrize(
    "matrix, names, message",
    [
        (np.ones((2, 3)), None, "square"),
        (np.full((2, 2), np.nan), None, "NaN"),
        (np.eye(2), ["only one"], "1 label names for a 2 x 2"),
    ],
)
def test_label_correlation_rejects_bad_input(tmp_path, matrix, names, message):
    with pytest.raises(ValueError, match=message):
        plot_label_correlation(matrix, names, tmp_path / "x.png")


def test_convergence_from_certificate_objects_dicts_and_without_dual(tmp_path):
    objects = [
        Certificate.from_objectives(2.0 / (k + 1), 2.0 / (k + 1) - 10.0**-k, kkt_violation=0.0, n_iter=5,
                                    time=0.1, converged=k == 3, solver="smo")
        for k in range(4)
    ]  # fmt: skip
    assert_png(plot_convergence(objects, tmp_path / "objects.png"))
    assert_png(plot_convergence({"split 0": certificates(0, 3), "split 1": certificates(1, 5)}, tmp_path / "two.png"))
    no_dual = [c | {"dual": None, "gap": None, "relative_gap": None} for c in certificates(0, 3)]
    assert_png(plot_convergence(no_dual, tmp_path / "no_dual.png"))
    with pytest.raises(ValueError, match="at least one certificate"):
        plot_convergence([], tmp_path / "empty.png")


def convergence_panels(figure):
    """``(gap axes, primal axes)`` of a convergence figure, and the drawn curves of each (no tolerance line)."""
    gap_ax, primal_ax = figure.axes[:2]
    curves = [line for line in gap_ax.get_lines() if line.get_linestyle() != "--"]
    return gap_ax, primal_ax, curves


def test_convergence_draws_the_relative_gap_of_every_split_on_one_log_scale_with_the_tolerance(tmp_path, monkeypatch):
    figures = drawn_figure(monkeypatch)
    # Two splits whose objectives differ by 1e4: absolute gaps 20 and 0.02 are the same relative gap 1e-4.
    small = [Certificate.from_objectives(2e5 - k, 2e5 - k - 20.0, kkt_violation=0.0, n_iter=5, time=0.1,
                                         converged=True, solver="smo") for k in range(3)]
    large = [Certificate.from_objectives(20.0 - k, 20.0 - k - 0.002 * (20.0 - k), kkt_violation=0.0, n_iter=5,
                                         time=0.1, converged=True, solver="smo") for k in range(3)]  # fmt: skip
    old_record = [c.as_dict() for c in small]
    for fields in old_record:
        del fields["relative_gap"]  # records written before relative_gap was stored: computed from gap and primal
    assert_png(plot_convergence({"split 0": small, "split 1": large, "split 2": old_record}, tmp_path / "c.png"))
    gap_ax, primal_ax, curves = convergence_panels(figures[0])
    assert gap_ax.get_yscale() == "log" and "relative duality gap" in gap_ax.get_ylabel()
    np.testing.assert_allclose(curves[0].get_ydata(), [20.0 / (2e5 - k) for k in range(3)])
    np.testing.assert_allclose(curves[1].get_ydata(), [0.002] * 3)
    np.testing.assert_allclose(curves[2].get_ydata(), curves[0].get_ydata())
    tolerance = [line for line in gap_ax.get_lines() if line.get_linestyle() == "--"]
    assert len(tolerance) == 1 and list(tolerance[0].get_ydata()) == [GAP_RTOL, GAP_RTOL]
    low, high = gap_ax.get_ylim()
    assert low < 20.0 / 2e5 and high > 0.002  # every split and the tolerance within the one scale
    # The primal relative to its last value: (P_k - P_last) / max(1, |P_last|), 0 at the end.
    np.testing.assert_allclose(primal_ax.get_lines()[0].get_ydata(), [2.0 / (2e5 - 2), 1.0 / (2e5 - 2), 0.0])
    np.testing.assert_allclose(primal_ax.get_lines()[1].get_ydata(), [2.0 / 18.0, 1.0 / 18.0, 0.0])


def test_convergence_without_a_positive_gap_still_shows_the_tolerance(tmp_path, monkeypatch):
    figures = drawn_figure(monkeypatch)
    no_dual = [c | {"dual": None, "gap": None, "relative_gap": None} for c in certificates(0, 3)]
    assert_png(plot_convergence(no_dual, tmp_path / "no_dual.png", tol=1e-4))
    gap_ax, _, curves = convergence_panels(figures[0])
    assert all(len(line.get_ydata()) == 0 for line in curves)
    assert [t.get_text() for t in gap_ax.texts] == ["no positive finite gap"]
    assert [list(line.get_ydata()) for line in gap_ax.get_lines() if line.get_linestyle() == "--"] == [[1e-4, 1e-4]]
    with pytest.raises(ValueError, match="tol"):
        plot_convergence(no_dual, tmp_path / "x.png", tol=0.0)


def test_search_curve_is_the_mean_over_splits_of_the_best_score_per_value(tmp_path, monkeypatch):
    run = records()
    for record in run:  # a second parameter: the curve along C keeps the best gamma per split
        record["search"] = [
            {"params": {"C": C, "gamma": g}, "score": 0.5 + 0.1 * g - 0.01 * C + 0.001 * record["split"], "status": "ok"}
            for C in (1.0, 10.0) for g in (0.1, 1.0)
        ]  # fmt: skip
    drawn = {}
    original = plots_module._search_curve

    def spy(group, param, metric):
        curve, failed = original(group, param, metric)
        drawn[group[0]["method"]] = curve
        return curve, failed

    monkeypatch.setattr(plots_module, "_search_curve", spy)
    assert_png(plot_metric_vs_param(run, "C", "average_precision", tmp_path / "C.png"))
    # best over gamma is gamma = 1: 0.6 - 0.01 C + 0.001 split, for the splits 0, 1, 2 (and 3 for mlrl)
    assert list(drawn["br"]) == [1.0, 10.0]
    assert drawn["br"][1.0] == pytest.approx([0.59, 0.591, 0.592])
    assert drawn["br"][10.0] == pytest.approx([0.5, 0.501, 0.502])
    assert drawn["mlrl"][1.0] == pytest.approx([0.59, 0.591, 0.592, 0.593])  # a failed fit's search still counts


def test_search_curve_of_a_lower_is_better_metric_keeps_the_lowest(tmp_path):
    run = [make_record("br", "scene", k) for k in range(2)]
    for record in run:
        record["selection_metric"] = "hamming_loss"
        record["search"] = [{"params": {"C": 1.0, "gamma": g}, "score": g, "status": "ok"} for g in (0.2, 0.1)]
        record["search"] += [{"params": {"C": 2.0, "gamma": 0.1}, "score": 0.3, "status": "ok"}]
    assert plots_module._search_curve(run, "C", "hamming_loss") == ({1.0: [0.1, 0.1], 2.0: [0.3, 0.3]}, {})
    assert_png(plot_metric_vs_param(run, "C", "hamming_loss", tmp_path / "hl.png"))


def drawn_figure(monkeypatch):
    """Keep the figures that are saved, to look at what was drawn."""
    figures = []
    original = plots_module._save

    def keep(figure, path):
        figures.append(figure)
        return original(figure, path)

    monkeypatch.setattr(plots_module, "_save", keep)
    return figures


def failure_marks(figure):
    """(x values, label) of the red x marks of the figure's axes."""
    ax = figure.axes[0]
    return [
        (list(line.get_xdata()), line.get_label())
        for line in ax.get_lines()
        if line.get_marker() == "x" and line.get_color() == "red"
    ]


def test_search_curve_marks_the_failed_grid_points_on_the_axis(tmp_path, monkeypatch):
    figures = drawn_figure(monkeypatch)
    run = records()  # every split of both methods: C = 10 failed
    run[0]["search"][0] |= {"status": "failed", "score": None, "error": "ValueError: y"}  # mlrl split 0: C = 0.01 too
    assert_png(plot_metric_vs_param(run, "C", "average_precision", tmp_path / "C.png"))
    marks = dict((label, x) for x, label in failure_marks(figures[0]))
    assert marks == {"failed grid point (mlrl)": [0.01, 10.0], "failed grid point (br)": [10.0]}
    counts = sorted(text.get_text() for text in figures[0].axes[0].texts)
    assert counts == ["1", "3", "4"]  # mlrl: C = 0.01 in 1 split, C = 10 in 4; br: C = 10 in 3


def test_a_search_where_every_point_failed_is_still_drawn(tmp_path, monkeypatch):
    figures = drawn_figure(monkeypatch)
    run = [make_record("br", "emotions", k, status="failed") for k in range(2)]
    for record in run:
        record["search"] = [
            {"params": {"C": C}, "score": None, "status": "failed", "error": "ValueError: z"} for C in (0.1, 1.0, 10.0)
        ]
    assert_png(plot_metric_vs_param(run, "C", "average_precision", tmp_path / "C.png"))
    assert failure_marks(figures[0]) == [([0.1, 1.0, 10.0], "failed grid point (br)")]


@pytest.mark.parametrize(
    "param, metric, message",
    [("lambda", "average_precision", "no search entry"), ("C", "hamming_loss", "no search entry"),
     ("kernel", "average_precision", "non-numeric"), ("C", "accuracy", "unknown metric")],
)  # fmt: skip
def test_search_curve_rejects_what_it_cannot_draw(tmp_path, param, metric, message):
    with pytest.raises(ValueError, match=message):
        plot_metric_vs_param(records(), param, metric, tmp_path / "x.png")


# -------------------------------------------------------------------- a whole run
def test_plots_from_records_draws_what_the_records_support(tmp_path):
    written = plots_from_records(records(), tmp_path)
    assert [p.name for p in written] == [
        "correlation_emotions_mlrl.png",  # br learns no relation
        "convergence_emotions_mlrl.png",  # br has one certificate per fit: no curve
        "search_emotions_C_average_precision.png",  # "kernel" takes one non-numeric value
    ]
    for path in written:
        assert_png(path)


def test_dataset_paths_become_safe_file_names(tmp_path):
    run = [make_record("mlrl", "/data/mulan/emotions.arff", k) for k in range(2)]
    names = [p.name for p in plots_from_records(run, tmp_path)]
    assert names[0] == "correlation_data_mulan_emotions.arff_mlrl.png"
    assert all(p.parent == tmp_path for p in tmp_path.iterdir())


def test_report_embeds_its_plots(tmp_path):
    paths = write_report(records(), tmp_path, reference_method="mlrl", plots=True)
    assert [p.parent for p in paths["plots"]] == [tmp_path / "plots"] * 3
    text = paths["report"].read_text()
    for path in paths["plots"]:
        assert f"![{path.stem}](plots/{path.name})" in text
        assert_png(path)
    assert json.loads(paths["summary_json"].read_text())["plots"] == [f"plots/{p.name}" for p in paths["plots"]]


# ------------------------------------------------------------- without matplotlib
@pytest.fixture
def no_matplotlib(monkeypatch):
    real_import = builtins.__import__

    def refuse(name, *args, **kwargs):
        if name.split(".")[0] == "matplotlib":
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)


def test_without_matplotlib_plots_name_the_extra(no_matplotlib, tmp_path):
    assert not matplotlib_available()
    with pytest.raises(ImportError, match=r"plot` extra: pip install 'multilabel-core\[plot\]'"):
        plot_label_correlation(CORRELATION, LABELS, tmp_path / "x.png")
    with pytest.raises(ImportError, match="multilabel-core"):
        write_report(records(), tmp_path, plots=True)
    assert PLOT_EXTRA == "pip install 'multilabel-core[plot]'"


def test_without_matplotlib_the_default_report_has_no_plots(no_matplotlib, tmp_path):
    paths = write_report(records(), tmp_path)
    assert paths["plots"] == [] and "## Plots" not in paths["report"].read_text()
    assert not (tmp_path / "plots").exists()


def test_with_matplotlib_the_default_report_has_plots(tmp_path):
    assert matplotlib_available()
    assert len(write_report(records(), tmp_path)["plots"]) == 3
    assert write_report(records(), tmp_path / "none", plots=False)["plots"] == []


# ------------------------------------------------------------------ concept graphs
STATISTIC = np.array([[0.0, 0.3, 0.01, 0.0], [0.3, 0.0, 0.2, 0.04], [0.01, 0.2, 0.0, 0.06], [0.0, 0.04, 0.06, 0.0]])


class Graph:
    """What a fitted concept_network exposes as ``concept_graph_``."""

    def __init__(self, statistic, threshold=0.05):
        self.statistic, self.threshold = np.asarray(statistic), threshold
        self.adjacency = self.statistic > threshold

    def as_dict(self):
        return {"adjacency": self.adjacency.astype(int).tolist(), "statistic": self.statistic.tolist(),
                "threshold": self.threshold}  # fmt: skip


def graph_records(statistics, thresholds=None):
    thresholds = thresholds or [0.05] * len(statistics)
    return [
        {**make_record("cn", "emotions", k), "label_correlation": None, "certificates": [], "search": [],
         "concept_graph": Graph(statistic, threshold).as_dict()}
        for k, (statistic, threshold) in enumerate(zip(statistics, thresholds))
    ]  # fmt: skip


@pytest.fixture
def drawn_graphs(monkeypatch):
    """The arguments of every plot_concept_graph call of plots_from_records (then drawn for real)."""
    calls = []
    original = plots_module.plot_concept_graph

    def spy(graph, names, path, title=None, **kwargs):
        calls.append({"graph": graph, "names": names, "title": title})
        return original(graph, names, path, title, **kwargs)

    monkeypatch.setattr(plots_module, "plot_concept_graph", spy)
    return calls


def test_concept_graph_heatmap_from_the_object_or_its_dict(tmp_path):
    assert_png(plot_concept_graph(Graph(STATISTIC), LABELS, tmp_path / "object.png"))
    assert_png(plot_concept_graph(Graph(STATISTIC).as_dict(), None, tmp_path / "dict.png", "emotions"))


@pytest.mark.parametrize(
    "graph, names, message",
    [
        ({"statistic": np.zeros((2, 3)), "adjacency": np.zeros((2, 3))}, None, "square"),
        ({"statistic": np.zeros((2, 2)), "adjacency": np.zeros((3, 3))}, None, "adjacency has shape"),
        ({"statistic": np.full((2, 2), 0.7), "adjacency": np.zeros((2, 2))}, None, r"\[0, 1/2\]"),
        ({"statistic": np.full((2, 2), np.nan), "adjacency": np.zeros((2, 2))}, None, "NaN"),
        ({"statistic": np.zeros((2, 2)), "adjacency": np.full((2, 2), 2)}, None, "0/1"),
        ({"statistic": np.zeros((2, 2))}, None, "needs adjacency"),
        (Graph(STATISTIC), ["one"], "1 label names for a 4 x 4"),
    ],
)
def test_concept_graph_rejects_bad_input(tmp_path, graph, names, message):
    with pytest.raises(ValueError, match=message):
        plot_concept_graph(graph, names, tmp_path / "x.png")


def test_one_learned_graph_is_drawn_as_it_is_with_its_threshold(tmp_path, drawn_graphs):
    written = plots_from_records(graph_records([STATISTIC, STATISTIC]), tmp_path)
    assert [p.name for p in written] == ["concept_graph_emotions_cn.png"]
    assert_png(written[0])
    (call,) = drawn_graphs
    np.testing.assert_array_equal(call["graph"]["statistic"], STATISTIC)
    np.testing.assert_array_equal(call["graph"]["adjacency"], STATISTIC > 0.05)
    assert call["names"] == LABELS and call["graph"]["threshold"] == 0.05
    assert call["title"] == "cn on emotions: concept graph (the same in all 2 splits), 3 edges (outlined), threshold P0 = 0.05"


def test_splits_that_differ_give_the_mean_statistic_and_the_edges_of_at_least_half(tmp_path, drawn_graphs):
    second = STATISTIC.copy()
    second[1, 3] = second[3, 1] = 0.1  # an edge in 2 of 3 splits: kept
    third = STATISTIC.copy()
    third[0, 2] = third[2, 0] = 0.2  # an edge in 1 of 3 splits: not kept
    plots_from_records(graph_records([STATISTIC, second, third], thresholds=[0.05, 0.05, 0.02]), tmp_path)
    (call,) = drawn_graphs
    np.testing.assert_allclose(call["graph"]["statistic"], (STATISTIC + second + third) / 3, rtol=1e-12)
    edges = {tuple(e) for e in np.argwhere(np.triu(call["graph"]["adjacency"], 1))}
    # (2, 3) has 0.06: an edge at threshold 0.05 and 0.02 alike; (1, 3) at 0.1 in two splits and 0.04 in one.
    assert edges == {(0, 1), (1, 2), (2, 3), (1, 3)}
    assert "statistic averaged over 3 splits" in call["title"] and "present in at least half of them" in call["title"]
    assert "thresholds P0 = 0.02, 0.05 (chosen per split)" in call["title"]


def test_labels_predicted_constant_in_every_split_are_left_out_and_named(tmp_path, drawn_graphs):
    run = graph_records([STATISTIC, STATISTIC])
    for record in run:  # label 3 predicted constant: null row and column, no edge (runner._concept_graph)
        graph = record["concept_graph"]
        graph["statistic"] = [[None if 3 in (i, j) else v for j, v in enumerate(row)]
                              for i, row in enumerate(graph["statistic"])]  # fmt: skip
        graph["adjacency"] = [[0 if 3 in (i, j) else v for j, v in enumerate(row)]
                              for i, row in enumerate(graph["adjacency"])]  # fmt: skip
    written = plots_from_records(run, tmp_path)
    assert_png(written[0])
    (call,) = drawn_graphs
    assert call["names"] == LABELS[:3] and call["graph"]["statistic"].shape == (3, 3)
    assert call["title"].endswith("; left out, predicted constant in every split: quiet-still")


def test_a_learned_correlation_with_labels_predicted_constant_is_still_drawn(tmp_path):
    run = [make_record("mlrl", "emotions", k) for k in range(2)]
    run[0]["label_correlation"] = [[None if 3 in (i, j) else v for j, v in enumerate(row)]
                                   for i, row in enumerate(CORRELATION.tolist())]  # fmt: skip
    written = plots_from_records(run, tmp_path)
    assert written[0].name == "correlation_emotions_mlrl.png"
    assert_png(written[0])
