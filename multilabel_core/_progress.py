"""Progress of long runs: a tqdm bar for a person at a terminal, timed lines for a log.

A redirected run (``mlcore compare ... 2> log``, a batch job) gets no bar -- tqdm's carriage
returns make a log unreadable -- but must not be silent for minutes either.  :class:`ProgressLines`
writes one line every ``interval`` seconds (fits done / total, elapsed time, an estimate of the time
left, what runs now), from a timer thread, so the lines keep coming while one long fit runs, and a last
line at the end.  The tqdm bar shows the same two times (``elapsed<left``).

The time left is the work not done at the mean rate so far, ``elapsed * (work left) / (work done)``.  Fits
differ in cost: a fit on yeast (2417 rows, 14 labels) took about 35 times one on emotions (593 rows, 6
labels) in the README's compare, so counting fits alone, the estimate made on the first dataset said 3
minutes for a run that took over 40.  The runner therefore weighs each fit by a cost of its dataset
(:meth:`WorkEstimate.plan`; :func:`fit_cost`: rows x labels x (rows + stored values per row), the pass a
kernel or neighbour method makes over pairs of rows plus a linear method's over the features), and the
estimate counts that work.  The methods of one dataset still differ (a kernel SVM against a k-NN), and so
does a large C from a small one, so the estimate moves as the run goes on: a guide, not a promise.  Before
the first fit ends there is no rate, and the line says so.
"""

from __future__ import annotations

import sys
import threading
import time

from tqdm.auto import tqdm

__all__ = ["BAR_FORMAT", "DEFAULT_INTERVAL", "ProgressLines", "WorkEstimate", "fit_cost", "progress_bar"]

#: Seconds between two progress lines.
DEFAULT_INTERVAL = 10.0

#: The bar's layout: tqdm's default with its two times named, so that "0:20<0:40" reads as elapsed and left
#: (and without tqdm's rate, which the weighted estimate of the time left replaces).
BAR_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed} elapsed<{remaining} left{postfix}]"


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def fit_cost(n_rows: int, n_labels: int, n_stored: int) -> float:
    """A fit's cost on a dataset, in arbitrary units: rows x labels x (rows + stored values per row)."""
    return float(n_rows) * n_labels * (n_rows + n_stored / max(n_rows, 1))


class WorkEstimate:
    """The time left, from the work done and planned, each fit weighed by the cost of its part (dataset).

    Without a plan every fit weighs one, and the estimate is the fits left at the mean time per fit.
    """

    def __init__(self):
        self.costs: dict = {}
        self.cost = 1.0
        self.work_total: float | None = None
        self.work_done = 0.0

    def plan(self, parts: dict) -> None:
        """``{part: (fits, cost of one)}``, the work to come; :meth:`start` says which part runs."""
        self.costs = {name: float(cost) for name, (_, cost) in parts.items()}
        self.work_total = sum(n * float(cost) for n, cost in parts.values())

    def start(self, part) -> None:
        """The fits counted from now on are ``part``'s."""
        self.cost = self.costs.get(part, 1.0)

    def count(self, n: int) -> None:
        self.work_done += n * self.cost

    def grow(self, n: int) -> None:
        """``n`` fits more than planned, of the running part (an extended grid's)."""
        if self.work_total is not None:
            self.work_total += n * self.cost

    def seconds_left(self, elapsed: float, done: int, total: int) -> float | None:
        """The estimate (None before the first fit ends)."""
        if done <= 0:
            return None
        if self.work_total is None or self.work_done <= 0:
            return elapsed * max(total - done, 0) / done
        return elapsed * max(self.work_total - self.work_done, 0.0) / self.work_done


def _left(seconds: float | None, done: int, total: int, unit: str) -> str:
    """The time-left part of a progress line."""
    if seconds is None:
        return f"time left not known before the first {unit} ends"
    if done >= total:
        return "0:00:00 left"
    return f"about {_clock(seconds)} left"


class ProgressLines:
    """The part of tqdm's interface the runner uses (``update``, ``set_postfix_str``, a context
    manager), printing a line every ``interval`` seconds to ``stream`` instead of a bar.

    Parameters
    ----------
    total : int
        Units of work (fits) expected.
    desc : str
        What runs, at the start of each line ("compare").
    unit : str
        The unit's name ("fit").
    interval : float
        Seconds between lines.
    stream : file
        Where the lines go (default ``sys.stderr``, looked up when each line is written).
    """

    def __init__(self, total: int, desc: str = "", unit: str = "it", interval: float = DEFAULT_INTERVAL, stream=None):
        if not interval > 0:
            raise ValueError(f"interval must be a positive number of seconds, got {interval!r}")
        self.total, self.desc, self.unit, self.interval = int(total), desc, unit, float(interval)
        self.stream = stream
        self.n = 0
        self.postfix = ""
        self.work = WorkEstimate()
        self._start = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="mlcore-progress", daemon=True)
        self._thread.start()

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            self.write_line()

    def line(self) -> str:
        """The current progress line: done / total, elapsed, the estimated time left, what runs now."""
        with self._lock:
            n, total, postfix = self.n, self.total, self.postfix
            elapsed = time.monotonic() - self._start
            left = _left(self.work.seconds_left(elapsed, n, total), n, total, self.unit)
        now = f", now {postfix}" if postfix else ""
        return f"{self.desc}: {n}/{total} {self.unit}s done, {_clock(elapsed)} elapsed, {left}{now}"

    def write_line(self, text: str | None = None) -> None:
        """Write ``text`` (default :meth:`line`) as one flushed line."""
        stream = self.stream or sys.stderr
        print(text or self.line(), file=stream, flush=True)

    def update(self, n: int = 1) -> None:
        """Count ``n`` more units done."""
        with self._lock:
            self.n += n
            self.work.count(n)

    def set_postfix_str(self, text: str) -> None:
        """Say what runs now (shown at the end of the next line)."""
        with self._lock:
            self.postfix = text

    def close(self, finished: bool = True) -> None:
        """Stop the timer, and write the last line when the work ``finished`` (not on an error)."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join()
        if finished:
            elapsed = _clock(time.monotonic() - self._start)
            self.write_line(f"{self.desc}: {self.n}/{self.total} {self.unit}s done in {elapsed}")

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        self.close(finished=exc_type is None)


class _Bar(tqdm):
    """tqdm's bar whose time left is :class:`WorkEstimate`'s (tqdm's own counts fits at a smoothed rate)."""

    def __init__(self, *args, **kwargs):
        self.work = WorkEstimate()
        super().__init__(*args, **kwargs)

    def update(self, n=1):
        self.work.count(n)
        return super().update(n)

    @property
    def format_dict(self):
        values = super().format_dict
        left = self.work.seconds_left(values["elapsed"], values["n"], values["total"] or 0)
        if left is not None and left > 0:
            # format_meter derives the time left as (total - n) / rate: the rate that gives the estimate
            values["rate"] = (values["total"] - values["n"]) / left
        return values


def progress_bar(progress, total: int, desc: str, unit: str, interval: float = DEFAULT_INTERVAL):
    """What ``progress`` asks for: True, a tqdm bar; ``"lines"``, :class:`ProgressLines`; False, nothing.

    The result is a context manager with ``update(n)``, ``set_postfix_str(text)`` and ``work`` (a
    :class:`WorkEstimate` the runner plans).  Both show the elapsed time and an estimate of the time left
    (the bar as ``elapsed elapsed<left left``).
    """
    if progress == "lines":
        return ProgressLines(total, desc, unit, interval)
    if progress is True or progress is False:
        return _Bar(total=total, disable=not progress, desc=desc, unit=unit, bar_format=BAR_FORMAT)
    raise ValueError(f"progress must be True, False or 'lines', got {progress!r}")
