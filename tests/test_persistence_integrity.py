"""Model files are checked for what they claim: their size, their labels and their state.

Zip bombs are built here (never committed): a 1 MB file deflating to a gigabyte of zeros, a
3.1 MB one deflating to 3 GB, and a 620 KB file whose payload carries 600 MB of stored padding
beside a real model.  Each is refused with one error before it is inflated, and the peak memory
of the process that loads it (its own maximum resident set, measured in a subprocess) stays
under 300 MB.  A manifest that names another method or class than its payload holds is refused,
and so is every tampered fitted attribute of every registered method: for each array the class
declares, a changed dtype, a changed number of axes and a changed length of every axis declared
in terms of d, L, n or another attribute; for every declared attribute, a value of another type.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
import re
import struct
import subprocess
import sys
import textwrap
import warnings
import zipfile
import zlib

import numpy as np
import pytest
import scipy.sparse as sp
import skops.io

import multilabel_core
from multilabel_core import persistence
from multilabel_core.cli import main
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.persistence import declared_state, load_model, save_model
from multilabel_core.plugins import list_methods
from multilabel_core_plugins.br import BinaryRelevance

MiB = 1 << 20
PEAK_LIMIT_MB = 300


@pytest.fixture(scope="module")
def data():
    # d, L and n all differ, and differ from every other length in the fitted states.
    dataset = make_correlated_multilabel(n_samples=37, n_features=6, n_labels=4, random_state=0)
    return dataset.X, dataset.Y


@pytest.fixture(scope="module")
def br_file(data, tmp_path_factory):
    path = save_model(BinaryRelevance().fit(*data), tmp_path_factory.mktemp("br") / "br.mlcore")
    with zipfile.ZipFile(path) as archive:
        return archive.read("manifest.json"), archive.read("estimator.skops")


def archive(manifest: bytes, payload: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as written:
        written.writestr("manifest.json", manifest)
        written.writestr("estimator.skops", payload)
    return out.getvalue()


def edited_manifest(manifest: bytes, **fields) -> bytes:
    return json.dumps({**json.loads(manifest), **fields}).encode()


def refused(path, needle: str) -> str:
    """load_model raises one ValueError naming the file and holding ``needle``."""
    with pytest.raises(ValueError) as info:
        load_model(path)
    message = str(info.value)
    assert str(path) in message and needle in message and "\n" not in message, message
    return message


# -- building zip bombs without inflating them ---------------------------------------


def crc32_of_zeros(n_mib: int, start: int = 0) -> int:
    """crc32 of ``n_mib`` MiB of zeros continuing from ``start``, without reading them.

    For fixed data, crc32(data, c) is affine in c over GF(2): appending one MiB of zeros maps
    c to A c ^ b.  The map is found from 33 evaluations and raised to the n-th power by squaring.
    """
    block = bytes(MiB)
    offset = zlib.crc32(block, 0)
    columns = [zlib.crc32(block, 1 << bit) ^ offset for bit in range(32)]

    def apply(matrix, vector):
        out = 0
        for bit in range(32):
            if vector >> bit & 1:
                out ^= matrix[bit]
        return out

    power, power_offset = [1 << bit for bit in range(32)], 0
    while n_mib:
        if n_mib & 1:
            power, power_offset = [apply(columns, column) for column in power], apply(columns, power_offset) ^ offset
        columns, offset = [apply(columns, column) for column in columns], apply(columns, offset) ^ offset
        n_mib >>= 1
    return apply(power, start) ^ power_offset


def deflated_zeros(n_mib: int, prefix: bytes = b"", suffix: bytes = b"") -> tuple[bytes, int, int]:
    """(raw deflate stream, crc32, inflated size) of prefix + n_mib MiB of zeros + suffix.

    Each MiB of zeros is compressed and sync-flushed; once the compressor's window holds only
    zeros, every such piece is the same bytes, so the rest are copies of it.
    """
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    head = compressor.compress(prefix)
    pieces = [compressor.compress(bytes(MiB)) + compressor.flush(zlib.Z_SYNC_FLUSH) for _ in range(min(n_mib, 3))]
    if n_mib > 3:
        assert pieces[1] == pieces[2]  # the steady state the copies rely on
        pieces += [pieces[2]] * (n_mib - 3)
    tail = compressor.compress(suffix) + compressor.flush()
    crc = zlib.crc32(suffix, crc32_of_zeros(n_mib, zlib.crc32(prefix)))
    return head + b"".join(pieces) + tail, crc, len(prefix) + n_mib * MiB + len(suffix)


LOCAL = struct.Struct("<4s5H3L2H")
CENTRAL = struct.Struct("<4s6H3L5H2L")
END = struct.Struct("<4s4H2LH")


def zip_of(members) -> bytes:
    """A zip archive of (name, bytes as stored, method, crc32, inflated size) members."""
    out, central = io.BytesIO(), []
    for name, content, method, crc, size in members:
        offset, encoded = out.tell(), name.encode()
        out.write(LOCAL.pack(b"PK\x03\x04", 20, 0, method, 0, 0x21, crc, len(content), size, len(encoded), 0) + encoded)
        out.write(content)
        central.append(
            CENTRAL.pack(b"PK\x01\x02", 20, 20, 0, method, 0, 0x21, crc, len(content), size, len(encoded), 0, 0, 0, 0, 0, offset)
            + encoded
        )
    start = out.tell()
    out.write(b"".join(central))
    out.write(END.pack(b"PK\x05\x06", 0, 0, len(central), len(central), out.tell() - start, start, 0))
    return out.getvalue()


def stored(name: str, content: bytes):
    return name, content, zipfile.ZIP_STORED, zlib.crc32(content), len(content)


def zero_bomb(manifest: bytes, n_mib: int) -> bytes:
    """A real manifest beside a payload that deflates to ``n_mib`` MiB of zeros."""
    content, crc, size = deflated_zeros(n_mib)
    return zip_of([stored("manifest.json", manifest), ("estimator.skops", content, zipfile.ZIP_DEFLATED, crc, size)])


def padded_bomb(manifest: bytes, payload: bytes, n_mib: int) -> bytes:
    """A real model's payload with a stored member of ``n_mib`` MiB of zeros added, all deflated."""
    with zipfile.ZipFile(io.BytesIO(payload)) as inner:
        members = [(info.filename, inner.read(info.filename)) for info in inner.infolist()]
    body, central = io.BytesIO(), []
    for name, content in members + [("padding.npy", None)]:
        offset, encoded = body.tell(), name.encode()
        size = n_mib * MiB if content is None else len(content)
        crc = crc32_of_zeros(n_mib) if content is None else zlib.crc32(content)
        body.write(LOCAL.pack(b"PK\x03\x04", 20, 0, 0, 0, 0x21, crc, size, size, len(encoded), 0) + encoded)
        body.write(content or b"")
        central.append(CENTRAL.pack(b"PK\x01\x02", 20, 20, 0, 0, 0, 0x21, crc, size, size, len(encoded), 0, 0, 0, 0, 0, offset) + encoded)
    directory = b"".join(central)
    start = body.tell() + n_mib * MiB
    suffix = directory + END.pack(b"PK\x05\x06", 0, 0, len(central), len(central), len(directory), start, 0)
    content, crc, size = deflated_zeros(n_mib, body.getvalue(), suffix)
    return zip_of([stored("manifest.json", manifest), ("estimator.skops", content, zipfile.ZIP_DEFLATED, crc, size)])


def test_the_bomb_builders_make_what_they_say(br_file):
    """At a few MiB the same builders give archives whose members inflate to the zeros (and the padded model) claimed."""
    manifest, payload = br_file
    for n_mib in (1, 5):
        with zipfile.ZipFile(io.BytesIO(zero_bomb(manifest, n_mib))) as small:
            assert small.read("estimator.skops") == bytes(n_mib * MiB)  # zipfile checks the crc too
        with zipfile.ZipFile(io.BytesIO(padded_bomb(manifest, payload, n_mib))) as small:
            inner = zipfile.ZipFile(io.BytesIO(small.read("estimator.skops")))
            assert inner.testzip() is None and inner.read("padding.npy") == bytes(n_mib * MiB)
            assert inner.namelist()[:-1] == zipfile.ZipFile(io.BytesIO(payload)).namelist()
    assert crc32_of_zeros(37, 12345) == zlib.crc32(bytes(37 * MiB), 12345)


@pytest.fixture(scope="module")
def bombs(br_file, tmp_path_factory):
    """name -> (path, inflated size) of the bombs of the issue."""
    manifest, payload = br_file
    folder = tmp_path_factory.mktemp("bombs")
    made = {}
    for name, content in [
        ("1MB-to-1GiB-of-zeros", zero_bomb(manifest, 1024)),
        ("3MB-to-3GB-of-zeros", zero_bomb(manifest, 3000)),
        ("620KB-with-600MB-of-stored-padding", padded_bomb(manifest, payload, 600)),
    ]:
        path = folder / f"{name}.mlcore"
        path.write_bytes(content)
        with zipfile.ZipFile(path) as written:
            made[name] = (path, written.getinfo("estimator.skops").file_size)
    # The lying one: the 1 GiB stream declares 1 MiB in both headers (ratio 1, under the floor).
    content = bytearray(made["1MB-to-1GiB-of-zeros"][0].read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(content))) as written:
        info = written.getinfo("estimator.skops")
    for offset in (info.header_offset + 22, content.rfind(b"PK\x01\x02") + 24):
        content[offset : offset + 4] = MiB.to_bytes(4, "little")
    path = folder / "lying-1MiB-header-over-1GiB.mlcore"
    path.write_bytes(bytes(content))
    made["lying-1MiB-header-over-1GiB"] = (path, 1024 * MiB)
    return made


def test_the_bombs_are_those_of_the_issue(bombs):
    sizes = {name: (path.stat().st_size, inflated) for name, (path, inflated) in bombs.items()}
    assert sizes["1MB-to-1GiB-of-zeros"][0] < 1.1e6 and sizes["1MB-to-1GiB-of-zeros"][1] == 1 << 30
    assert 3.0e6 < sizes["3MB-to-3GB-of-zeros"][0] < 3.2e6 and sizes["3MB-to-3GB-of-zeros"][1] > 3.1e9
    assert sizes["620KB-with-600MB-of-stored-padding"][0] < 650e3 and sizes["620KB-with-600MB-of-stored-padding"][1] > 600 * MiB


LOADER = textwrap.dedent(
    """
    import json, resource, sys
    from multilabel_core.persistence import load_model
    from multilabel_core.plugins import list_methods

    list_methods()  # what any command imports before it loads a model
    try:
        load_model(sys.argv[1])
        outcome = "LOADED"
    except ValueError as exc:
        outcome = "ValueError: " + str(exc)
    except BaseException as exc:
        outcome = type(exc).__name__ + ": " + str(exc)
    # VmHWM: this process image's own peak.  ru_maxrss carries the forking parent's peak across fork and exec on
    # Linux, so from a large test worker it reports the worker's (504 MB in a fresh-clone CI run), not the load's.
    try:
        with open("/proc/self/status") as status:
            peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux
    print(json.dumps([peak, outcome]))
    """
)


def peak_of_loading(path) -> tuple[float, str]:
    """(the peak resident memory in MB of a fresh process that loads the file, the outcome)."""
    # From the file's folder, not the checkout: `python -c` puts the working directory first on sys.path, and a
    # checkout installed without -e (CI) has an unbuilt multilabel_core/ there.
    result = subprocess.run([sys.executable, "-c", LOADER, str(path)], capture_output=True, text=True, timeout=600,
                            cwd=Path(path).parent)  # fmt: skip
    assert result.returncode == 0, result.stderr
    peak, outcome = json.loads(result.stdout.splitlines()[-1])
    return peak, outcome


REFUSALS = {
    "1MB-to-1GiB-of-zeros": "may inflate to at most 100 times its compressed size",
    "3MB-to-3GB-of-zeros": "may inflate to at most 100 times its compressed size",
    "620KB-with-600MB-of-stored-padding": "may inflate to at most 100 times its compressed size",
    "lying-1MiB-header-over-1GiB": "estimator.skops cannot be read from the archive",
}


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in kilobytes on Linux")
@pytest.mark.parametrize("name", list(REFUSALS))
def test_a_zip_bomb_is_refused_with_one_error_under_300_mb(bombs, name):
    path, _ = bombs[name]
    peak_mb, outcome = peak_of_loading(path)
    assert outcome.startswith(f"ValueError: {path}") and REFUSALS[name] in outcome and "\n" not in outcome, outcome
    assert peak_mb < PEAK_LIMIT_MB, f"{name}: {peak_mb:.0f} MB"


def test_the_cli_refuses_a_zip_bomb_in_one_line(bombs, capsys):
    path, _ = bombs["1MB-to-1GiB-of-zeros"]
    code = main(["predict", str(path), "synthetic"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.startswith("mlcore: error:") and captured.err.count("\n") == 1 and "max_ratio" in captured.err


def test_the_ratio_cap_can_be_raised_for_a_trusted_file(tmp_path, br_file, monkeypatch):
    """Past the ratio check, the padding is still refused: the payload holds bytes its schema never names."""
    manifest, payload = br_file
    path = tmp_path / "padded.mlcore"
    path.write_bytes(padded_bomb(manifest, payload, 4))
    refused(path, "may inflate to at most 100 times")
    with pytest.raises(ValueError, match="1 member\\(s\\) its schema never names \\('padding.npy'"):
        load_model(path, max_ratio=5000)
    monkeypatch.setenv("MULTILABEL_CORE_MODEL_MAX_RATIO", "5000")
    refused(path, "its schema never names")


@pytest.mark.parametrize("bad", [0, 0.5, float("nan"), float("inf"), "many", True])
def test_a_bad_ratio_cap_is_a_clear_error(tmp_path, br_file, bad, monkeypatch):
    path = tmp_path / "br.mlcore"
    path.write_bytes(archive(*br_file))
    with pytest.raises(ValueError, match="max_ratio must be a finite number of at least 1"):
        load_model(path, max_ratio=bad)
    monkeypatch.setenv("MULTILABEL_CORE_MODEL_MAX_RATIO", "lots")
    with pytest.raises(ValueError, match="MULTILABEL_CORE_MODEL_MAX_RATIO must be a finite number"):
        load_model(path)


# -- the payload is the model and nothing else ---------------------------------------


def inner_members(payload: bytes) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(io.BytesIO(payload)) as inner:
        return [(info.filename, inner.read(info.filename)) for info in inner.infolist()]


def test_padding_within_the_ratio_is_refused(tmp_path, br_file):
    """Incompressible padding passes the ratio; it is refused wherever it sits in the payload."""
    manifest, payload = br_file
    noise = np.random.default_rng(0).bytes(2 * MiB)
    members = inner_members(payload)
    variants = {
        "an unnamed member": (zip_of([stored(n, c) for n, c in members] + [stored("extra.npy", noise)]), "its schema never names ('extra.npy'"),
        # (zipfile finds the end record in the last 64 KiB only: more after it is not a zip at all)
        "bytes after the end record": (payload + noise[:60000], "holds padding, refused"),
        "bytes before the directory": (
            zip_of([stored(n, c) for n, c in members]).replace(b"PK\x01\x02", noise + b"PK\x01\x02", 1), "holds padding"
        ),
    }
    for what, (padded, needle) in variants.items():
        path = tmp_path / "padded.mlcore"
        path.write_bytes(archive(manifest, padded))
        refused(path, needle)
    # The same members without padding load: the checks read the layout, not the builder.
    path.write_bytes(archive(manifest, zip_of([stored(n, c) for n, c in members])))
    assert isinstance(load_model(path), BinaryRelevance)


def test_an_archive_with_more_members_or_a_large_directory_is_refused_before_it_is_read(tmp_path, br_file):
    manifest, payload = br_file
    path = tmp_path / "three.mlcore"
    path.write_bytes(zip_of([stored("manifest.json", manifest), stored("estimator.skops", payload), stored("x", b"")]))
    refused(path, "lists 3 member(s)")
    path.write_bytes(zip_of([stored("manifest.json", manifest), stored("manifest.json", manifest)]))
    refused(path, "once each")
    # Directory records with 40 KB names: zipfile would read and build them whole.
    path.write_bytes(zip_of([stored("m" * 40000, manifest), stored("e" * 40000, payload)]))
    refused(path, "bytes of directory")


def test_a_mostly_zero_model_is_stored_so_that_it_loads_under_the_default_caps(tmp_path):
    """Zeros deflate about 1000:1: save_model stores such a payload rather than write a file over the ratio."""
    rng = np.random.default_rng(0)
    X = sp.random(30, 300_000, density=2e-5, random_state=0, format="csr") + sp.csr_matrix((np.ones(30), (np.arange(30), np.zeros(30, int))), shape=(30, 300_000))
    Y = (rng.random((30, 3)) < 0.5).astype(int)
    Y[0], Y[1] = 1, 0
    model = BinaryRelevance().fit(X, Y)
    assert np.count_nonzero(model.coef_) < 0.001 * model.coef_.size  # the unseen columns' weights are zero
    path = save_model(model, tmp_path / "sparse.mlcore")
    with zipfile.ZipFile(path) as written:
        info = written.getinfo("estimator.skops")
    assert info.compress_type == zipfile.ZIP_STORED and info.file_size > 7e6
    np.testing.assert_array_equal(load_model(path).coef_, model.coef_)
    dense = save_model(BinaryRelevance().fit(np.asarray(X[:, :50].todense()) + rng.random((30, 50)), Y), tmp_path / "dense.mlcore")
    with zipfile.ZipFile(dense) as written:
        assert written.getinfo("estimator.skops").compress_type == zipfile.ZIP_DEFLATED


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in kilobytes on Linux")
def test_loading_peaks_within_a_small_multiple_of_the_model(tmp_path, data, br_file):
    """A model of 30 MB of weights: loading it peaks at most four times that above loading a tiny one."""
    import attrs

    X, Y = data
    model = BinaryRelevance().fit(X, Y)
    d = 1_000_000
    coef = np.random.default_rng(0).standard_normal((d, Y.shape[1]))
    # A state of the declared shapes, as a fit on a million features would leave.
    vars(model).update(coef_=coef, n_features_in_=d, solution_=attrs.evolve(model.solution_, coef=coef))
    path = save_model(model, tmp_path / "wide.mlcore")
    tiny = tmp_path / "tiny.mlcore"
    tiny.write_bytes(archive(*br_file))
    (baseline_mb, small), (peak_mb, outcome) = peak_of_loading(tiny), peak_of_loading(path)
    assert small == outcome == "LOADED", (small, outcome)
    true_mb = coef.nbytes / MiB
    assert peak_mb - baseline_mb < 4 * true_mb, f"baseline {baseline_mb:.0f} MB, peak {peak_mb:.0f} MB, model {true_mb:.0f} MB"


# -- the manifest against the payload --------------------------------------------------


def renamed(payload: bytes, module: str, name: str) -> bytes:
    """The payload with its root class renamed (what a hand-edited file does)."""
    members = dict(inner_members(payload))
    schema = json.loads(members["schema.json"])
    schema.update(__module__=module, __class__=name)
    members["schema.json"] = json.dumps(schema).encode()
    return zip_of([stored(n, c) for n, c in members.items()])


def test_a_manifest_naming_another_method_is_refused(tmp_path, br_file, data):
    manifest, payload = br_file
    path = tmp_path / "claims-mlrl.mlcore"
    path.write_bytes(archive(edited_manifest(manifest, method="mlrl"), payload))
    message = refused(path, "manifest.json names method 'mlrl'")
    assert "multilabel_core_plugins.mlrl.estimators.MLRL" in message and "BinaryRelevance" in message
    with pytest.raises(ValueError, match="not written: method 'mlrl' is a .*MLRL, but the estimator is a .*BinaryRelevance"):
        save_model(BinaryRelevance().fit(*data), tmp_path / "x.mlcore", method="mlrl")
    with pytest.raises(ValueError, match="not written: method 'no_such' is not registered"):
        save_model(BinaryRelevance().fit(*data), tmp_path / "x.mlcore", method="no_such")


OTHER_CLASSES = sorted(
    {(spec.estimator.__module__, spec.estimator.__name__) for spec in list_methods() if spec.estimator is not BinaryRelevance}
)


@pytest.mark.parametrize("module, name", OTHER_CLASSES, ids=[name for _, name in OTHER_CLASSES])
def test_a_payload_renamed_to_another_trusted_class_is_refused(tmp_path, br_file, module, name):
    """br's state inside another registered class, the manifest edited to match: refused, not rebuilt and predicted with."""
    manifest, payload = br_file
    method = next(spec.name for spec in list_methods() if spec.estimator.__name__ == name and spec.estimator.__module__ == module)
    path = tmp_path / f"renamed-{name}.mlcore"
    path.write_bytes(archive(edited_manifest(manifest, method=method, estimator=f"{module}.{name}"), renamed(payload, module, name)))
    refused(path, f"does not hold a {name}" if name != "ComposedEstimator" else "")


# -- the state against its declaration ----------------------------------------------


def tampered_file(tmp_path, model, manifest: bytes, **replaced) -> str:
    """The model's file with some of its attributes replaced, written past save_model's own check."""
    saved = {name: vars(model)[name] for name in replaced if name in vars(model)}
    vars(model).update(replaced)
    try:
        payload = skops.io.dumps(model)
    finally:
        for name in replaced:
            vars(model).pop(name, None)
        vars(model).update(saved)
    path = tmp_path / "tampered.mlcore"
    path.write_bytes(archive(manifest, payload))
    return path


def test_coef_a_string_is_refused_at_load_naming_it(tmp_path, data, capsys):
    X, Y = data
    model = BinaryRelevance().fit(X, Y)
    manifest = zipfile.ZipFile(save_model(model, tmp_path / "br.mlcore")).read("manifest.json")
    path = tmp_path / "string.mlcore"
    path.write_bytes(tampered_file(tmp_path, model, manifest, coef_="abc").read_bytes())
    message = refused(path, "the fitted attribute coef_ of the BinaryRelevance is a str ('abc'), not float[d, L]")
    assert "d = 6 from n_features_in_, L = 4 from n_labels_" in message
    code = main(["predict", str(path), "synthetic"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "coef_" in err
    with pytest.raises(ValueError, match="not written: the fitted attribute coef_ of the BinaryRelevance is a str"):
        vars(model)["coef_"] = "abc"
        save_model(model, tmp_path / "again.mlcore")


def declared_axes(text: str) -> list[str]:
    """The terms of the first array in a declaration (``list[float] | float[n, L]`` -> ['n', 'L'])."""
    match = re.search(r"\b(?:float|int|bool|str)(?:8|32|64)?\[([^\[\]]*)\]", text)
    return [term.strip() for term in match.group(1).split(",")] if match else []


def tampered_arrays(value):
    """(what, array) pairs: another dtype kind, text, one more axis, and each axis one longer."""
    if sp.issparse(value):
        yield "int data", value.astype(np.int64)
        yield "one more row", sp.vstack([value, value[:1]], format=value.format)
        yield "one more column", sp.hstack([value, value[:, :1]], format=value.format)
        return
    other = np.float64 if value.dtype.kind in "biu" else np.int64
    yield f"{np.dtype(other)}", value.astype(other)
    yield "text", value.astype(str)
    yield "one more axis", value[..., None]
    for axis in range(value.ndim):
        yield f"axis {axis} one longer", np.concatenate([value, np.take(value, [0], axis=axis)], axis=axis)


def fitted(method: str, X, Y):
    model = multilabel_core.make_method(method)
    if "random_state" in model.get_params():
        model.set_params(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence on 37 rows is not what this test is about
        return model.fit(X, Y)


METHODS = [spec.name for spec in list_methods()]
CORE_STATE = declared_state(multilabel_core.ComposedEstimator)


@pytest.mark.parametrize("method", METHODS)
def test_every_tampered_fitted_attribute_of_every_method_is_refused(tmp_path, data, method):
    X, Y = data
    model = fitted(method, X, Y)
    cls = type(model)
    declared = declared_state(cls)
    path = save_model(model, tmp_path / f"{method}.mlcore")
    manifest = zipfile.ZipFile(path).read("manifest.json")
    fitted_names = [name for name in vars(model) if name.endswith("_")]
    arrays = [name for name in fitted_names if isinstance(vars(model)[name], np.ndarray) or sp.issparse(vars(model)[name])]
    undeclared = sorted(set(arrays) - set(declared))
    assert not undeclared, f"{cls.__name__} does not declare {undeclared}: add them to its fitted_state"
    missed, checked = [], 0

    def expect_refusal(name, what, file, needle=None):
        nonlocal checked
        checked += 1
        try:
            load_model(file)
        except ValueError as exc:
            message = str(exc)
            # A length that disagrees with another attribute may be reported at either: both are named.
            named = needle or f"the fitted attribute {name} of the {cls.__name__}"
            if "\n" in message or (named not in message and f"from {name}," not in message and f"from {name})" not in message):
                missed.append(f"{name} ({what}): {message}")
        else:
            missed.append(f"{name} ({what}): loaded")

    for name in arrays:
        value = vars(model)[name]
        axes = declared_axes(declared[name])
        for what, bad in tampered_arrays(value):
            axis = re.fullmatch(r"axis (\d+) one longer|one more (row|column)", what)
            if axis is not None:
                index = int(axis.group(1)) if axis.group(1) else {"row": 0, "column": 1}[axis.group(2)]
                if axes[index] == "*":
                    continue  # a length the class leaves free
            expect_refusal(name, what, tampered_file(tmp_path, model, manifest, **{name: bad}))
    # The core's own declarations are the same code for every method: held on a linear and a kernel one.
    own = [name for name in declared if method in ("br", "bsvm") or CORE_STATE.get(name) != declared[name]]
    for name in [name for name in own if name in vars(model) and declared[name] != "any"]:
        other = 7 if isinstance(vars(model)[name], str) else "not this"
        expect_refusal(name, f"replaced by {other!r}", tampered_file(tmp_path, model, manifest, **{name: other}))
    for name in [name for name, (_, required, _) in persistence._state_of(cls).items() if required and name in own]:
        expect_refusal(name, "removed", without(tmp_path, model, manifest, name), needle=f"lacks the fitted attribute {name}")
    assert not missed, f"{len(missed)} of {checked} tampered files of {method} were not refused naming the attribute:\n" + "\n".join(missed)
    assert checked >= len(arrays)


def without(tmp_path, model, manifest: bytes, name: str):
    """The model's file without one of its attributes."""
    saved = vars(model).pop(name)
    try:
        path = tmp_path / "without.mlcore"
        path.write_bytes(archive(manifest, skops.io.dumps(model)))
    finally:
        vars(model)[name] = saved
    return path


def test_an_attribute_hiding_a_method_is_refused(tmp_path, data):
    """An instance attribute named like a method would be called instead of it at predict time."""
    model = fitted("ovr_linear", *data)
    manifest = zipfile.ZipFile(save_model(model, tmp_path / "ovr.mlcore")).read("manifest.json")
    inner = model.estimators_[1]  # a scikit-learn LinearSVC: no declared state, the rule holds for every object
    vars(inner)["decision_function"] = np.zeros(3)
    try:
        path = tampered_file(tmp_path, model, manifest)
    finally:
        del vars(inner)["decision_function"]
    refused(path, "the LinearSVC at estimators_[1] sets 'decision_function', which would hide its class's method")
    # On a multi-label estimator itself it is neither a parameter nor a fitted attribute.
    refused(tampered_file(tmp_path, model, manifest, predict=np.zeros(3)), "holds 'predict', neither parameters of OneVsRestLinear")


def test_a_malformed_sparse_matrix_is_refused(tmp_path, data):
    """Indices outside the shape would be read out of bounds by the kernels: refused at load, not at predict."""
    X, Y = data
    model = fitted("mlknn", sp.csr_matrix(X), Y)
    manifest = zipfile.ZipFile(save_model(model, tmp_path / "mlknn.mlcore")).read("manifest.json")
    good = model.X_fit_
    bad = sp.csr_matrix((good.data, good.indices.copy(), good.indptr), shape=good.shape)
    bad.indices[0] = 10**6  # past the 6 columns; scipy's constructor does not look
    refused(tampered_file(tmp_path, model, manifest, X_fit_=bad), "the sparse matrix at X_fit_ is malformed")


def test_parameters_the_class_refuses_are_refused(tmp_path, data):
    model = BinaryRelevance().fit(*data)
    manifest = zipfile.ZipFile(save_model(model, tmp_path / "br.mlcore")).read("manifest.json")
    refused(tampered_file(tmp_path, model, manifest, C="abc"), "has parameters its class refuses")
    path = without(tmp_path, model, manifest, "C")
    refused(path, "the BinaryRelevance lacks its parameter(s) C")


def test_a_wrapped_method_is_checked_too(tmp_path, data):
    """Preprocessed(br): the inner estimator's state is checked like the outer one's."""
    X, Y = data
    model = multilabel_core.make_method("br", preprocess="standardize").fit(X, Y)
    path = save_model(model, tmp_path / "scaled.mlcore")
    manifest = zipfile.ZipFile(path).read("manifest.json")
    assert isinstance(load_model(path), type(model))
    inner = model.estimator_
    saved = inner.coef_
    inner.coef_ = saved[:-1]
    try:
        payload = skops.io.dumps(model)
    finally:
        inner.coef_ = saved
    (tmp_path / "bad.mlcore").write_bytes(archive(manifest, payload))
    refused(tmp_path / "bad.mlcore", "the fitted attribute estimator_.coef_ of the BinaryRelevance at estimator_ is a float64 array of shape (5, 4)")


class Scaled(BinaryRelevance):
    """A third-party method with state of its own, declared the way a plugin declares it."""

    fitted_state = {"scales_": "float[L]", "?support_": "int[*] in [0, d)"}

    def _fit(self, X, Y):
        super()._fit(X, Y)
        self.scales_ = np.linspace(1.0, 2.0, Y.shape[1])
        self.support_ = np.arange(X.shape[1])

    def _decision_function(self, X):
        return super()._decision_function(X) * self.scales_


def test_a_plugin_declares_its_own_state(tmp_path, data):
    model = Scaled().fit(*data)
    assert declared_state(Scaled)["scales_"] == "float[L]" and declared_state(Scaled)["coef_"] == "float[d, L]"
    path = save_model(model, tmp_path / "scaled.mlcore", trusted_types=[Scaled])
    np.testing.assert_array_equal(load_model(path, trusted_types=[Scaled]).scales_, model.scales_)
    manifest = zipfile.ZipFile(path).read("manifest.json")
    for replaced, needle in [
        ({"scales_": np.ones(5)}, "scales_ of the Scaled is a float64 array of shape (5,), not float[L] (L = 4 from n_labels_)"),
        ({"support_": np.arange(7)}, "support_ of the Scaled is an int64 array of shape (7,) with values from 0 to 6, outside [0, 6)"),
    ]:
        with pytest.raises(ValueError, match=re.escape(needle)):
            load_model(tampered_file(tmp_path, model, manifest, **replaced), trusted_types=[Scaled])
    with pytest.raises(ValueError, match="lacks the fitted attribute scales_"):
        load_model(without(tmp_path, model, manifest, "scales_"), trusted_types=[Scaled])
    assert isinstance(load_model(without(tmp_path, model, manifest, "support_"), trusted_types=[Scaled]), Scaled)


@pytest.mark.parametrize("declaration, needle", [
    ("float[n, L", "where ] was expected"), ("float[n; L]", "cannot read"), ("sparse int", "not an array"), ("int in", "after its end"),
])  # fmt: skip
def test_a_declaration_that_does_not_parse_names_the_class(declaration, needle):
    broken = type("Broken", (BinaryRelevance,), {"fitted_state": {"x_": declaration}})
    with pytest.raises(ValueError, match=f"Broken: fitted attribute x_: .*{needle}"):
        declared_state(broken)


def test_an_unfitted_estimator_round_trips(tmp_path):
    path = save_model(BinaryRelevance(C=0.25), tmp_path / "unfitted.mlcore")
    assert load_model(path).get_params()["C"] == 0.25


@pytest.mark.parametrize("method", METHODS)
def test_no_method_is_refused_on_sparse_float32_data(tmp_path, data, method):
    """The declarations hold for other inputs than the tamper test's: CSR float32 rows."""
    X, Y = data
    model = fitted(method, sp.csr_matrix(X.astype(np.float32)), Y)
    assert type(load_model(save_model(model, tmp_path / f"{method}.mlcore"))) is type(model)
