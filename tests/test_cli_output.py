"""What the command line prints besides results: progress lines for a redirected run, and warnings
gathered into summary lines instead of one Python warning per fit."""

from __future__ import annotations

import io
import re
import time

import pytest

from multilabel_core._progress import ProgressLines, progress_bar
from multilabel_core.cli import main, warning_lines

#: What Python's default warning display looks like: "path.py:123: SomeWarning: message".
PYTHON_WARNING = re.compile(r"\.py:\d+: \w*Warning")


def test_progress_lines_come_on_a_timer_and_end_with_a_summary():
    stream = io.StringIO()
    with ProgressLines(4, "compare", "fit", interval=0.05, stream=stream) as bar:
        bar.set_postfix_str("br on emotions")
        bar.update(3)
        time.sleep(0.3)  # no update meanwhile: the lines still come (a long fit is running)
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 3
    assert all(line == "compare: 3/4 fits done, 0:00:00 elapsed, about 0:00:00 left, now br on emotions"
               for line in lines[:-1])  # fmt: skip
    assert lines[-1] == "compare: 3/4 fits done in 0:00:00"


@pytest.mark.parametrize(
    "done, total, elapsed, left",
    [(0, 10, 30.0, "time left not known before the first fit ends"), (1, 4, 20.0, "about 0:01:00 left"),
     (3, 4, 3600.0, "about 0:20:00 left"), (10, 40, 125.0, "about 0:06:15 left"), (4, 4, 50.0, "0:00:00 left")],
)
def test_progress_lines_estimate_the_time_left_at_the_mean_rate(monkeypatch, done, total, elapsed, left):
    """Without a terminal the lines say how long the rest takes: (total - done) fits at elapsed / done each."""
    from multilabel_core import _progress

    with ProgressLines(total, "compare", "fit", interval=60, stream=io.StringIO()) as bar:
        bar.update(done)
        start = bar._start
        monkeypatch.setattr(_progress.time, "monotonic", lambda: start + elapsed)
        assert bar.line() == f"compare: {done}/{total} fits done, {_progress._clock(elapsed)} elapsed, {left}"
        monkeypatch.undo()


def test_the_estimate_weighs_each_fit_by_its_dataset_cost(monkeypatch):
    """Ten cheap fits done in 10 s, ten fits ten times as costly to come: 100 s left, not 10 s."""
    from multilabel_core import _progress

    with ProgressLines(20, "compare", "fit", interval=60, stream=io.StringIO()) as bar:
        bar.work.plan({"small": (10, 1.0), "large": (10, 10.0)})
        bar.work.start("small")
        bar.update(10)
        bar.work.start("large")
        start = bar._start
        monkeypatch.setattr(_progress.time, "monotonic", lambda: start + 10.0)
        assert bar.line() == "compare: 10/20 fits done, 0:00:10 elapsed, about 0:01:40 left"
        bar.update(5)  # half the large fits: 60 work units done in 10 s, of 160 once the grid grows
        bar.work.grow(5)  # an extended grid: five more large fits
        assert bar.line() == "compare: 15/20 fits done, 0:00:10 elapsed, about 0:00:16 left"
        monkeypatch.undo()
    assert _progress.fit_cost(2417, 14, 2417 * 103) / _progress.fit_cost(593, 6, 593 * 72) == pytest.approx(
        2417 * 14 * (2417 + 103) / (593 * 6 * (593 + 72))
    )


def test_progress_bar_at_a_terminal_shows_elapsed_and_the_weighted_time_left(monkeypatch):
    stream = io.StringIO()
    with progress_bar(True, 20, "compare", "fit") as bar:  # the runner's bar at a terminal
        bar.fp = stream
        bar.work.plan({"small": (10, 1.0), "large": (10, 10.0)})
        bar.work.start("small")
        bar.update(10)
        bar.work.start("large")
        values = bar.format_dict
        left = (values["total"] - values["n"]) / values["rate"]
        assert left == pytest.approx(values["elapsed"] * 10.0)  # 100 units left, 10 done
        text = bar.format_meter(**values)
    assert re.search(r"10/20 \[\d\d:\d\d elapsed<\d\d:\d\d left\]", text), text


def test_progress_lines_leave_out_the_summary_when_the_work_failed():
    stream = io.StringIO()
    with pytest.raises(RuntimeError), ProgressLines(2, "compare", "fit", interval=60, stream=stream):
        raise RuntimeError("a fit blew up")
    assert stream.getvalue() == ""


def test_progress_bar_refuses_an_unknown_mode():
    with pytest.raises(ValueError, match="progress must be"):
        progress_bar("sometimes", 3, "compare", "fit")
    with pytest.raises(ValueError, match="interval"):
        ProgressLines(3, interval=0)


def test_warning_lines_count_per_method_and_quote_the_first():
    found = [
        ("mlfs", "ConvergenceWarning: CuttingPlaneSolver did not converge: gap 0.01"),
        ("mlfs", "ConvergenceWarning: CuttingPlaneSolver did not converge: gap 0.02"),
        ("prml", "ConvergenceWarning: PrivilegedCDSolver did not converge: gap 0.03"),
        ("concept_network", "ClippingWarning: 3 weights clipped"),
    ]
    assert warning_lines(found) == [
        "3 fit(s) stopped short of convergence (mlfs 2, prml 1); the first: CuttingPlaneSolver did not converge: "
        "gap 0.01",
        "1 other warning(s) (ClippingWarning from concept_network 1); the first: 3 weights clipped",
    ]
    assert warning_lines([]) == ["warnings: none"]


def test_a_fit_that_stops_short_is_one_summary_line_not_a_python_warning(capsys, tmp_path):
    code = main(["fit", "br", "synthetic", "--out", str(tmp_path / "br.mlcore"), "--param", "max_iter=1"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert not PYTHON_WARNING.search(err), err
    assert err.startswith("mlcore: 1 fit(s) stopped short of convergence in this command (br 1); the first: ")


def test_a_redirected_compare_prints_progress_lines_and_quiet_silences_them(capsys, tmp_path):
    argv = ["compare", "br", "--data", "synthetic", "--protocol-param", "n_splits=2", "--grid", "C=1.0",
            "--no-plots"]  # fmt: skip
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    out, err = capsys.readouterr()
    assert re.search(r"^compare: 2/2 fits done in \d:\d\d:\d\d$", err, flags=re.M), err
    assert not PYTHON_WARNING.search(err), err
    assert re.search(r"^(warnings: none|\d+ fit\(s\) stopped short of convergence)", out, flags=re.M), out
    assert main([*argv, "--out", str(tmp_path / "b"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_methods_wraps_descriptions_parts_and_citations_to_the_width(capsys):
    import multilabel_core as mlc
    from multilabel_core.cli import method_lines

    specs = mlc.list_methods()
    lines = method_lines(specs, 72)
    assert max(len(line) for line in lines) <= 72
    assert sum(not line.startswith(" ") for line in lines) == len(specs)  # one heading line per method
    assert any(line.strip().startswith("cites: ") for line in lines)
    with pytest.raises(SystemExit):
        main(["methods", "--seed", "1"])  # options that mean nothing for a listing are not offered


def test_a_mistyped_dataset_name_suggests_the_close_names_that_exist(capsys, tmp_path):
    (tmp_path / "emotions.arff").write_text("@relation x\n")  # only its name is read
    code = main(["describe", "emotion", "--data-home", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "Did you mean 'emotions' (data_home)" in err
    assert "fetch_dataset('emotion')" not in err  # no advice to fetch a dataset that is not registered
