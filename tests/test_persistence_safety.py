"""Model files never run code when loaded.

A crafted pickle and a crafted skops payload each carry a command that creates a marker file;
load_model and ``mlcore predict`` must refuse them and the marker must not exist afterwards.
Every corrupt or foreign file is one ValueError naming the file (one line and exit 2 from the
CLI); every registered method round-trips through the default format with no class trusted
beyond the registry's list; a third-party plugin's own class round-trips once it declares it
through the ``register_trusted_types`` hook, and is refused when it does not.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import pickle
import shlex
import subprocess
import sys
import types
import warnings
import zipfile
from pathlib import Path

import joblib
import numpy as np
import pytest
import skops.io

import multilabel_core
from multilabel_core import persistence
from multilabel_core.cli import main
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.persistence import load_model, save_model, trusted_types
from multilabel_core.plugins import DISABLE_AUTOLOAD_ENV, get_plugin_manager, list_methods, reset_plugin_manager
from multilabel_core.testing.checks import PERSISTENCE_FALLBACK_RTOL, _state_difference, check_method
from multilabel_core.testing.rounding import score_rounding_bound
from multilabel_core_plugins.br import BinaryRelevance

BR_CLASS = "multilabel_core_plugins.br.estimator.BinaryRelevance"


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=40, n_features=5, n_labels=3, random_state=0)
    return dataset.X, dataset.Y


@pytest.fixture(scope="module")
def model_bytes(data, tmp_path_factory):
    path = save_model(BinaryRelevance().fit(*data), tmp_path_factory.mktemp("model") / "br.mlcore")
    return Path(path).read_bytes()


def cli(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_clear_error(capsys, path, needle):
    """load_model: one ValueError naming the file and the problem; the CLI: one line, exit 2."""
    with pytest.raises(ValueError) as info:
        load_model(path)
    message = str(info.value)
    assert str(path) in message and needle in message, message
    assert "\n" not in message
    code, out, err = cli(capsys, "predict", str(path), "synthetic")
    assert code == 2 and out == ""
    assert err.startswith("mlcore: error:") and err.count("\n") == 1 and needle in err, err
    return message


# -- hostile files ----------------------------------------------------------------


class RunsACommand:
    """Unpickling this object calls os.system(command): what a hostile model file does."""

    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


def touch(marker: Path) -> str:
    return f"touch {shlex.quote(str(marker))}"


def hostile_pickle(path: Path, marker: Path, how: str) -> Path:
    content = {"format": persistence.FORMAT, "multilabel_core": multilabel_core.__version__, "method": "br",
               "estimator": RunsACommand(touch(marker))}  # fmt: skip
    if how == "joblib":
        joblib.dump(content, path)
    elif how == "joblib-compressed":
        joblib.dump(content, path, compress=3)
    else:
        path.write_bytes(pickle.dumps(content, protocol=int(how[-1])))
    return path


PICKLES = ["joblib", "joblib-compressed", "protocol-0", "protocol-2", "protocol-5"]


@pytest.mark.parametrize("how", PICKLES)
def test_the_crafted_pickle_runs_its_command_when_unpickled(tmp_path, how):
    """The payloads below are live: unpickled (what trusted=True does), they create the marker."""
    marker = tmp_path / "ran"
    path = hostile_pickle(tmp_path / "evil.joblib", marker, how)
    with pytest.raises(ValueError, match="holds a int, not an estimator"):  # os.system's exit status
        load_model(path, trusted=True)
    assert marker.exists()


@pytest.mark.parametrize("how", PICKLES)
def test_load_model_refuses_a_crafted_pickle_without_unpickling_it(tmp_path, how):
    marker = tmp_path / "ran"
    for name in ("evil.joblib", "evil.mlcore"):  # by content: the suffix does not matter
        path = hostile_pickle(tmp_path / name, marker, how)
        with pytest.raises(ValueError, match=f"{name} is a pickle \\(joblib\\) file.*not read.*trusted=True"):
            load_model(path)
    assert not marker.exists()


def test_mlcore_predict_refuses_a_crafted_pickle(tmp_path):
    marker = tmp_path / "ran"
    path = hostile_pickle(tmp_path / "evil.joblib", marker, "joblib")
    result = subprocess.run(
        [sys.executable, "-m", "multilabel_core.cli", "predict", str(path), "synthetic"],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("mlcore: error:") and result.stderr.count("\n") == 1
    assert "is a pickle (joblib) file" in result.stderr and "--trust" in result.stderr
    assert not marker.exists()


def test_predict_help_states_the_risk_of_trust(capsys):
    with pytest.raises(SystemExit):
        main(["predict", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--trust" in text and "RISK" in text and "runs any code" in text


def test_mlcore_predict_trust_reads_a_joblib_model(tmp_path, capsys):
    code, _, err = cli(capsys, "fit", "br", "synthetic", "--out", str(tmp_path / "br.mlcore"))
    assert code == 0, err
    path = save_model(load_model(tmp_path / "br.mlcore"), tmp_path / "br.joblib", format="joblib")
    code, _, err = cli(capsys, "predict", path, "synthetic")
    assert code == 2 and "is a pickle" in err
    code, out, err = cli(capsys, "predict", path, "synthetic", "--trust", "--json")
    assert code == 0, err
    assert json.loads(out)["metrics"]["average_precision"] > 0.5


def archive(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for name, content in members.items():
            out.writestr(name, content)
    return buffer.getvalue()


def manifest(**changes) -> bytes:
    fields = {"format": persistence.FORMAT, "format_version": 1, "multilabel_core": multilabel_core.__version__,
              "method": "br", "estimator": BR_CLASS, "params": {}, "skops": "0.16.0"}  # fmt: skip
    return json.dumps({**fields, **changes}).encode()


def skops_payload(schema: dict) -> bytes:
    """A skops file whose schema.json is ``schema``."""
    return archive({"schema.json": json.dumps({**schema, "protocol": 2, "_skops_version": "0.16.0"}).encode()})


def calls(function, *arguments) -> dict:
    """skops' node for ``function(*arguments)``: the loader calls it with the arguments."""
    return {
        "__class__": function.__name__,
        "__module__": function.__module__,
        "__loader__": "ConstructorFromReduceNode",
        "content": {
            "__class__": "tuple", "__module__": "builtins", "__loader__": "TupleNode",
            "content": [{"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode",
                         "content": json.dumps(a), "is_json": True} for a in arguments],
        },
    }  # fmt: skip


def test_the_crafted_skops_payload_runs_its_command_when_trusted(tmp_path):
    """The hostile skops payload is live: trusting os.system would run it."""
    marker = tmp_path / "ran"
    payload = skops_payload(calls(os.system, touch(marker)))
    assert skops.io.get_untrusted_types(data=payload) == [f"{os.system.__module__}.system"]
    assert not marker.exists()  # listing the types builds nothing
    assert skops.io.loads(payload, trusted=[f"{os.system.__module__}.system"]) == 0
    assert marker.exists()


def test_a_crafted_skops_payload_is_refused_before_it_runs(tmp_path, capsys):
    marker = tmp_path / "ran"
    path = tmp_path / "evil.mlcore"
    path.write_bytes(archive({"manifest.json": manifest(), "estimator.skops": skops_payload(calls(os.system, touch(marker)))}))
    assert_one_clear_error(capsys, path, f"names classes that are not trusted: {os.system.__module__}.system")
    assert not marker.exists()


class NotRegistered(BinaryRelevance):
    """A class no plugin registers or declares."""


def renamed_root(payload: bytes) -> bytes:
    """The skops payload of a BinaryRelevance, its root class renamed to NotRegistered."""
    members = {}
    with zipfile.ZipFile(io.BytesIO(payload)) as source:
        for name in source.namelist():
            members[name] = source.read(name)
    schema = json.loads(members["schema.json"])
    assert (schema["__module__"], schema["__class__"]) == ("multilabel_core_plugins.br.estimator", "BinaryRelevance")
    schema.update(__module__=__name__, __class__="NotRegistered")
    members["schema.json"] = json.dumps(schema).encode()
    return archive(members)


def corrupt_files(model_bytes: bytes) -> dict[str, tuple[bytes, str]]:
    """name -> (file content, what the error says)."""
    rng = np.random.default_rng(0)
    good = zipfile.ZipFile(io.BytesIO(model_bytes))
    payload = good.read("estimator.skops")
    fields = json.loads(good.read("manifest.json"))
    files = {
        "empty": (b"", "(empty)"),
        "random bytes": (rng.bytes(3000), "(not a zip archive)"),
        "zip signature then random bytes": (b"PK\x03\x04" + rng.bytes(3000), "truncated or corrupt zip archive"),
        "no manifest": (archive({"estimator.skops": payload}), "has no manifest.json"),
        "manifest not JSON": (archive({"manifest.json": b"{format: mlcore", "estimator.skops": payload}), "manifest.json is not valid JSON"),
        "manifest not UTF-8": (archive({"manifest.json": b"\xff\xfe\x00", "estimator.skops": payload}), "manifest.json is not valid JSON"),
        "manifest a list": (archive({"manifest.json": b"[1, 2]", "estimator.skops": payload}), "holds a list, not a JSON object"),
        "manifest too large": (archive({"manifest.json": manifest(pad="x" * 70000), "estimator.skops": payload}), "a manifest is at most 65536"),
        "no format": (archive({"manifest.json": b"{}", "estimator.skops": payload}), "names format None"),
        "wrong format name": (archive({"manifest.json": manifest(format="sklearn.model"), "estimator.skops": payload}), "names format 'sklearn.model'"),
        "future format version": (archive({"manifest.json": manifest(format_version=2), "estimator.skops": payload}), "model format version 2"),
        "format version a string": (archive({"manifest.json": manifest(format_version="1"), "estimator.skops": payload}), "format_version '1', not a positive integer"),
        "version not a string": (archive({"manifest.json": manifest(multilabel_core=1), "estimator.skops": payload}), "field 'multilabel_core' is 1"),
        "unknown method": (archive({"manifest.json": manifest(method="no_such_method"), "estimator.skops": payload}), "method 'no_such_method', which no installed plugin registers"),
        "no payload": (archive({"manifest.json": manifest()}), "has no estimator.skops"),
        "payload random bytes": (archive({"manifest.json": manifest(), "estimator.skops": rng.bytes(500)}), "the estimator payload is corrupt"),
        "payload without schema": (archive({"manifest.json": manifest(), "estimator.skops": archive({"x": b"1"})}), "the estimator payload is corrupt"),
        "payload names builtins.eval": (
            archive({"manifest.json": manifest(), "estimator.skops": skops.io.dumps(eval)}),
            "names classes that are not trusted: builtins.eval",
        ),
        "payload calls subprocess.run": (
            archive({"manifest.json": manifest(), "estimator.skops": skops_payload(calls(subprocess.run, "true"))}),
            "names classes that are not trusted: subprocess.run",
        ),
        "payload holds an unregistered class": (
            archive({"manifest.json": manifest(method=None), "estimator.skops": renamed_root(payload)}),
            f"names classes that are not trusted: {__name__}.NotRegistered",
        ),
        "manifest names another estimator": (
            archive({"manifest.json": manifest(estimator="multilabel_core.estimator.ComposedEstimator"), "estimator.skops": payload}),
            f"names estimator multilabel_core.estimator.ComposedEstimator but the payload holds a {BR_CLASS}",
        ),
    }  # fmt: skip
    assert fields["format"] == persistence.FORMAT  # the variants above are built on a real model file
    return files


@pytest.fixture(scope="module")
def corrupt(model_bytes):
    return corrupt_files(model_bytes)


CORRUPT_NAMES = [
    "empty", "random bytes", "zip signature then random bytes", "no manifest", "manifest not JSON",
    "manifest not UTF-8", "manifest a list", "manifest too large", "no format", "wrong format name",
    "future format version", "format version a string", "version not a string", "unknown method", "no payload",
    "payload random bytes", "payload without schema", "payload names builtins.eval", "payload calls subprocess.run",
    "payload holds an unregistered class", "manifest names another estimator",
]  # fmt: skip


def test_every_corrupt_variant_is_tested(corrupt):
    assert sorted(corrupt) == sorted(CORRUPT_NAMES)


@pytest.mark.parametrize("name", CORRUPT_NAMES)
def test_a_corrupt_or_foreign_file_is_one_clear_error(tmp_path, capsys, corrupt, name):
    content, needle = corrupt[name]
    path = tmp_path / "model.mlcore"
    path.write_bytes(content)
    assert_one_clear_error(capsys, path, needle)


@pytest.mark.parametrize("fraction", [0.0, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.98, 0.999])
def test_a_truncated_model_file_is_one_clear_error(tmp_path, capsys, model_bytes, fraction):
    cut = max(1, int(fraction * len(model_bytes)))
    path = tmp_path / "cut.mlcore"
    path.write_bytes(model_bytes[:cut])
    assert_one_clear_error(capsys, path, "truncated or corrupt zip archive")


def test_a_missing_file_is_one_clear_error(tmp_path, capsys):
    assert_one_clear_error(capsys, tmp_path / "missing.mlcore", "no such model file")


def test_save_model_refuses_what_load_model_would_refuse(tmp_path, data):
    model = NotRegistered().fit(*data)
    path = tmp_path / "model.mlcore"
    with pytest.raises(ValueError, match=f"not written: NotRegistered holds classes that load_model does not trust: {__name__}.NotRegistered"):
        save_model(model, path)
    assert not path.exists() and list(tmp_path.iterdir()) == []  # no half-written temporary file left
    # Trusting a class is the caller's explicit choice, on both sides.
    save_model(model, path, trusted_types=[NotRegistered])
    with pytest.raises(ValueError, match=f"not trusted: {__name__}.NotRegistered"):
        load_model(path)
    loaded = load_model(path, trusted_types=[NotRegistered])
    np.testing.assert_array_equal(loaded.coef_, model.coef_)
    assert type(load_model(path, trusted=True)) is NotRegistered


def test_the_list_of_trusted_types_is_explicit():
    names = trusted_types()
    for spec in list_methods():
        assert f"{spec.estimator.__module__}.{spec.estimator.__name__}" in names
    assert "multilabel_core.certificate.Certificate" in names
    assert "multilabel_core_plugins.ranking.threshold.LinearThreshold" in names  # the ranking plugin's hook
    assert not [name for name in names if name.startswith(("builtins.", "os.", "posix.", "subprocess."))]


# -- every registered method round-trips ------------------------------------------

METHODS = [spec.name for spec in list_methods()]


@pytest.mark.parametrize("method", METHODS)
def test_every_registered_method_round_trips(tmp_path, data, method):
    X, Y = data
    model = multilabel_core.make_method(method)
    if "random_state" in model.get_params():
        model.set_params(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence on 40 rows is not what this test is about
        model.fit(X, Y)
    path = save_model(model, tmp_path / f"{method}.mlcore")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = load_model(path)  # the registry's list alone: no class trusted for this call
    assert type(loaded) is type(model)
    assert _state_difference(model, loaded, method) is None
    before, after = model.decision_function(X), loaded.decision_function(X)
    bound = score_rounding_bound(model, X, before)
    if bound is None:
        bound = PERSISTENCE_FALLBACK_RTOL * np.abs(before).max()
    assert np.all(np.abs(after - before) <= bound)
    threshold = getattr(model, "decision_threshold", None)
    threshold = 0.0 if threshold is None else np.asarray(threshold(X))[:, None]
    near = np.abs(before - threshold) <= bound
    assert np.array_equal(loaded.predict(X)[~near], model.predict(X)[~near])


# -- a third-party plugin's own classes, through the hook -------------------------

PLUGIN = '''
"""A third-party plugin whose estimator keeps an instance of its own class."""

import numpy as np

import multilabel_core
from multilabel_core import MethodSpec
from multilabel_core_plugins.br import BinaryRelevance


class Offsets:
    """Per-label score offsets: a class no registry knows until the hook declares it."""

    def __init__(self, values):
        self.values = values


class ShiftedBR(BinaryRelevance):
    # Its scores are the certified model's shifted by the offsets, so the certificate BR's solver
    # returns is not of the model it exposes (check_method's certified-model check says so): it
    # claims none.
    certified = False
    # Its own fitted attribute, declared for load_model's check of the state (beside BR's).
    fitted_state = {"offsets_": "Offsets"}

    def _fit(self, X, Y):
        super()._fit(X, Y)
        self.offsets_ = Offsets(np.linspace(-0.25, 0.25, Y.shape[1]))

    def _decision_function(self, X):
        return super()._decision_function(X) + self.offsets_.values


@multilabel_core.hookimpl
def register_methods(register):
    register(MethodSpec(name="shifted_br", estimator=ShiftedBR, citation="A test plugin, 2024"))


@multilabel_core.hookimpl
def register_trusted_types(register):
    register(Offsets)
'''
PACKAGE = "mlcore_shifted_plugin"


@pytest.fixture
def site(tmp_path, monkeypatch):
    """The plugin installed as pip would: a package and a .dist-info naming its entry point."""
    site = tmp_path / "site"
    (site / PACKAGE).mkdir(parents=True)
    (site / PACKAGE / "__init__.py").write_text(PLUGIN)
    info = site / "mlcore_shifted_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mlcore-shifted-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[multilabel_core.plugins]\nshifted = {PACKAGE}\n")
    monkeypatch.delenv(DISABLE_AUTOLOAD_ENV, raising=False)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    reset_plugin_manager()
    yield site
    reset_plugin_manager()
    for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
        del sys.modules[name]


def test_a_plugin_class_declared_through_the_hook_round_trips(site, tmp_path, data):
    X, Y = data
    assert f"{PACKAGE}.Offsets" in trusted_types()
    model = multilabel_core.make_method("shifted_br").fit(X, Y)
    loaded = load_model(save_model(model, tmp_path / "shifted.mlcore"))
    assert type(loaded.offsets_).__name__ == "Offsets" and type(loaded.offsets_).__module__ == PACKAGE
    assert _state_difference(model, loaded, "shifted_br") is None
    before = model.decision_function(X)
    np.testing.assert_allclose(loaded.decision_function(X), before, rtol=0, atol=PERSISTENCE_FALLBACK_RTOL * np.abs(before).max())
    check_method("shifted_br")
    assert persistence.declared_state(type(model))["offsets_"] == "Offsets"
    model.offsets_ = np.zeros(3)  # not what the plugin declares: save_model refuses what load_model would
    with pytest.raises(ValueError, match="not written: the fitted attribute offsets_ of the ShiftedBR is a float64 array"):
        save_model(model, tmp_path / "shifted-bad.mlcore")


def test_a_plugin_class_not_declared_is_refused(site, tmp_path, data):
    X, Y = data
    model = multilabel_core.make_method("shifted_br").fit(X, Y)
    path = save_model(model, tmp_path / "shifted.mlcore")
    # The same plugin without its register_trusted_types hook.
    module = sys.modules[PACKAGE]
    manager = get_plugin_manager()
    manager.unregister(name="shifted")
    methods_only = types.ModuleType("methods_only")
    methods_only.register_methods = module.register_methods
    manager.register(methods_only, name="shifted")
    with pytest.raises(ValueError, match=f"names classes that are not trusted: {PACKAGE}.Offsets"):
        load_model(path)
    with pytest.raises(ValueError, match=f"holds classes that load_model does not trust: {PACKAGE}.Offsets"):
        save_model(model, tmp_path / "again.mlcore")
    with pytest.raises(AssertionError, match=f"does not survive save_model/load_model.*{PACKAGE}.Offsets"):
        check_method("shifted_br")


def test_the_cli_fits_and_predicts_with_the_plugin_method(site, tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    env.pop(DISABLE_AUTOLOAD_ENV, None)
    model = tmp_path / "shifted.mlcore"
    script = (
        "import sys; from multilabel_core.cli import main; "
        f"sys.exit(main(['fit', 'shifted_br', 'synthetic', '--out', {str(model)!r}]) "
        f"or main(['predict', {str(model)!r}, 'synthetic', '--json', '--compact']))"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1])["metrics"]["average_precision"] > 0.5


# -- bounded memory and trusted pickles that hold no estimator ----------------------


def _bomb(model_bytes: bytes, payload_size: int) -> bytes:
    """The model's manifest beside a payload that inflates to ``payload_size`` zero bytes."""
    with zipfile.ZipFile(io.BytesIO(model_bytes)) as archive:
        manifest = archive.read("manifest.json")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", manifest)
        with archive.open("estimator.skops", "w") as member:
            block = bytes(1 << 20)
            for _ in range(payload_size >> 20):
                member.write(block)
    return out.getvalue()


def test_a_payload_over_the_cap_is_refused_before_it_is_inflated(tmp_path, capsys, model_bytes, monkeypatch):
    path = tmp_path / "bomb.mlcore"
    path.write_bytes(_bomb(model_bytes, 64 << 20))
    assert path.stat().st_size < 1 << 20  # 64 MiB of zeros compress to well under a megabyte
    with pytest.raises(ValueError, match="holds more than 1048576 bytes"):
        load_model(path, max_bytes=1 << 20)
    monkeypatch.setenv("MULTILABEL_CORE_MODEL_MAX_BYTES", str(1 << 20))
    assert_one_clear_error(capsys, path, "the cap on a model file's payload")


def test_a_lying_size_header_cannot_pass_the_cap(tmp_path, model_bytes):
    """The zip's declared size is rewritten to 1 byte; the chunked read still stops at the cap."""
    content = bytearray(_bomb(model_bytes, 8 << 20))
    with zipfile.ZipFile(io.BytesIO(bytes(content))) as archive:
        info = archive.getinfo("estimator.skops")
    for offset in (info.header_offset + 22, content.rfind(b"PK\x01\x02") + 24):
        content[offset : offset + 4] = (1).to_bytes(4, "little")  # uncompressed size, local and central
    path = tmp_path / "liar.mlcore"
    path.write_bytes(bytes(content))
    with pytest.raises(ValueError) as info_error:
        load_model(path, max_bytes=1 << 20)
    assert str(path) in str(info_error.value)


@pytest.mark.parametrize("cap", [0, -1, "many", True])
def test_a_bad_cap_is_a_clear_error(tmp_path, model_bytes, cap):
    path = tmp_path / "br.mlcore"
    path.write_bytes(model_bytes)
    with pytest.raises(ValueError, match="max_bytes must be a positive whole number"):
        load_model(path, max_bytes=cap)


def test_a_trusted_pickle_without_an_estimator_is_one_clear_error(tmp_path, capsys):
    path = tmp_path / "list.joblib"
    joblib.dump({"format": persistence.FORMAT, "multilabel_core": multilabel_core.__version__, "estimator": [1, 2]}, path)
    with pytest.raises(ValueError, match="not an estimator with predict and decision_function"):
        load_model(path, trusted=True)
    code, out, err = cli(capsys, "predict", str(path), "synthetic", "--trust")
    assert code == 2 and err.count("\n") == 1 and "not an estimator" in err


def _inner_payload(members: dict[str, bytes], compression=zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as out:
        for name, content in members.items():
            out.writestr(name, content)
    return buffer.getvalue()


def test_a_compressed_schema_inside_the_payload_is_refused_before_skops_reads_it(tmp_path, capsys):
    """skops reads its schema.json whole: a deflated 64 MiB of blanks would inflate past any cap."""
    payload = _inner_payload({"schema.json": b" " * (64 << 20)}, zipfile.ZIP_DEFLATED)
    assert len(payload) < 1 << 20
    path = tmp_path / "schema-bomb.mlcore"
    path.write_bytes(archive({"manifest.json": manifest(), "estimator.skops": payload}))
    assert_one_clear_error(capsys, path, "has compressed members")


def test_an_array_named_many_times_counts_each_time_against_the_cap(tmp_path):
    """One stored 64 KiB array referenced 100 times would be read 100 times by skops."""
    array = io.BytesIO()
    np.save(array, np.zeros(8192))
    nodes = [{"__class__": "ndarray", "__module__": "numpy", "__loader__": "NdArrayNode", "type": "numpy", "file": "a.npy"}] * 100
    schema = {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode", "content": nodes,
              "protocol": 2, "_skops_version": "0.16.0"}  # fmt: skip
    payload = _inner_payload({"schema.json": json.dumps(schema).encode(), "a.npy": array.getvalue()})
    path = tmp_path / "repeated.mlcore"
    path.write_bytes(archive({"manifest.json": manifest(), "estimator.skops": payload}))
    with pytest.raises(ValueError, match="the estimator's arrays holds more than 1048576 bytes"):
        load_model(path, max_bytes=1 << 20)


def test_a_file_larger_than_the_cap_is_refused_without_being_read(tmp_path, model_bytes):
    path = tmp_path / "huge.mlcore"
    path.write_bytes(model_bytes)
    with open(path, "r+b") as stream:
        stream.truncate(1 << 32)  # sparse: 4 GiB on paper, nothing on disk
    with pytest.raises(ValueError, match="the file holds more than 1048576 bytes"):
        load_model(path, max_bytes=1 << 20)


def test_a_deeply_nested_manifest_is_one_clear_error(tmp_path, capsys):
    path = tmp_path / "nested.mlcore"
    path.write_bytes(archive({"manifest.json": b"[" * 50000, "estimator.skops": b""}))
    assert_one_clear_error(capsys, path, "is not valid JSON")


def test_an_archive_holding_no_estimator_is_one_clear_error(tmp_path, capsys):
    payload = skops.io.dumps([1, 2, 3])
    path = tmp_path / "list.mlcore"
    path.write_bytes(archive({"manifest.json": manifest(method=None, estimator="builtins.list"), "estimator.skops": payload}))
    assert_one_clear_error(capsys, path, "not an estimator with predict and decision_function")
