"""The results store: one folder per run, nothing lost, never two configurations mixed.

A store folder ``DIR`` holds

* ``DIR/config.json``: ``{"config_hash": ..., "config": {...}}``, the run's configuration
  and the SHA-256 of its canonical JSON (keys sorted, no spaces; see :func:`config_hash`);
* ``DIR/results.jsonl``: one record per line, one line per finished (method, dataset,
  split) evaluation (the schema is in docs/experiments.md).  Each record is appended,
  flushed and ``os.fsync``-ed before the next evaluation is written, so a killed run
  loses at most the evaluations in progress.

Opening a folder that holds the same configuration resumes it: the (method, dataset,
split) keys already recorded are skipped.  A line without its final newline is what a
kill in the middle of a write leaves; it is ignored and cut off, and that evaluation is
recomputed.  Opening it with another configuration raises :class:`ConfigMismatchError`
naming what changed, unless ``new_run=True``: the run then goes to the sibling folder
``DIR-<first 8 hex digits of the new hash>`` (created, or resumed when it exists).  Method
parameters that never change a result (``RESULT_NEUTRAL_PARAMS``: a method's ``n_jobs``) are
left out of the configuration; a store written while one was still in it resumes, and its
``config.json`` is brought up to date (the old hash listed under ``"extends"``, below).

*Extending a run.*  With ``extend=True`` a configuration that differs from the stored one
only by a larger ``protocol_params.n_repeats`` takes the folder over: its records stay (the
caller vouches that the protocol's first splits do not depend on the count:
:attr:`~.protocols.Protocol.extensible`), ``config.json`` is rewritten with the new
configuration and lists the ones it extends under ``"extends"`` (hash and ``n_repeats``),
and records stamped with any of those hashes belong to the store.

*One run at a time.*  A store is opened under an exclusive OS lock on ``DIR/.lock``
(:class:`StoreLock`: ``fcntl.flock`` on POSIX, ``msvcrt.locking`` on Windows), held until the
run ends; the file holds the holder's pid, host, start time and command line while it is
held.  A second run on the same folder, ``--report-only`` included, is refused at once with
:class:`StoreLockedError` naming that holder.  The kernel releases the lock when its process
dies, SIGKILL included, so a killed run leaves no lock to clear by hand: its holder line stays
in the file (stale) and the next run takes it over.

*Duplicates.*  A store written by two runs at once (before the lock existed) holds some
(method, dataset, split) twice.  It is never left unreadable: the first record of each key
is the one kept (the one any resume and report of the time saw), and a
:class:`DuplicateRecordsWarning` counts the others, those identical to it up to the timings
and those that differ.  :func:`read_records` leaves the file as it is; opening the store
(resume, ``--report-only``) repairs it under the lock: the others are moved to
``DIR/results.duplicates.jsonl`` and ``results.jsonl`` is rewritten atomically without them.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shlex
import socket
import sys
import time
import warnings
import weakref
from datetime import datetime
from pathlib import Path

import numpy as np

from ..exceptions import ConfigMismatchError, DuplicateRecordsWarning, StoreLockedError

__all__ = [
    "CONFIG_FILE",
    "DUPLICATES_FILE",
    "LOCK_FILE",
    "RESULTS_FILE",
    "ConfigMismatchError",
    "DuplicateRecordsWarning",
    "ResultStore",
    "StoreLock",
    "StoreLockedError",
    "canonical_json",
    "config_hash",
    "differences",
    "jsonable",
    "read_records",
    "read_config",
    "record_key",
    "without_timings",
]

CONFIG_FILE = "config.json"
RESULTS_FILE = "results.jsonl"
LOCK_FILE = ".lock"
DUPLICATES_FILE = "results.duplicates.jsonl"


def jsonable(value):
    """Convert numpy scalars and arrays, tuples and NaN to plain JSON values (NaN and infinities: null).

    Parameters
    ----------
    value : object
        A value, dicts and sequences converted recursively (dict keys become strings).

    Returns
    -------
    object
        The plain value; objects of other types are returned as they are.
    """
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.floating, float)):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


def canonical_json(value) -> str:
    """Return the one JSON text of ``value``: sorted keys, no spaces; non-JSON objects by their repr.

    Parameters
    ----------
    value : object
        A configuration or any value :func:`jsonable` converts.

    Returns
    -------
    str
        The canonical JSON text.
    """
    return json.dumps(jsonable(value), sort_keys=True, separators=(",", ":"), allow_nan=False, default=repr)


def config_hash(config) -> str:
    """Hash a configuration: the SHA-256 of its canonical JSON.

    Parameters
    ----------
    config : object
        The configuration (:func:`canonical_json`).

    Returns
    -------
    str
        The digest, 64 lower-case hex digits.
    """
    return hashlib.sha256(canonical_json(config).encode()).hexdigest()


def record_key(record) -> tuple[str, str, int]:
    """Return ``(method, dataset, split)``: what a record evaluates, and what resuming skips.

    Parameters
    ----------
    record : mapping
        A record.

    Returns
    -------
    tuple of (str, str, int)
        Its method, dataset and split index.
    """
    return record["method"], record["dataset"], int(record["split"])


def without_timings(records) -> list[dict]:
    """Copy ``records`` without their wall-clock measurements (fit, predict and solve times).

    What is left must repeat exactly between runs of one configuration -- serial, joblib,
    Dask, or resumed after a kill -- so comparing these copies checks reproducibility.

    Parameters
    ----------
    records : iterable of mapping
        Records holding ``certificates``.

    Returns
    -------
    list of dict
        The copies, without ``fit_time``, ``predict_time`` and each certificate's ``time``.
    """
    timeless = []
    for record in records:
        record = {k: v for k, v in record.items() if k not in ("fit_time", "predict_time")}
        record["certificates"] = [{k: v for k, v in c.items() if k != "time"} for c in record["certificates"]]
        timeless.append(record)
    return timeless


def read_records(path) -> list[dict]:
    """Read the records of a store folder (or of a results.jsonl file), in the order written.

    A last line without its newline (a write cut by a kill) is left out.

    Parameters
    ----------
    path : str or path-like
        A store folder or its ``results.jsonl``.

    Returns
    -------
    list of dict
        The records; empty when the file does not exist.  A (method, dataset, split) recorded
        more than once (two runs wrote the store at once) keeps its first record; the file is
        left as it is (opening the store with :meth:`ResultStore.open`, as a resume or
        ``--report-only`` does, repairs it).

    Raises
    ------
    ValueError
        For a line (other than a cut last one) that is not a JSON object, naming its line number.

    Warns
    -----
    DuplicateRecordsWarning
        Counting the duplicate records left out.
    """
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_FILE
    if not path.exists():
        return []
    records = _parse_lines(path.read_bytes(), path)[0]
    dropped = _later_duplicates(records)
    if dropped:
        outcome = "the file is left as it is (resuming the run, or --report-only, repairs it)"
        warnings.warn(_duplicates_message(path, records, dropped, outcome), DuplicateRecordsWarning, stacklevel=2)
    return [record for i, record in enumerate(records) if i not in dropped]


def _parse_lines(content: bytes, path) -> tuple[list[dict], int]:
    """Records of the complete lines, and the byte length of those lines."""
    complete = content[: content.rfind(b"\n") + 1]
    records = []
    for number, line in enumerate(_lines(complete), start=1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not a JSON record ({exc.msg}); the store is damaged") from None
        if not isinstance(record, dict):
            raise ValueError(f"{path}:{number}: expected a JSON object, got {type(record).__name__}")
        records.append(record)
    return records, len(complete)


def _lines(complete: bytes) -> list[bytes]:
    """The lines of complete records, without their newlines: one per record, in order."""
    return complete.splitlines()


def _key_or_none(record):
    try:
        return record_key(record)
    except (KeyError, TypeError, ValueError):  # not a runner's record: nothing to compare it with
        return None


def _later_duplicates(records) -> dict[int, int]:
    """``{index: index of the first record with its key}`` for every record whose key came before."""
    first, dropped = {}, {}
    for index, record in enumerate(records):
        key = _key_or_none(record)
        if key is None:
            continue
        if key in first:
            dropped[index] = first[key]
        else:
            first[key] = index
    return dropped


def _comparable(record) -> str:
    """What two runs of one evaluation must agree on: the record without its timings and config hash."""
    record = {k: v for k, v in record.items() if k not in ("config_hash", "fit_time", "predict_time")}
    if isinstance(record.get("certificates"), list):
        record["certificates"] = [
            {k: v for k, v in c.items() if k != "time"} if isinstance(c, dict) else c for c in record["certificates"]
        ]
    return canonical_json(record)


def _duplicates_message(path, records, dropped: dict[int, int], outcome: str) -> str:
    """The count of duplicates, identical and differing, with what was done (the count first: it may be shortened)."""
    identical = sum(_comparable(records[i]) == _comparable(records[first]) for i, first in dropped.items())
    keys = len(set(dropped.values()))
    return (
        f"{len(dropped)} duplicate record(s) of {keys} evaluation(s) in {path} (two runs wrote it at once): "
        f"{identical} identical to the first record of their (method, dataset, split) up to timings, "
        f"{len(dropped) - identical} differing from it; the first record of each is kept, {outcome}"
    )


def differences(old, new, prefix: str = "") -> list[str]:
    """List human-readable ``path: old -> new`` lines for every place two configurations differ.

    Parameters
    ----------
    old : object
        The stored configuration (nested dicts are compared key by key).
    new : object
        The new configuration.
    prefix : str, default=""
        The dotted path of ``old`` and ``new`` within the whole configuration.

    Returns
    -------
    list of str
        One line per added, removed or changed value; empty when they agree.
    """
    if isinstance(old, dict) and isinstance(new, dict):
        lines = []
        for key in sorted(set(old) | set(new), key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in old:
                lines.append(f"{path}: added ({canonical_json(new[key])})")
            elif key not in new:
                lines.append(f"{path}: removed (was {canonical_json(old[key])})")
            else:
                lines += differences(old[key], new[key], path)
        return lines
    if canonical_json(old) == canonical_json(new):
        return []
    return [f"{prefix or 'config'}: {canonical_json(old)} -> {canonical_json(new)}"]


class ResultStore:
    """Hold an open store folder: its configuration, the records so far, and :meth:`append`.

    Use :meth:`open`, which takes the folder's :class:`StoreLock`; the store holds it until
    :meth:`close` (or the end of a ``with`` block).

    Parameters
    ----------
    folder : pathlib.Path
        The store folder, already checked to hold ``config``.
    config : dict
        The run's configuration (its hash stamps every record appended).
    records : list of dict
        The records already in the store, in the order written.
    lock : StoreLock or None, default=None
        The folder's lock, held by this store and released by :meth:`close`.
    duplicates : int, default=0
        The records :meth:`open` removed as duplicates (module docstring).
    """

    def __init__(self, folder: Path, config: dict, records: list[dict], lock: StoreLock | None = None,
                 duplicates: int = 0):  # fmt: skip
        self.folder = Path(folder)
        self.config = config
        self.config_hash = config_hash(config)
        self.records = records
        self.finished = {record_key(record) for record in records}
        self.lock = lock
        self.duplicates = duplicates

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        """Release the folder's lock (another run may then open it); the records stay readable."""
        if self.lock is not None:
            self.lock.release()

    @classmethod
    def open(cls, out_dir, config: dict, *, new_run: bool = False, extend: bool = False,
             lock: StoreLock | None = None) -> ResultStore:  # fmt: skip
        """Create the store in ``out_dir``, or resume or extend it (module docstring for the rules).

        The folder's lock is taken first, so that nothing is read, repaired or written while
        another run writes.

        Parameters
        ----------
        out_dir : str or path-like
            The store folder (created if missing).
        config : dict
            The run's configuration.
        new_run : bool, default=False
            When the folder holds another configuration, run in the sibling folder
            ``DIR-<first 8 hex digits of the new hash>`` instead of refusing.
        extend : bool, default=False
            Take over a folder whose configuration differs only by a smaller
            ``protocol_params.n_repeats``, keeping its records.  Excludes ``new_run``.
        lock : StoreLock or None, default=None
            The lock of ``out_dir`` the caller already took (the runner takes it before loading the
            data, to refuse a second run at once); the store takes it over, and releases it when
            the store is closed, when opening fails, or when ``new_run`` sends the run elsewhere.

        Returns
        -------
        ResultStore
            The open store, holding its folder's lock.

        Raises
        ------
        StoreLockedError
            When another run holds the folder's lock.
        ConfigMismatchError
            When the folder holds another configuration (and neither ``new_run`` nor a valid
            ``extend`` applies), naming what changed.
        ValueError
            For ``new_run`` and ``extend`` together, or a damaged store.
        """
        folder = Path(out_dir)
        try:
            if new_run and extend:
                raise ValueError(
                    "new_run and extend exclude each other: a run is either extended in place or started anew"
                )
            if new_run:
                # A new run never writes to a folder holding another configuration, so it need not wait for
                # the run there: config.json is replaced atomically, and reading it takes no lock.
                stored = _read_config(folder)
                expected = config_hash(config)
                if stored is not None and stored["config_hash"] != expected:
                    if lock is not None:
                        lock.release()
                    return cls.open(folder.with_name(f"{folder.name}-{expected[:8]}"), config)
            if lock is None or not lock.holds(folder):
                if lock is not None:
                    lock.release()
                lock = StoreLock.acquire(folder)
            return cls._open_locked(folder, config, new_run, extend, lock)
        except BaseException:
            if lock is not None:  # released twice is fine: release() of a released lock does nothing
                lock.release()
            raise

    @classmethod
    def _open_locked(cls, folder: Path, config: dict, new_run: bool, extend: bool, lock: StoreLock) -> ResultStore:
        expected = config_hash(config)
        stored = _read_config(folder)
        extends = []
        if stored is None:
            _create(folder, config, expected)
        elif stored["config_hash"] != expected:
            if new_run:
                lock.release()  # nothing more is done here; the sibling folder has its own lock
                return cls.open(folder.with_name(f"{folder.name}-{expected[:8]}"), config)
            new = jsonable(config)
            if differences(stored["config"], new):
                # A parameter declared result-neutral after the store was written (a method's n_jobs)
                # is no change: such a store resumes, and its config.json is brought up to date.
                earlier = _without_neutral(stored["config"])
                changes = differences(earlier, new)
            else:  # the same content under another hash: config.json was edited or damaged
                earlier, changes = None, ["(the stored hash does not match)"]
            refusal = None
            if changes and extend:
                refusal = "the stored hash does not match" if earlier is None else _extension_refusal(earlier, new, changes)
            if changes and (not extend or refusal):
                raise ConfigMismatchError(
                    f"{folder} holds a run with another configuration; changed: {'; '.join(changes)}. "
                    + (f"It cannot be extended: {refusal}. " if extend else "")
                    + "Choose another output folder, or ask for a new run (--new-run / new_run=True)"
                    + ("" if extend or earlier is None else _extension_hint(earlier, new, changes))
                )
            extends = [*stored.get("extends", []), _extended_entry(stored)]
            _create(folder, config, expected, extends)
        else:
            extends = stored.get("extends", [])
        accepted = {expected, *(entry["config_hash"] for entry in extends)}
        records, duplicates = _without_duplicates(folder, _load_and_repair(folder / RESULTS_FILE, accepted))
        return cls(folder, config, records, lock, duplicates)

    def append(self, record: dict) -> None:
        """Write one finished evaluation (stamped with the config hash) and make it durable.

        The line is appended, flushed and ``os.fsync``-ed before this returns.

        Parameters
        ----------
        record : dict
            The evaluation's record (the schema is in docs/experiments.md); numpy values are made
            plain JSON (:func:`jsonable`), other objects written by their repr.
        """
        record = {"config_hash": self.config_hash, **jsonable(record)}
        line = json.dumps(record, allow_nan=False, default=repr) + "\n"  # parameter objects by their repr
        with open(self.folder / RESULTS_FILE, "a", encoding="utf-8") as stream:
            stream.write(line)
            stream.flush()
            os.fsync(stream.fileno())
        self.records.append(json.loads(line))  # exactly what a later run will read back
        self.finished.add(record_key(record))


def read_config(out_dir) -> dict | None:
    """Read the ``config.json`` of the store folder ``out_dir``.

    Parameters
    ----------
    out_dir : str or path-like
        The store folder.

    Returns
    -------
    dict or None
        ``config_hash``, ``config`` and maybe ``extends``; None when the folder holds no store yet.

    Raises
    ------
    ValueError
        For a damaged ``config.json``.
    """
    return _read_config(Path(out_dir))


def _read_config(folder: Path) -> dict | None:
    path = folder / CONFIG_FILE
    if not path.exists():
        if (folder / RESULTS_FILE).exists():
            raise ValueError(f"{folder} holds {RESULTS_FILE} but no {CONFIG_FILE}; it is not a results store to resume")
        return None
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        stored["config_hash"], stored["config"]
        for entry in stored.get("extends", []):
            entry["config_hash"]
    except (json.JSONDecodeError, TypeError, KeyError):
        raise ValueError(f"{path} is not a results-store configuration") from None
    return stored


_REPEATS = "protocol_params.n_repeats"


def _repeats(config: dict):
    return (config.get("protocol_params") or {}).get("n_repeats")


def _without_neutral(config: dict) -> dict:
    """``config`` without the method parameters that never change a result (stored before they were left out)."""
    from .config import RESULT_NEUTRAL_PARAMS

    methods = config.get("methods")
    if not isinstance(methods, dict):
        return config
    cleaned = {}
    for name, described in methods.items():
        if isinstance(described, dict) and isinstance(described.get("params"), dict):
            params = {k: v for k, v in described["params"].items() if k not in RESULT_NEUTRAL_PARAMS}
            described = {**described, "params": params}
        cleaned[name] = described
    return {**config, "methods": cleaned}


def _extension_refusal(old: dict, new: dict, changes: list[str]) -> str | None:
    """Why ``new`` cannot extend a store of ``old``; None when it can (only n_repeats grows)."""
    others = [change for change in changes if not change.startswith(f"{_REPEATS}:")]
    if others:
        return f"only {_REPEATS} may change, and it may only grow"
    before, after = _repeats(old), _repeats(new)
    if not isinstance(before, int) or not isinstance(after, int) or after <= before:
        return f"{_REPEATS} must grow (stored {before!r}, asked {after!r})"
    return None


def _extension_hint(old: dict, new: dict, changes: list[str]) -> str:
    if _extension_refusal(old, new, changes) is None:
        return "; or, to add splits to this run and keep its records, extend it (--extend / extend=True)"
    return ""


def _extended_entry(stored: dict) -> dict:
    return {"config_hash": stored["config_hash"], "n_repeats": _repeats(stored["config"])}


def _create(folder: Path, config: dict, digest: str, extends=()) -> None:
    """Write config.json atomically (a temporary file renamed), so a kill never leaves half of it."""
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / f".{CONFIG_FILE}.tmp"
    content = {"config_hash": digest, "config": jsonable(config), **({"extends": list(extends)} if extends else {})}
    with open(temporary, "w", encoding="utf-8") as stream:
        json.dump(content, stream, indent=2, sort_keys=True, default=repr)
        stream.write("\n")
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(temporary, folder / CONFIG_FILE)


def _load_and_repair(path: Path, digests: set[str]) -> list[dict]:
    """The complete records of ``path``, after cutting off an unfinished last line.

    ``digests``: the configuration hashes whose records belong to the store (its own and
    those of the runs it extends).
    """
    if not path.exists():
        return []
    content = path.read_bytes()
    records, length = _parse_lines(content, path)
    if length < len(content):
        with open(path, "r+b") as stream:
            stream.truncate(length)
            stream.flush()
            os.fsync(stream.fileno())
    foreign = [i for i, record in enumerate(records, start=1) if record.get("config_hash") not in digests]
    if foreign:
        raise ValueError(f"{path}: line {foreign[0]} was written under another configuration; the store is mixed")
    return records


def _without_duplicates(folder: Path, records: list[dict]) -> tuple[list[dict], int]:
    """The records with the first of each key only, ``results.jsonl`` repaired; and how many were removed.

    Called under the lock, after :func:`_load_and_repair`: the file's lines are the records, one
    for one.  The removed lines are appended to ``DUPLICATES_FILE`` (nothing is lost) before
    ``results.jsonl`` is replaced atomically by its kept lines, so a kill leaves either the old
    file or the repaired one (and at worst a line twice in the duplicates file).
    """
    dropped = _later_duplicates(records)
    if not dropped:
        return records, 0
    path = folder / RESULTS_FILE
    lines = _lines(path.read_bytes())
    if len(lines) != len(records):  # the file changed under the lock: a writer that ignored it
        raise ValueError(f"{path} changed while it was repaired; is a run of an older version writing it?")
    message = _duplicates_message(
        path, records, dropped, f"the others were moved to {DUPLICATES_FILE} and {RESULTS_FILE} rewritten without them"
    )
    with open(folder / DUPLICATES_FILE, "ab") as stream:
        stream.write(b"".join(lines[i] + b"\n" for i in sorted(dropped)))
        stream.flush()
        os.fsync(stream.fileno())
    temporary = folder / f".{RESULTS_FILE}.tmp"
    with open(temporary, "wb") as stream:
        stream.write(b"".join(line + b"\n" for i, line in enumerate(lines) if i not in dropped))
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(temporary, path)
    _sync_folder(folder)
    warnings.warn(message, DuplicateRecordsWarning, stacklevel=3)
    return [record for i, record in enumerate(records) if i not in dropped], len(dropped)


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (POSIX; Windows cannot open a folder, and commits renames itself)."""
    if os.name != "posix":
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


# ------------------------------------------------------------------------ the lock
try:
    import fcntl
except ImportError:  # Windows
    fcntl = None
    import msvcrt

#: Where the Windows lock sits: one byte far past the holder line.  msvcrt's byte-range locks
#: are mandatory, so a lock over the line would stop a refused run from reading who holds it.
_WINDOWS_LOCK_OFFSET = 1 << 30


class StoreLock:
    """Hold the exclusive lock of one store folder, from a run's opening of its store to its report.

    An OS lock on ``DIR/.lock``, taken without waiting: ``fcntl.flock`` on POSIX (on a Linux NFS
    mount the kernel maps it to a byte-range lock the server arbitrates, so it holds between
    machines too), ``msvcrt.locking`` of one byte on Windows.  The OS releases it when the holding
    process ends in any way, SIGKILL included: a killed run leaves no lock to clear by hand.
    While the lock is held, the file holds one JSON line naming the holder (:attr:`holder`: pid,
    host, start time, command); :meth:`release` empties it, so a line found by the next holder
    was left by a run that died holding the lock (:attr:`previous`, None otherwise).

    Use :meth:`acquire`.  The file is never deleted: a run still waiting on a deleted file's lock
    and one creating a new file could both believe they hold it.  A process forked from the
    holder without exec (joblib's ``multiprocessing`` backend) drops its copy of the lock at once,
    so it never outlives the run holding it (a worker started with exec, like loky's, gets none).

    Parameters
    ----------
    folder : pathlib.Path
        The store folder.
    stream : file object
        The open, locked ``DIR/.lock`` file.
    holder : dict
        This run's ``pid``, ``host``, ``started`` (ISO 8601, local time with its offset) and
        ``command``.
    previous : dict or None
        The line a run that died holding the lock left, or None.
    """

    def __init__(self, folder: Path, stream, holder: dict, previous: dict | None):
        self.folder = Path(folder)
        self.holder = holder
        self.previous = previous
        self._stream = stream
        _HELD.add(self)

    @classmethod
    def acquire(cls, folder) -> StoreLock:
        """Take the lock of ``folder`` (created if missing) at once, without waiting.

        Parameters
        ----------
        folder : str or path-like
            The store folder.

        Returns
        -------
        StoreLock
            The held lock.

        Raises
        ------
        StoreLockedError
            When another run holds it, naming the holder: its pid, host, start time and command line.
        OSError
            When the file system cannot lock at all (some network file systems without a lock service).
        """
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / LOCK_FILE
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o644)
        stream = os.fdopen(descriptor, "r+b", buffering=0)
        try:
            locked = _try_lock(stream.fileno())
        except OSError as exc:
            stream.close()
            raise OSError(
                f"cannot lock {path} ({exc.strerror or exc}): the file system offers no locks, so two runs on this "
                "store could not be kept apart; put the store (--out) on a local disk"
            ) from None
        if not locked:
            stream.close()
            raise StoreLockedError(_locked_message(folder, path))
        try:
            previous = _parse_holder(stream.read())
            holder = _this_holder()
            stream.seek(0)
            stream.truncate()
            stream.write((json.dumps(holder) + "\n").encode())
        except BaseException:
            with contextlib.suppress(OSError):
                _unlock(stream.fileno())
            stream.close()
            raise
        return cls(folder, stream, holder, previous)

    @property
    def held(self) -> bool:
        """Whether this object still holds the lock."""
        return self._stream is not None

    def holds(self, folder) -> bool:
        """Tell whether this object holds the lock of ``folder``.

        Parameters
        ----------
        folder : str or path-like
            A store folder.

        Returns
        -------
        bool
            True while the lock is held and ``folder`` resolves to its folder.
        """
        return self.held and Path(folder).resolve() == self.folder.resolve()

    def release(self) -> None:
        """Empty the holder line and let the lock go; a lock already released is left alone."""
        stream, self._stream = self._stream, None
        if stream is None:
            return
        _HELD.discard(self)
        try:
            with contextlib.suppress(OSError):  # an emptied line is a courtesy; the lock matters
                stream.seek(0)
                stream.truncate()
            _unlock(stream.fileno())
        finally:
            stream.close()

    def __enter__(self) -> StoreLock:
        return self

    def __exit__(self, *exc_info) -> None:
        self.release()

    def __del__(self) -> None:
        # A store dropped without close() (a test, an interactive session) frees its folder
        # as its file would, without the unclosed-file warning.  No contextlib here: at interpreter
        # exit the module's globals may already be gone.
        try:
            self.release()
        except Exception:
            pass


#: The locks this process holds, for the fork hook below (weak: a dropped lock is released by __del__).
_HELD: weakref.WeakSet = weakref.WeakSet()


def _drop_inherited_locks() -> None:
    """In a child forked without exec: close its copies of the parent's lock descriptors.

    A flock belongs to the open file, which the child shares: without this the child would hold
    the lock after its parent died.  Closing the copy drops the child's share only; an unlock
    would release the parent's lock too.
    """
    for lock in list(_HELD):
        stream, lock._stream = lock._stream, None
        if stream is not None:
            stream.close()
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_inherited_locks)


def _try_lock(descriptor: int) -> bool:
    """Take the lock without waiting: True, or False when another open file holds it."""
    if fcntl is not None:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    os.lseek(descriptor, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
    try:
        msvcrt.locking(descriptor, msvcrt.LK_NBLCK, 1)
    except PermissionError:  # EACCES: another process holds the byte
        return False
    except OSError as exc:
        if exc.errno == getattr(errno, "EDEADLOCK", errno.EDEADLK):  # LK_NBLCK's "locked" on some CRTs
            return False
        raise
    finally:
        os.lseek(descriptor, 0, os.SEEK_SET)
    return True


def _unlock(descriptor: int) -> None:
    if fcntl is not None:
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        return
    os.lseek(descriptor, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
    msvcrt.locking(descriptor, msvcrt.LK_UNLCK, 1)


def _this_holder() -> dict:
    argv = [*sys.argv] if sys.argv and sys.argv[0] else [sys.executable, *sys.argv[1:]]
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": shlex.join(argv),
    }


def _parse_holder(content: bytes) -> dict | None:
    """The holder a lock file names, or None for an empty (released) or unreadable one."""
    try:
        holder = json.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return holder if isinstance(holder, dict) and "pid" in holder else None


#: How long a refused run waits for the holder's line: the holder writes it right after taking the lock.
_HOLDER_LINE_WAIT = 1.0


def _locked_message(folder: Path, path: Path) -> str:
    """Why a run is refused: who holds the store, and what to do."""
    # Until the new holder writes its line (just after it takes the lock), the file is empty or still holds
    # the line of a run killed earlier: wait a little for a line naming a live process.
    deadline = time.monotonic() + _HOLDER_LINE_WAIT
    while True:
        holder = None
        with contextlib.suppress(OSError):
            holder = _parse_holder(path.read_bytes())
        if (holder is not None and not _ended(holder)) or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    if holder is None:
        who = "a run that has not written its name yet"
    else:
        who = (
            f"pid {holder.get('pid')} on host {holder.get('host')}, started {holder.get('started')}, "
            f"command: {holder.get('command')}{_holder_note(holder)}"
        )
    return (
        f"{folder} is in use by another run ({who}); it holds {path} until it ends. Two runs on one store would "
        "compute and record every evaluation twice: wait for that run to end (run again then to resume it), or give "
        "this run another output folder (--out); to spread one run over more cores or machines, give it --n-jobs or "
        "--scheduler"
    )


def _holder_note(holder: dict) -> str:
    """What this machine can tell about a holder on it: this very process, or one that has ended."""
    if holder.get("host") == socket.gethostname() and holder.get("pid") == os.getpid():
        return " (this process: a store or lock opened and not closed)"
    if _ended(holder):
        return " (that process has ended; a process it started without exec still holds the lock)"
    return ""


def _ended(holder: dict) -> bool:
    """Whether the holder is a process of this host known to have ended (False when that cannot be told)."""
    pid = holder.get("pid")
    # Not on Windows: there os.kill(pid, 0) would terminate the process.
    if fcntl is None or holder.get("host") != socket.gethostname() or not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # PermissionError: it exists, under another user
        return False
    return False
