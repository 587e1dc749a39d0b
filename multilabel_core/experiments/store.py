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
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

__all__ = [
    "CONFIG_FILE",
    "RESULTS_FILE",
    "ConfigMismatchError",
    "ResultStore",
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


class ConfigMismatchError(ValueError):
    """A store folder holds a run with another configuration."""


def jsonable(value):
    """numpy scalars and arrays, tuples and NaN -> plain JSON values (NaN and infinities -> null)."""
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
    """The one JSON text of ``value``: sorted keys, no spaces; non-JSON objects by their repr."""
    return json.dumps(jsonable(value), sort_keys=True, separators=(",", ":"), allow_nan=False, default=repr)


def config_hash(config) -> str:
    """SHA-256 (hex) of the canonical JSON of a configuration."""
    return hashlib.sha256(canonical_json(config).encode()).hexdigest()


def record_key(record) -> tuple[str, str, int]:
    """``(method, dataset, split)``: what a record evaluates, and what resuming skips."""
    return record["method"], record["dataset"], int(record["split"])


def without_timings(records) -> list[dict]:
    """Copies of ``records`` without their wall-clock measurements (fit, predict and solve times).

    What is left must repeat exactly between runs of one configuration -- serial, joblib,
    Dask, or resumed after a kill -- so comparing these copies checks reproducibility.
    """
    timeless = []
    for record in records:
        record = {k: v for k, v in record.items() if k not in ("fit_time", "predict_time")}
        record["certificates"] = [{k: v for k, v in c.items() if k != "time"} for c in record["certificates"]]
        timeless.append(record)
    return timeless


def read_records(path) -> list[dict]:
    """The records of a store folder (or of a results.jsonl file), in the order written.

    A last line without its newline (a write cut by a kill) is left out; any other line
    that is not a JSON object is an error naming its line number.
    """
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_FILE
    if not path.exists():
        return []
    return _parse_lines(path.read_bytes(), path)[0]


def _parse_lines(content: bytes, path) -> tuple[list[dict], int]:
    """Records of the complete lines, and the byte length of those lines."""
    complete = content[: content.rfind(b"\n") + 1]
    records = []
    for number, line in enumerate(complete.splitlines(), start=1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not a JSON record ({exc.msg}); the store is damaged") from None
        if not isinstance(record, dict):
            raise ValueError(f"{path}:{number}: expected a JSON object, got {type(record).__name__}")
        records.append(record)
    return records, len(complete)


def differences(old, new, prefix: str = "") -> list[str]:
    """Human-readable ``path: old -> new`` lines for every place two configurations differ."""
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
    """An open store folder: its configuration, the records so far, and :meth:`append`.

    Use :meth:`open`; the constructor takes a folder already checked to hold ``config``.
    """

    def __init__(self, folder: Path, config: dict, records: list[dict]):
        self.folder = Path(folder)
        self.config = config
        self.config_hash = config_hash(config)
        self.records = records
        self.finished = {record_key(record) for record in records}

    @classmethod
    def open(cls, out_dir, config: dict, *, new_run: bool = False, extend: bool = False) -> ResultStore:
        """Create the store in ``out_dir``, or resume or extend it (module docstring for the rules)."""
        if new_run and extend:
            raise ValueError("new_run and extend exclude each other: a run is either extended in place or started anew")
        folder = Path(out_dir)
        expected = config_hash(config)
        stored = _read_config(folder)
        extends = []
        if stored is None:
            _create(folder, config, expected)
        elif stored["config_hash"] != expected:
            if new_run:
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
        return cls(folder, config, _load_and_repair(folder / RESULTS_FILE, accepted))

    def append(self, record: dict) -> None:
        """Write one finished evaluation (stamped with the config hash) and make it durable."""
        record = {"config_hash": self.config_hash, **jsonable(record)}
        line = json.dumps(record, allow_nan=False, default=repr) + "\n"  # parameter objects by their repr
        with open(self.folder / RESULTS_FILE, "a", encoding="utf-8") as stream:
            stream.write(line)
            stream.flush()
            os.fsync(stream.fileno())
        self.records.append(json.loads(line))  # exactly what a later run will read back
        self.finished.add(record_key(record))


def read_config(out_dir) -> dict | None:
    """The ``config.json`` of the store folder ``out_dir`` (``config_hash``, ``config``, maybe
    ``extends``), or None when the folder holds no store yet; ValueError for a damaged one."""
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
