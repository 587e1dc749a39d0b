"""Saving fitted estimators to disk and loading them back, without running code from the file.

A model file (suffix :data:`MODEL_SUFFIX`, ``.mlcore``) is a zip archive of two members:

``manifest.json``
    ``{"format": "multilabel_core.model", "format_version": 1, "multilabel_core": <version
    that wrote it>, "method": <registered method name, or null>, "estimator": <module.Class>,
    "params": <the estimator's get_params(deep=False), for people reading the file>,
    "skops": <version of skops that wrote the payload>}``
``estimator.skops``
    the estimator in skops' format (:func:`skops.io.dumps`): a tree of plain data, arrays in
    ``.npy`` (no pickle) and the names of the classes to rebuild.

:func:`load_model` reads the manifest first and refuses (ValueError naming the file and the
problem) anything that is not a model file of a format version it knows before it looks at the
payload.  It then lists the classes the payload names (:func:`skops.io.get_untrusted_types`,
which reads names and builds nothing) and refuses the file unless every one is trusted:
:func:`trusted_types` is the explicit list -- every registered method's estimator class, every
registered component class, and the classes plugins declare through the
``register_trusted_types`` hook (the core declares its Certificate, Solution and Fit there),
on top of the numpy, scipy and scikit-learn types that skops trusts by default.  Only then is the
estimator rebuilt (:func:`skops.io.loads`): instances of trusted classes get their attributes
set, no constructor or reducer named by the file is called.

Pickle (joblib) files can run any code while they are read, so they are written only on request
(``save_model(..., format="joblib")``) and read only with ``load_model(..., trusted=True)``; a
pickle given to :func:`load_model` without it is refused from its first bytes, never unpickled.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import uuid
import warnings
import zipfile
from importlib.metadata import version as _distribution_version
from typing import Iterable

from . import __version__
from .plugins import _call_hookimpl, get_method, get_plugin_manager, list_components, list_methods
from .validation import check_byte_cap

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MAX_PAYLOAD_BYTES",
    "MODEL_SUFFIX",
    "ModelVersionWarning",
    "load_model",
    "save_model",
    "trusted_types",
]

FORMAT = "multilabel_core.model"
#: The version of the archive layout and manifest; a file of a higher version is refused.
FORMAT_VERSION = 1
MODEL_SUFFIX = ".mlcore"
FORMATS = ("mlcore", "joblib")

_MANIFEST = "manifest.json"
_PAYLOAD = "estimator.skops"
# A manifest is a few hundred bytes; the cap keeps a hostile archive from making us inflate
# gigabytes before the format check.
_MANIFEST_MAX_BYTES = 1 << 16
#: Default cap on the decompressed size of a model file's payload, in bytes (8 GiB, overridable
#: with ``load_model(..., max_bytes=...)`` or the environment variable MULTILABEL_CORE_MODEL_MAX_BYTES).
#: Arrays compress well, so a small archive can declare (or, lying, inflate to) any size: the
#: payload is inflated in chunks and reading stops at the cap.
MAX_PAYLOAD_BYTES = 8 << 30
_CHUNK = 1 << 20
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
# What joblib writes: a raw pickle (protocol 2 to 5 starts with PROTO), or one compressed by
# zlib, gzip, bz2, xz, lzma or lz4.
_PICKLE_MAGIC = (
    b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05", b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda",
    b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"]\x00\x00", b"\x04\x22\x4d\x18",
)  # fmt: skip


class _TooLarge(Exception):
    pass


class ModelVersionWarning(UserWarning):
    """A model file was written by a different version of multilabel_core."""


# -- the list of trusted types ----------------------------------------------------


def _type_name(cls: type) -> str:
    # skops names a class by pickle's module lookup and the bare class name; so must we.
    return f"{pickle.whichmodule(cls, cls.__name__)}.{cls.__name__}"


def _declared_types() -> list[type]:
    """Every class declared through the ``register_trusted_types`` hook, plugin by plugin."""
    hook = get_plugin_manager().hook.register_trusted_types
    return [cls for impl in hook.get_hookimpls() for cls in _call_hookimpl(impl, "register_trusted_types", type)]


def trusted_types() -> list[str]:
    """The classes a model file may name, as sorted ``module.Class`` strings.

    Every registered method's estimator class, every registered component that is a class, and
    every class declared through the ``register_trusted_types`` hook.  skops adds its own
    defaults when loading (numpy and scipy arrays and ufuncs, scikit-learn's estimators, Python's
    builtin containers); those are not listed here.
    """
    classes = [spec.estimator for spec in list_methods()]
    classes += [spec.factory for spec in list_components() if isinstance(spec.factory, type)]
    classes += _declared_types()
    return sorted({_type_name(cls) for cls in classes})


def _names(types: Iterable) -> list[str]:
    names = []
    for item in types:
        if isinstance(item, str):
            names.append(item)
        elif isinstance(item, type):
            names.append(_type_name(item))
        else:
            raise ValueError(f"trusted_types must hold classes or 'module.Class' strings, got {item!r}")
    return names


# -- saving -----------------------------------------------------------------------


def save_model(estimator, path, *, method: str | None = None, format: str = "mlcore", trusted_types=()) -> str:
    """Write ``estimator`` (usually fitted) to ``path``; return the path as a string.

    ``format="mlcore"`` (the default) writes the archive described in the module docstring,
    which :func:`load_model` reads without running code from it; the file name's suffix is up
    to you (:data:`MODEL_SUFFIX` by convention).  The estimator may hold only classes that
    :func:`load_model` will trust (:func:`trusted_types` plus ``trusted_types``, classes or
    ``module.Class`` strings); anything else is a ValueError naming the classes, raised before
    anything is written, since the file could not be loaded back.  A Pipeline ending in a
    method is fine: skops trusts scikit-learn's estimators.

    ``format="joblib"`` writes a joblib pickle of ``{"format", "multilabel_core", "method",
    "estimator"}`` instead: any picklable object, but loading it can run arbitrary code, so
    :func:`load_model` reads it only with ``trusted=True``.

    ``method`` is the method name recorded in the file; by default, the name under which
    ``estimator``'s class is registered, or None when it is not registered.
    """
    path = os.fspath(path)
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(map(repr, FORMATS))}, got {format!r}")
    if method is None:
        method = next((spec.name for spec in list_methods() if spec.estimator is type(estimator)), None)
    if format == "joblib":
        import joblib

        header = {"format": FORMAT, "multilabel_core": __version__, "method": method}
        _write_atomically(path, lambda handle: joblib.dump({**header, "estimator": estimator}, handle))
        return path

    import skops.io

    try:
        payload = skops.io.dumps(estimator)
    except Exception as exc:  # skops refuses objects it cannot describe without pickle
        raise ValueError(
            f"{path}: {type(estimator).__name__} cannot be saved in the mlcore format "
            f"({type(exc).__name__}: {_one_line(exc)}); save_model(..., format='joblib') writes a pickle instead"
        ) from exc
    untrusted = sorted(set(skops.io.get_untrusted_types(data=payload)) - set(_trusted_names(trusted_types)))
    if untrusted:
        raise ValueError(
            f"{path}: not written: {type(estimator).__name__} holds classes that load_model does not trust: "
            f"{', '.join(untrusted)}. A plugin declares its classes through the register_trusted_types hook; "
            f"or pass them as trusted_types= to save_model and load_model"
        )
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "multilabel_core": __version__,
        "method": method,
        "estimator": _type_name(type(estimator)),
        "params": _json_params(estimator),
        "skops": _distribution_version("skops"),
    }

    def write(handle):
        with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            # The manifest first: a reader can check it before it touches the payload.
            archive.writestr(_MANIFEST, json.dumps(manifest, indent=2, sort_keys=True))
            archive.writestr(_PAYLOAD, payload)

    _write_atomically(path, write)
    return path


def _write_atomically(path: str, write) -> None:
    """Write through a temporary file in the same folder, so a crash never leaves half a model at ``path``."""
    # open(..., "xb") rather than mkstemp: the file gets the permissions the umask gives any new file
    temporary = f"{path}.{os.getpid()}.{uuid.uuid4().hex[:8]}.part"
    try:
        with open(temporary, "xb") as stream:
            write(stream)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _json_params(estimator) -> dict:
    """``get_params(deep=False)`` with every value JSON can hold as itself, the others as their repr."""
    get_params = getattr(estimator, "get_params", None)
    if get_params is None:
        return {}
    params = {}
    for name, value in get_params(deep=False).items():
        try:
            json.dumps(value, allow_nan=False)
            params[name] = value
        except (TypeError, ValueError):
            params[name] = repr(value)
    return params


# -- loading ----------------------------------------------------------------------


def load_model(path, *, trusted: bool = False, trusted_types=(), max_bytes: int | None = None):
    """The estimator saved at ``path`` by :func:`save_model`.

    ValueError, naming the file and the problem, when the file is missing, empty, not a zip
    archive, a truncated or corrupt archive, has no or a broken manifest, is of another format or
    of a newer format version, names a method no installed plugin registers, or holds a class
    that is not trusted (:func:`trusted_types` plus ``trusted_types``); a
    :class:`ModelVersionWarning` when it was written by another multilabel_core version.

    ``trusted=True`` says the file comes from a source you trust: a joblib/pickle file (written
    with ``format="joblib"``) is then unpickled, which can run any code the file contains, and
    the classes of an mlcore file are not checked against the list.  Without it a pickle is
    refused from its first bytes, never unpickled.

    ``max_bytes`` caps the decompressed size of the estimator payload (default
    :data:`MAX_PAYLOAD_BYTES`, or the environment variable MULTILABEL_CORE_MODEL_MAX_BYTES): a
    larger payload is refused with a ValueError instead of being inflated into memory.
    """
    path = os.fspath(path)
    max_bytes = _payload_cap(max_bytes)
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such model file")
    size = os.path.getsize(path)
    # Only the first bytes and the last decide the kind of file: nothing more is read before
    # the checks, so a huge file costs no memory.
    with open(path, "rb") as stream:
        head = stream.read(8)
        if size:
            stream.seek(-1, os.SEEK_END)
        last = stream.read(1)
    if head and any(magic.startswith(head) for magic in _ZIP_MAGIC):
        raise ValueError(f"{path} is not a multilabel_core model file (truncated or corrupt zip archive: {size} bytes)")
    if not head.startswith(_ZIP_MAGIC):
        if trusted:
            return _load_pickle(path)
        if head.startswith(_PICKLE_MAGIC) or last == b".":  # pickle's STOP opcode ends every pickle
            raise ValueError(
                f"{path} is a pickle (joblib) file, not an mlcore model file: loading it could run any code "
                f"it contains, so it was not read; load it only if you trust its source, with "
                f"load_model(path, trusted=True) or mlcore predict --trust, and save it again as an mlcore file"
            )
        what = "empty" if not head else "not a zip archive"
        raise ValueError(f"{path} is not a multilabel_core model file ({what})")
    if size > max_bytes + _MANIFEST_MAX_BYTES + _CHUNK:  # a member is never much larger compressed than inflated
        raise _too_large(path, "the file", max_bytes, size)
    manifest, payload = _read_archive(path, max_bytes)
    _check_payload_size(path, payload, max_bytes)
    estimator = _rebuild(path, manifest, payload, trusted, trusted_types)
    if manifest["multilabel_core"] != __version__:
        _warn_version(path, manifest["multilabel_core"], manifest["method"])
    return estimator


def _payload_cap(max_bytes) -> int:
    return check_byte_cap(max_bytes, "MULTILABEL_CORE_MODEL_MAX_BYTES", MAX_PAYLOAD_BYTES)


def _read_archive(path: str, max_bytes: int) -> tuple[dict, bytes]:
    """The checked manifest and the payload's bytes; ValueError for anything else."""
    try:
        archive = zipfile.ZipFile(path)
        names = archive.namelist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise ValueError(f"{path} is not a multilabel_core model file (truncated or corrupt zip archive: {_one_line(exc)})") from exc
    with archive:
        if _MANIFEST not in names:
            raise ValueError(f"{path} is not a multilabel_core model file (the archive has no {_MANIFEST})")
        raw = _read_member(path, archive, _MANIFEST, _MANIFEST_MAX_BYTES)
        try:
            manifest = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as exc:  # undecodable, not JSON, or nested too deep
            raise ValueError(f"{path}: {_MANIFEST} is not valid JSON ({_one_line(exc)})") from exc
        manifest = _check_manifest(path, manifest)
        if _PAYLOAD not in names:
            raise ValueError(f"{path}: the archive has no {_PAYLOAD} (the estimator)")
        return manifest, _read_member(path, archive, _PAYLOAD, max_bytes)


def _read_member(path: str, archive: zipfile.ZipFile, name: str, cap: int) -> bytes:
    """The member's bytes, inflated in chunks so that a lying size header cannot exceed ``cap``."""
    try:
        declared = archive.getinfo(name).file_size
        if declared > cap:
            raise _TooLarge(declared)
        chunks, size = [], 0
        with archive.open(name) as member:
            while chunk := member.read(_CHUNK):
                size += len(chunk)
                if size > cap:
                    raise _TooLarge(size)
                chunks.append(chunk)
        return b"".join(chunks)
    except _TooLarge as exc:
        raise _too_large(path, name, cap, exc.args[0]) from None
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
        # zlib.error is an Exception subclass of its own; a cut deflate stream raises it
        raise ValueError(f"{path}: {name} cannot be read from the archive ({_one_line(exc)})") from exc
    except Exception as exc:
        raise ValueError(f"{path}: {name} cannot be read from the archive ({type(exc).__name__}: {_one_line(exc)})") from exc


def _too_large(path: str, what: str, cap: int, size: int) -> ValueError:
    if what == _MANIFEST:
        return ValueError(f"{path}: {_MANIFEST} holds {size} bytes or more; a manifest is at most {cap}")
    return ValueError(
        f"{path}: {what} holds more than {cap} bytes ({size} or more), the cap on a model file's payload; "
        f"raise it with load_model(..., max_bytes=...) or MULTILABEL_CORE_MODEL_MAX_BYTES if you trust the file"
    )


def _check_payload_size(path: str, payload: bytes, cap: int) -> None:
    """Refuse a skops payload that would make skops' reader hold more than ``cap`` bytes.

    The payload is itself a zip whose members skops reads whole: ``schema.json`` and one
    ``.npy`` member per array node, and a schema may name one member many times.  skops writes
    its members uncompressed, so requiring that bounds ``schema.json`` by the payload's size;
    the arrays are bounded by summing the member sizes over every reference in the schema.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(payload)) as inner:
            infos = {info.filename: info for info in inner.infolist()}
            packed = [name for name, info in infos.items() if info.compress_type != zipfile.ZIP_STORED]
            if packed:
                raise ValueError(f"{path}: the estimator payload has compressed members ({', '.join(packed[:3])}); skops writes none")
            if "schema.json" not in infos:
                return  # skops' reader refuses it, with its own message
            schema = json.loads(inner.read("schema.json"))
    except (zipfile.BadZipFile, OSError, EOFError, RecursionError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: the estimator payload is corrupt ({type(exc).__name__}: {_one_line(exc)})") from exc
    total, pending = 0, [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            member = node.get("file")
            if isinstance(member, str) and member in infos:
                total += infos[member].file_size
                if total > cap:
                    raise _too_large(path, "the estimator's arrays", cap, total)
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)


def _require_estimator(path: str, estimator) -> None:
    if not all(callable(getattr(estimator, name, None)) for name in ("predict", "decision_function")):
        raise ValueError(f"{path}: the file holds a {type(estimator).__name__}, not an estimator with predict and decision_function")


def _check_manifest(path: str, manifest) -> dict:
    """The manifest's fields, checked in order: format name, format version, then the rest."""
    if not isinstance(manifest, dict):
        raise ValueError(f"{path}: {_MANIFEST} holds a {type(manifest).__name__}, not a JSON object")
    if manifest.get("format") != FORMAT:
        raise ValueError(
            f"{path} is not a multilabel_core model file ({_MANIFEST} names format {manifest.get('format')!r}, "
            f"not {FORMAT!r})"
        )
    file_version = manifest.get("format_version")
    if not isinstance(file_version, int) or isinstance(file_version, bool) or file_version < 1:
        raise ValueError(f"{path}: {_MANIFEST} has format_version {file_version!r}, not a positive integer")
    if file_version > FORMAT_VERSION:
        raise ValueError(
            f"{path} is in model format version {file_version} (written by multilabel_core "
            f"{manifest.get('multilabel_core')}); multilabel_core {__version__} reads versions up to "
            f"{FORMAT_VERSION}: upgrade multilabel_core to load it"
        )
    for field, kinds in (("multilabel_core", (str,)), ("method", (str, type(None))), ("estimator", (str,))):
        if not isinstance(manifest.get(field), kinds):
            raise ValueError(f"{path}: {_MANIFEST} field {field!r} is {manifest.get(field)!r}")
    if manifest["method"] is not None:
        try:
            get_method(manifest["method"])
        except ValueError as exc:
            raise ValueError(
                f"{path}: the model is of method {manifest['method']!r}, which no installed plugin registers "
                f"(is the plugin that provides it installed?): {_one_line(exc)}"
            ) from exc
    return manifest


def _rebuild(path: str, manifest: dict, payload: bytes, trusted: bool, extra) -> object:
    import skops.io

    written_by = "" if manifest["multilabel_core"] == __version__ else f"; written by multilabel_core {manifest['multilabel_core']}"
    try:
        named = skops.io.get_untrusted_types(data=payload)
    except Exception as exc:  # whatever a corrupt payload makes skops' reader raise
        raise ValueError(f"{path}: the estimator payload is corrupt ({type(exc).__name__}: {_one_line(exc)})") from exc
    allowed = set(_trusted_names(extra))
    untrusted = sorted(set(named) - allowed)
    if untrusted and not trusted:
        raise ValueError(
            f"{path}: refused: the model names classes that are not trusted: {', '.join(untrusted)} "
            f"(trusted: registered methods and components and the classes plugins declare; is the plugin that "
            f"provides them installed? pass trusted=True, or mlcore predict --trust, only for a file you trust){written_by}"
        )
    try:
        estimator = skops.io.loads(payload, trusted=sorted(allowed | set(named)) if trusted else sorted(allowed))
    except Exception as exc:  # a missing module, a class without the saved attributes, bad arrays
        raise ValueError(f"{path}: the estimator cannot be rebuilt ({type(exc).__name__}: {_one_line(exc)}){written_by}") from exc
    if _type_name(type(estimator)) != manifest["estimator"]:
        raise ValueError(
            f"{path}: {_MANIFEST} names estimator {manifest['estimator']} but the payload holds a "
            f"{_type_name(type(estimator))}"
        )
    _require_estimator(path, estimator)
    return estimator


def _trusted_names(extra) -> list[str]:
    if isinstance(extra, (str, type)):
        extra = [extra]
    return trusted_types() + _names(extra)


def _load_pickle(path: str):
    """The pre-skops format (and any ``format="joblib"`` file): unpickled, so only on ``trusted=True``."""
    import joblib

    try:
        content = joblib.load(path)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{path}: the model refers to code that is not installed ({_one_line(exc)})") from exc
    except Exception as exc:  # whatever unpickling raises on a file that is not a pickle
        raise ValueError(f"{path} is not a multilabel_core model file ({type(exc).__name__}: {_one_line(exc)})") from exc
    if not isinstance(content, dict) or content.get("format") != FORMAT or "estimator" not in content:
        raise ValueError(f"{path} is not a multilabel_core model file (no {FORMAT!r} header)")
    _require_estimator(path, content["estimator"])
    if content.get("multilabel_core") != __version__:
        _warn_version(path, content.get("multilabel_core"), content.get("method"))
    return content["estimator"]


def _warn_version(path: str, written: str, method) -> None:
    warnings.warn(
        f"{path} was written by multilabel_core {written} (method {method!r}) and is loaded by {__version__}; "
        f"refit it if predictions look wrong",
        ModelVersionWarning,
        stacklevel=3,
    )


def _one_line(exc) -> str:
    return " ".join(str(exc).split())
