"""Progress of long runs: a tqdm bar for a person at a terminal, timed lines for a log.

A redirected run (``mlcore compare ... 2> log``, a batch job) gets no bar -- tqdm's carriage
returns make a log unreadable -- but must not be silent for minutes either.  :class:`ProgressLines`
writes one line every ``interval`` seconds (fits done / total, elapsed time, an estimate of the time
left, what runs now), from a timer thread, so the lines keep coming while one long fit runs, and a last
line at the end.  The tqdm bar shows the same two times (``elapsed<left``).

The time left is the work not done at the mean rate so far, ``elapsed * (total - done) / done``: the fits
of a compare differ in cost (a kernel method's fit takes longer than a k-NN one's, a large C longer
than a small one), so the estimate moves as the run passes from one method to the next; it is a guide,
not a promise.  Before the first fit ends there is no rate, and the line says so.
"""

from __future__ import annotations

import sys
import threading
import time

from tqdm.auto import tqdm

__all__ = ["BAR_FORMAT", "DEFAULT_INTERVAL", "ProgressLines", "progress_bar"]

#: Seconds between two progress lines.
DEFAULT_INTERVAL = 10.0

#: The bar's layout: tqdm's default with its two times named, so that "0:20<0:40" reads as elapsed and left.
BAR_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed} elapsed<{remaining} left, {rate_fmt}{postfix}]"


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _left(elapsed: float, done: int, total: int, unit: str) -> str:
    """The time-left part of a progress line (module docstring: the mean rate so far)."""
    if done <= 0:
        return f"time left not known before the first {unit} ends"
    if done >= total:
        return "0:00:00 left"
    return f"about {_clock(elapsed * (total - done) / done)} left"


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
        now = f", now {postfix}" if postfix else ""
        left = _left(elapsed, n, total, self.unit)
        return f"{self.desc}: {n}/{total} {self.unit}s done, {_clock(elapsed)} elapsed, {left}{now}"

    def write_line(self, text: str | None = None) -> None:
        """Write ``text`` (default :meth:`line`) as one flushed line."""
        stream = self.stream or sys.stderr
        print(text or self.line(), file=stream, flush=True)

    def update(self, n: int = 1) -> None:
        """Count ``n`` more units done."""
        with self._lock:
            self.n += n

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
            self.write_line(f"{self.desc}: {self.n}/{self.total} {self.unit}s done in {_clock(time.monotonic() - self._start)}")

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        self.close(finished=exc_type is None)


def progress_bar(progress, total: int, desc: str, unit: str, interval: float = DEFAULT_INTERVAL):
    """What ``progress`` asks for: True, a tqdm bar; ``"lines"``, :class:`ProgressLines`; False, nothing.

    The result is a context manager with ``update(n)`` and ``set_postfix_str(text)``.  Both show the
    elapsed time and an estimate of the time left (the bar as ``elapsed elapsed<left left``).
    """
    if progress == "lines":
        return ProgressLines(total, desc, unit, interval)
    if progress is True or progress is False:
        return tqdm(total=total, disable=not progress, desc=desc, unit=unit, bar_format=BAR_FORMAT)
    raise ValueError(f"progress must be True, False or 'lines', got {progress!r}")
