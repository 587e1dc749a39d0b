"""The registered datasets: every dataset of the shared data folder by name, and what is at hand.

- every row of ../shared/datasets/README.md is a core DatasetSpec with the same sizes, LCard and
  row form, and every core spec is a row there;
- every spec's checksums are those of the shared copies, and its metadata is what load_dataset
  reads from them (each file loaded once: all nineteen take about 3 s);
- fetch_dataset through a file:// mirror of the shared folder, laid out by the registered URLs;
- known_datasets: locations and the verified cache;
- DatasetSpec's metadata fields are validated, and records made without them stay valid;
- docs/datasets.md's table is the one rendered here from known_datasets() (so it cannot drift).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest
import scipy.sparse as sp

import multilabel_core
from multilabel_core.datasets import Dataset, fetch_dataset, known_datasets, load_dataset, write_libsvm
from multilabel_core.datasets.sources import MULAN_REPOSITORY, SOURCES
from multilabel_core.datasets.catalog import NOT_DOWNLOADED
from multilabel_core.datasets.fetch import CACHE_ENV, MIRROR_ENV
from multilabel_core.datasets.loading import DATA_ENV
from multilabel_core.registry import DatasetSpec

ROOT = Path(__file__).resolve().parents[1]
DOCS_PAGE = ROOT / "docs" / "datasets.md"
CORE = {spec.name: spec for spec in SOURCES}


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    """No user folder or mirror leaks in: the default cache is an empty temporary folder."""
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "default-cache"))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- the shared folder's README -------------------------------------------------------


def readme_rows(readme: Path) -> dict[str, dict]:
    """name -> the README table's row: examples, features (the cell's number, and the cell), labels,
    LCard (None when blank) and "dense"/"sparse".  ``NAME-train / -test`` rows give two entries,
    their examples ``A / B``."""
    rows = {}
    header = None
    for line in readme.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if set("".join(cells)) <= set("- "):
            continue  # the separator row
        row = dict(zip(header, cells))
        names = [part.strip() for part in row["file"].split("/")]
        if len(names) == 2:  # "emotions-train / -test"
            names[1] = names[0].rsplit("-", 1)[0] + names[1]
        counts = [int(part) for part in row["examples"].split("/")]
        assert len(counts) == len(names), line
        for name, count in zip(names, counts):
            rows[name] = {
                "n_samples": count,
                "features": int(re.match(r"\d+", row["features"]).group()),
                "features_cell": row["features"],
                "n_labels": int(row["labels"]),
                "label_cardinality": float(row["LCard"]) if row["LCard"] else None,
                "storage": row["dense/sparse"],
            }
    assert header is not None and header[:7] == ["file", "examples", "features", "labels", "LCard", "dense/sparse",
                                                 "used in the papers"], header
    return rows


@pytest.fixture(scope="module")
def readme(datasets_dir):
    return readme_rows(datasets_dir / "README.md")


def test_the_readme_parser_reads_both_kinds_of_rows(datasets_dir):
    rows = readme_rows(datasets_dir / "README.md")
    assert rows["emotions-test"] == {
        "n_samples": 202, "features": 72, "features_cell": "72", "n_labels": 6, "label_cardinality": None,
        "storage": "dense",
    }
    assert rows["enron"]["features"] == 1001 and rows["enron"]["label_cardinality"] == 3.378
    assert len(rows) == 19


def test_every_readme_row_is_registered_and_every_core_spec_is_a_row(readme):
    assert set(readme) == set(CORE)
    registered = {spec.name: spec for spec in multilabel_core.list_datasets()}
    assert set(readme) <= set(registered)
    assert {registered[name].plugin for name in readme} == {"multilabel_core"}


@pytest.mark.parametrize("name", sorted(CORE))
def test_sizes_cardinality_and_row_form_are_the_readmes(readme, datasets_dir, name):
    spec, row = CORE[name], readme[name]
    assert (spec.n_samples, spec.n_labels) == (row["n_samples"], row["n_labels"])
    assert spec.sparse == (row["storage"] == "sparse")
    if row["label_cardinality"] is not None:
        assert spec.label_cardinality == row["label_cardinality"]
    if "nominal" in row["features_cell"]:
        # the README counts attributes (flags: 19); the spec, X's columns with nominal ones one-hot
        assert load_dataset(name, datasets_dir, nominal="ordinal").n_features == row["features"]
        assert spec.n_features > row["features"]
    else:
        assert spec.n_features == row["features"]


# -- the specs against the shared files -------------------------------------------------


@pytest.mark.parametrize("name", sorted(CORE))
def test_checksums_are_those_of_the_shared_copies(datasets_dir, name):
    spec = CORE[name]
    assert spec.format == "mulan" and set(spec.files) == {f"{name}.arff", f"{name}.xml"}
    for filename, (url, digest) in spec.files.items():
        assert url.startswith(MULAN_REPOSITORY)
        assert digest == sha256(datasets_dir / filename), filename


def test_one_url_path_serves_one_file():
    """A mirror folder laid out by URL path can hold every shared copy: no two different files share a path."""
    served: dict[str, str] = {}
    for spec in SOURCES:
        for url, digest in spec.files.values():
            assert served.setdefault(urlsplit(url).path, digest) == digest, url


@pytest.fixture(scope="module")
def loaded(datasets_dir):
    """Each shared dataset read once for the module."""
    cache = {}

    def load(name):
        if name not in cache:
            cache[name] = load_dataset(name, datasets_dir)
        return cache[name]

    return load


@pytest.mark.parametrize("name", sorted(CORE))
def test_loading_gives_the_registered_description(loaded, name):
    spec, ds = CORE[name], loaded(name)
    assert (ds.n_samples, ds.n_features, ds.n_labels) == (spec.n_samples, spec.n_features, spec.n_labels)
    assert abs(ds.Y.sum(axis=1).mean() - spec.label_cardinality) <= 5e-4
    assert sp.issparse(ds.X) == spec.sparse


@pytest.mark.parametrize("name", sorted(name for name, spec in CORE.items() if spec.splits))
def test_splits_name_registered_parts_that_add_up(loaded, name):
    spec = CORE[name]
    assert set(spec.splits) == {"train", "test"}
    parts = [CORE[part] for part in spec.splits.values()]
    assert all(part.split_of == name and not part.splits for part in parts)
    assert sum(part.n_samples for part in parts) == spec.n_samples
    assert {(part.n_features, part.n_labels, part.sparse) for part in parts} == {(spec.n_features, spec.n_labels,
                                                                                  spec.sparse)}
    label_counts = sum(loaded(part.name).Y.sum(axis=0) for part in parts)
    np.testing.assert_array_equal(label_counts, loaded(name).Y.sum(axis=0))


def test_every_part_is_named_by_its_whole():
    for spec in SOURCES:
        if spec.split_of is not None:
            assert spec.name in CORE[spec.split_of].splits.values(), spec.name


# -- fetching from a mirror of the shared folder ---------------------------------------


@pytest.fixture
def mirror(tmp_path, datasets_dir) -> Path:
    """Every shared file at the path of its registered URL (symbolic links: nothing is copied)."""
    root = tmp_path / "mirror"
    for spec in SOURCES:
        for filename, (url, _) in spec.files.items():
            target = root / urlsplit(url).path.lstrip("/")
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(datasets_dir / filename, target)
    return root


@pytest.mark.parametrize("name", ["medical", "corel5k", "emotions-train"])
def test_fetch_new_datasets_from_a_file_mirror(mirror, tmp_path, loaded, name):
    """medical: a new dataset; corel5k: its upstream file names differ; emotions-train: a split part."""
    cache = tmp_path / "cache"
    ds = fetch_dataset(name, cache, base_url=mirror.as_uri())
    assert sorted(p.name for p in cache.iterdir()) == [f"{name}.arff", f"{name}.xml"]
    reference = loaded(name)
    assert (ds.n_samples, ds.n_features, ds.n_labels) == (CORE[name].n_samples, CORE[name].n_features,
                                                           CORE[name].n_labels)
    assert sp.issparse(ds.X) == sp.issparse(reference.X)
    assert (sp.csr_matrix(ds.X) != sp.csr_matrix(reference.X)).nnz == 0
    np.testing.assert_array_equal(ds.Y, reference.Y)
    assert ds.label_names == reference.label_names


def test_a_libsvm_spec_gets_its_registered_width(tmp_path):
    """The LibSVM reader is given n_features and n_labels: never-used last columns are kept."""
    source = tmp_path / "source"
    source.mkdir()
    write_libsvm(Dataset(np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([[1, 0], [0, 1]])), source / "toy.svm")
    files = {"toy.svm": ((source / "toy.svm").as_uri(), sha256(source / "toy.svm"))}
    ds = fetch_dataset(DatasetSpec("toy", files, "libsvm", n_labels=4, n_features=5), tmp_path / "cache")
    assert (ds.n_features, ds.n_labels) == (5, 4)


# -- known_datasets ----------------------------------------------------------------------


def by_name(records) -> dict[str, dict]:
    return {record["name"]: record for record in records}


def test_known_datasets_lists_every_registered_dataset_with_its_description(tmp_path):
    records = known_datasets(tmp_path / "empty")
    assert [r["name"] for r in records] == [spec.name for spec in multilabel_core.list_datasets()]
    emotions = by_name(records)["emotions"]
    assert emotions == {
        "name": "emotions", "format": "mulan", "n_samples": 593, "n_features": 72, "n_labels": 6,
        "label_cardinality": 1.868, "sparse": False,
        "splits": {"train": "emotions-train", "test": "emotions-test"}, "split_of": None,
        "citation": CORE["emotions"].citation, "plugin": "multilabel_core",
        "files": ["emotions.arff", "emotions.xml"],
        "location": NOT_DOWNLOADED, "path": None, "cached": False,
    }
    assert by_name(records)["emotions-test"]["split_of"] == "emotions"
    assert all(r["location"] == NOT_DOWNLOADED and not r["cached"] for r in records)


def test_known_datasets_reports_a_fetched_dataset_as_cached(mirror, tmp_path):
    cache = tmp_path / "default-cache"
    fetch_dataset("cal500", base_url=mirror.as_uri())  # into $MULTILABEL_CORE_CACHE
    fetch_dataset("flags", base_url=mirror.as_uri())
    records = by_name(known_datasets())
    for name in ("cal500", "flags"):
        assert records[name]["cached"] is True
        assert records[name]["location"] == "download cache"
        assert records[name]["path"] == str(cache / f"{name}.arff")
    assert {name for name, r in records.items() if r["cached"]} == {"cal500", "flags"}
    assert records["medical"]["location"] == NOT_DOWNLOADED

    # given data_home, that folder is both searched first and the cache
    elsewhere = tmp_path / "elsewhere"
    assert not any(r["cached"] for r in known_datasets(elsewhere))
    fetch_dataset("cal500", elsewhere, base_url=mirror.as_uri())
    cal500 = by_name(known_datasets(elsewhere))["cal500"]
    assert cal500["cached"] and cal500["location"] == "data_home" and cal500["path"] == str(elsewhere / "cal500.arff")

    # a damaged file is still found by load_dataset, but fetch_dataset would download it again
    (cache / "cal500.xml").write_text("damaged")
    damaged = by_name(known_datasets())["cal500"]
    assert damaged["location"] == "download cache" and damaged["cached"] is False
    assert by_name(known_datasets(verify=False))["cal500"]["cached"] is True
    (cache / "cal500.xml").unlink()
    assert by_name(known_datasets(verify=False))["cal500"]["cached"] is False


def test_known_datasets_sees_the_data_folder_of_the_environment(datasets_dir, monkeypatch):
    monkeypatch.setenv(DATA_ENV, str(datasets_dir))
    records = known_datasets()
    assert {r["location"] for r in records if r["name"] in CORE} == {f"${DATA_ENV}"}
    assert by_name(records)["bibtex"]["path"] == str(datasets_dir / "bibtex.arff")
    assert not any(r["cached"] for r in records)  # the data folder is not the download cache


def test_known_datasets_refuses_a_non_bool_verify(tmp_path):
    with pytest.raises(ValueError, match="verify must be True or False, got 'yes'"):
        known_datasets(tmp_path, verify="yes")


# -- DatasetSpec's metadata ------------------------------------------------------------------

FILES = {"toy.arff": ("https://example.org/toy.arff", "0" * 64)}


def test_records_made_without_the_metadata_stay_valid():
    spec = DatasetSpec("toy", FILES, "libsvm", "a citation", 3, None)  # the positional fields of old
    assert (spec.n_labels, spec.n_samples, spec.n_features, spec.label_cardinality, spec.sparse) == (
        3, None, None, None, None)
    assert spec.splits == {} and spec.split_of is None


def test_metadata_is_normalised():
    spec = DatasetSpec("toy", FILES, n_labels=np.int64(4), n_samples=np.int32(10), n_features=5,
                       label_cardinality=2, sparse=True, splits={"train": "toy-train"})
    assert (type(spec.n_labels), type(spec.n_samples), type(spec.label_cardinality)) == (int, int, float)


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"n_samples": 0}, "n_samples must be a positive integer or None, got 0"),
        ({"n_samples": True}, "n_samples must be a positive integer or None, got True"),
        ({"n_features": "72"}, "n_features must be a positive integer or None, got '72'"),
        ({"n_features": 7.0}, "n_features must be a positive integer or None, got 7.0"),
        ({"n_labels": -1}, "n_labels must be a positive integer or None, got -1"),
        ({"label_cardinality": -0.5}, "label_cardinality must be a finite number >= 0 or None, got -0.5"),
        ({"label_cardinality": float("nan")}, "label_cardinality must be a finite number >= 0"),
        ({"label_cardinality": "1.8"}, "label_cardinality must be a finite number >= 0 or None, got '1.8'"),
        ({"n_labels": 6, "label_cardinality": 6.5}, "label_cardinality 6.5 exceeds n_labels 6"),
        ({"sparse": "yes"}, "sparse must be True, False or None, got 'yes'"),
        ({"sparse": 1}, "sparse must be True, False or None, got 1"),
        ({"splits": ["toy-train"]}, "splits must be a mapping role -> dataset name"),
        ({"splits": {"train": "Toy Train"}}, "splits maps a role to a dataset name, both lower-case identifiers"),
        ({"splits": {"": "toy-train"}}, "splits maps a role to a dataset name"),
        ({"splits": {"train": "toy"}}, "cannot be a split of itself"),
        ({"split_of": "toy"}, "cannot be a split of itself"),
        ({"split_of": 3}, "split_of must be a dataset name"),
        ({"split_of": "Toy"}, "split_of must be a non-empty lower-case identifier"),
        ({"split_of": "whole", "splits": {"train": "toy-train"}}, "only a whole dataset has splits"),
    ],
)
def test_bad_metadata_is_a_value_error_naming_the_field(fields, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        DatasetSpec("toy", FILES, **fields)


def test_the_metadata_is_keyword_only():
    with pytest.raises(TypeError):
        DatasetSpec("toy", FILES, "mulan", "", None, None, 10)


# -- the documentation's table -----------------------------------------------------------------


def table_rows(records: list[dict]) -> list[str]:
    """docs/datasets.md's table rows, rendered from known_datasets() records."""
    wholes = {r["name"]: r for r in records}

    def split_cell(record):
        if record["splits"]:
            return ", ".join(f"{role}: `{part}`" for role, part in record["splits"].items())
        if record["split_of"]:
            whole = record["split_of"]
            role = next(role for role, part in wholes[whole]["splits"].items() if part == record["name"])
            return f"{role} part of `{whole}`"
        return "-"

    def number(value, fmt="{}"):
        return "-" if value is None else fmt.format(value)

    rows = []
    for r in records:
        storage = "-" if r["sparse"] is None else ("sparse" if r["sparse"] else "dense")
        cells = [f"`{r['name']}`", number(r["n_samples"]), number(r["n_features"]), number(r["n_labels"]),
                 number(r["label_cardinality"], "{:.3f}"), storage, split_cell(r), r["citation"] or "-"]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def documented_rows(page: Path) -> list[str]:
    """The rows of the page's table whose header starts with ``| name |``."""
    lines = page.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| name | n | d | L | LCard |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def test_the_docs_table_is_known_datasets(tmp_path):
    expected = table_rows([r for r in known_datasets(tmp_path) if r["plugin"] == "multilabel_core"])
    documented = documented_rows(DOCS_PAGE)
    assert documented == expected, "docs/datasets.md's table should read:\n" + "\n".join(expected)


def test_the_docs_page_is_in_the_site_and_names_the_command():
    text = DOCS_PAGE.read_text(encoding="utf-8")
    assert "mlcore datasets" in text and "known_datasets" in text
    assert "datasets.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("API reference:")[0]
