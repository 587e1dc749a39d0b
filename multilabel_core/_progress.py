"""Progress of long runs: a tqdm bar for a person at a terminal, timed lines for a log.

A redirected run (``mlcore compare ... 2> log``, a batch job) gets no bar -- tqdm's carriage
returns make a log unreadable -- but must not be silent for minutes either.  :class:`ProgressLines`
writes one line every ``interval`` seconds (fits done / total, elapsed time, what runs now), from a
timer thread, so the lines keep coming while one long fit runs, and a last line at the end.
"""

from __future__ import annotations

import sys
import threading
import time

from tqdm.auto import tqdm

__all__ = ["DEFAULT_INTERVAL", "ProgressLines", "progress_bar"]

#: Seconds between two progress lines.
DEFAULT_INTERVAL = 10.0


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


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
        """The current progress line."""
        with self._lock:
            n, postfix = self.n, self.postfix
        now = f", now {postfix}" if postfix else ""
        return f"{self.desc}: {n}/{self.total} {self.unit}s done, {_clock(time.monotonic() - self._start)} elapsed{now}"

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

    The result is a context manager with ``update(n)`` and ``set_postfix_str(text)``.
    """
    if progress == "lines":
        return ProgressLines(total, desc, unit, interval)
    if progress is True or progress is False:
        return tqdm(total=total, disable=not progress, desc=desc, unit=unit)
    raise ValueError(f"progress must be True, False or 'lines', got {progress!r}")
