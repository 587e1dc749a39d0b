"""fetch_dataset against local mirrors: an HTTP server on 127.0.0.1 and file:// URLs.

The mirror folder holds copies of emotions and flags (from the shared data folder) at
the relative paths of their registered URLs, exactly what a real mirror serves.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import shutil
import threading
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest

import multilabel_core
from multilabel_core.datasets import Dataset, fetch_dataset, load_dataset, read_mulan, write_mulan
from multilabel_core.datasets.sources import SOURCES
from multilabel_core.datasets.fetch import CACHE_ENV, MIRROR_ENV
from multilabel_core.registry import DatasetSpec

MIRRORED = ("emotions", "flags")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "default-cache"))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def registered(name: str) -> DatasetSpec:
    return next(spec for spec in multilabel_core.list_datasets() if spec.name == name)


@pytest.fixture
def mirror(tmp_path, datasets_dir) -> Path:
    root = tmp_path / "mirror"
    for name in MIRRORED:
        for filename, (url, _) in registered(name).files.items():
            target = root / urlsplit(url).path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(datasets_dir / filename, target)
    return root


class _Server:
    """A static file server on a free port of 127.0.0.1 that counts the files it sent."""

    def __init__(self, root: Path):
        self.paths: list[str] = []
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):
                server.paths.append(self.path)
                super().do_GET()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def server(mirror):
    running = _Server(mirror)
    yield running
    running.close()


def test_core_sources_are_registered_with_the_shared_copies_checksums(datasets_dir):
    names = {spec.name for spec in multilabel_core.list_datasets()}
    assert {spec.name for spec in SOURCES} <= names
    for spec in SOURCES:
        assert registered(spec.name).plugin == "multilabel_core"
        for filename, (url, digest) in spec.files.items():
            # the URL ends in the upstream name, which differs for corel5k (Corel5k-sparse.arff)
            assert url.startswith("https://") and Path(urlsplit(url).path).suffix == Path(filename).suffix
            assert digest == sha256(datasets_dir / filename), filename


def test_fetch_by_name_through_http_mirror_then_cache(server, tmp_path, datasets_dir):
    cache = tmp_path / "cache"
    ds = fetch_dataset("emotions", cache, base_url=server.url)
    reference = read_mulan(datasets_dir / "emotions.arff")
    np.testing.assert_array_equal(ds.X, reference.X)
    np.testing.assert_array_equal(ds.Y, reference.Y)
    assert sorted(p.name for p in cache.iterdir()) == ["emotions.arff", "emotions.xml"]
    assert len(server.paths) == 2

    again = fetch_dataset("emotions", cache, base_url=server.url)
    assert len(server.paths) == 2  # served from the cache
    np.testing.assert_array_equal(again.Y, reference.Y)

    fetch_dataset("emotions", cache, base_url=server.url, force=True)
    assert len(server.paths) == 4


def test_mirror_from_environment_and_default_cache(server, monkeypatch, tmp_path):
    monkeypatch.setenv(MIRROR_ENV, server.url + "/")
    ds = fetch_dataset("flags")
    assert ds.n_samples == 194 and len(ds.nominal_features) == 9
    assert (tmp_path / "default-cache" / "flags.arff").is_file()
    # a fetched dataset is found by name in the cache
    assert load_dataset("flags").n_labels == 7


def test_file_url_mirror(mirror, tmp_path):
    ds = fetch_dataset(registered("flags"), tmp_path / "cache", base_url=mirror.as_uri())
    assert ds.n_labels == 7


def test_damaged_cache_entry_is_downloaded_again(server, tmp_path):
    cache = tmp_path / "cache"
    fetch_dataset("flags", cache, base_url=server.url)
    (cache / "flags.arff").write_text("damaged")
    fetch_dataset("flags", cache, base_url=server.url)
    assert len(server.paths) == 3 and server.paths[2] == server.paths[0]
    assert server.paths[0].endswith("/flags.arff")
    assert (cache / "flags.arff").read_text().startswith("@relation")


def test_checksum_mismatch_deletes_the_download(server, tmp_path):
    spec = registered("flags")
    files = dict(spec.files)
    url, _ = files["flags.arff"]
    files["flags.arff"] = (url, "0" * 64)
    bad = DatasetSpec("flags-bad", files, citation=spec.citation)
    cache = tmp_path / "cache"
    with pytest.raises(ValueError) as exc_info:
        fetch_dataset(bad, cache, base_url=server.url)
    message = str(exc_info.value)
    assert "checksum mismatch for flags.arff" in message and "0" * 64 in message and server.url in message
    assert not (cache / "flags.arff").exists() and not (cache / "flags.arff.part").exists()


def test_download_failure_names_the_url(server, tmp_path):
    spec = DatasetSpec("ghost", {"ghost.arff": ("https://example.org/none/ghost.arff", "0" * 64)})
    with pytest.raises(OSError, match=r"could not download ghost.arff from http://127\.0\.0\.1:\d+/none/ghost.arff"):
        fetch_dataset(spec, tmp_path / "cache", base_url=server.url)
    assert not any((tmp_path / "cache").iterdir())


def test_unknown_name_lists_registered_datasets(tmp_path):
    with pytest.raises(ValueError, match=r"unknown dataset 'nope' to fetch\. Registered: .*emotions"):
        fetch_dataset("nope", tmp_path)


def test_explicit_spec_with_generated_files(tmp_path):
    """Independent of the shared data: a spec whose file:// URLs point at freshly written files."""
    source = tmp_path / "source"
    source.mkdir()
    original = Dataset(np.arange(6.0).reshape(3, 2), np.array([[1, 0], [0, 1], [1, 1]]), name="toy")
    write_mulan(original, source / "toy.arff")
    files = {name: ((source / name).as_uri(), sha256(source / name)) for name in ("toy.arff", "toy.xml")}
    ds = fetch_dataset(DatasetSpec("toy", files), tmp_path / "cache")
    np.testing.assert_array_equal(ds.X, original.X)
    with pytest.raises(ValueError, match="plain file name"):
        fetch_dataset(DatasetSpec("toy", {"../toy.arff": files["toy.arff"]}), tmp_path / "cache")
    with pytest.raises(ValueError, match="not a SHA-256 digest"):
        fetch_dataset(DatasetSpec("toy", {"toy.arff": (files["toy.arff"][0], "abc")}), tmp_path / "cache")
