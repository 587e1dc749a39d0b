"""The plugin manager: loading order, registries, clashes, broken plugins, autoload switch.

Fake *distributions* (a ``.dist-info`` folder with an ``entry_points.txt`` on
``sys.path``) exercise the entry-point path exactly as an installed package does.
Plugins registered by hand in these tests register real estimator and component
classes.
"""

from __future__ import annotations

import importlib.metadata
import sys
import warnings

import attrs
import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier

import multilabel_core
from multilabel_core import ComponentSpec, DatasetSpec, MethodSpec, hookimpl
from multilabel_core.plugins import (
    CORE_PLUGIN_NAME,
    DISABLE_AUTOLOAD_ENV,
    ENTRY_POINT_GROUP,
    PluginError,
    PluginWarning,
    get_plugin_manager,
    reset_plugin_manager,
)

FAKE_PREFIX = "mlcore_fake_"
KNN = MethodSpec(
    name="knn",
    estimator=KNeighborsClassifier,
    citation="Cover & Hart (1967), Nearest neighbor pattern classification, IEEE Trans. Inf. Theory 13(1)",
)


@pytest.fixture(autouse=True)
def fresh_manager(monkeypatch):
    monkeypatch.delenv(DISABLE_AUTOLOAD_ENV, raising=False)
    reset_plugin_manager()
    yield
    reset_plugin_manager()


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder on sys.path where tests write fake distributions and plugin modules."""
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [name for name in sys.modules if name.startswith(FAKE_PREFIX)]:
        del sys.modules[name]


def write_distribution(site, dist_name, entry_points, modules=None):
    """Write ``dist_name``'s metadata declaring ``entry_points`` (name -> module), and the modules."""
    info = site / f"{dist_name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist_name}\nVersion: 0.1\n")
    lines = [f"[{ENTRY_POINT_GROUP}]", *(f"{name} = {value}" for name, value in entry_points.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    for module, source in (modules or {}).items():
        (site / f"{module}.py").write_text(source)


class Registers:
    """A plugin object whose hooks register the given records."""

    def __init__(self, methods=(), components=(), datasets=()):
        self.methods, self.components, self.datasets = methods, components, datasets

    @hookimpl
    def register_methods(self, register):
        for spec in self.methods:
            register(spec)

    @hookimpl
    def register_components(self, register):
        for spec in self.components:
            register(spec)

    @hookimpl
    def register_datasets(self, register):
        for spec in self.datasets:
            register(spec)


def method_names():
    return [spec.name for spec in multilabel_core.list_methods()]


# -- loading ------------------------------------------------------------------------


def test_core_plugin_is_registered_first_then_entry_points():
    names = [name for name, _ in get_plugin_manager().list_name_plugin()]
    assert names[0] == CORE_PLUGIN_NAME
    declared = {ep.name for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}
    assert declared <= set(names)


def test_manager_is_a_singleton_until_reset():
    manager = get_plugin_manager()
    assert get_plugin_manager() is manager
    reset_plugin_manager()
    assert get_plugin_manager() is not manager


def test_bundled_br_family_comes_through_the_entry_point_group():
    entry_points = {ep.name: ep.value for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}
    assert entry_points["br"] == "multilabel_core_plugins.br"
    assert "br" in method_names()
    spec = multilabel_core.get_method("br")
    assert spec.plugin == "br"
    assert spec.citation and spec.param_grid


def test_stock_components_are_registered_by_the_core():
    expected = {
        "loss": {"hinge", "squared_hinge", "pairwise_ranking_hinge", "logistic", "epsilon_insensitive", "least_squares"},
        "regularizer": {"frobenius", "label_covariance", "frobenius_label_covariance", "low_rank", "nuclear_norm",
                        "l1", "l21", "elastic_net", "label_similarity", "sum"},
        "relation": {"independent", "learned_covariance"},
        "kernel": {"linear", "rbf", "poly", "precomputed", "nystroem", "rff"},
        "solver": {"lbfgs", "cd", "smo", "alternating", "irwls", "fista"},
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginWarning)
        specs = multilabel_core.list_components()
    assert specs == sorted(specs, key=lambda spec: (spec.kind, spec.name))
    for kind, names in expected.items():
        core = {spec.name for spec in multilabel_core.list_components(kind) if spec.plugin == CORE_PLUGIN_NAME}
        assert core == names, kind
    assert isinstance(multilabel_core.make_component("loss", "hinge"), multilabel_core.Hinge)
    assert isinstance(multilabel_core.make_component("kernel", "linear"), multilabel_core.LinearKernel)


def test_dataset_sources_are_registered_by_the_core():
    from multilabel_core.datasets.sources import SOURCES

    specs = multilabel_core.list_datasets()
    assert [spec.name for spec in specs] == sorted(spec.name for spec in SOURCES)
    assert {spec.plugin for spec in specs} == {CORE_PLUGIN_NAME}


# -- registries -----------------------------------------------------------------------


def test_explicit_registration_is_visible_at_once_and_stamped_with_the_plugin_name():
    assert "knn" not in method_names()
    plugin = Registers(methods=[KNN])
    get_plugin_manager().register(plugin, name="neighbours")
    assert multilabel_core.get_method("knn") == attrs.evolve(KNN, plugin="neighbours")
    get_plugin_manager().unregister(plugin)
    assert "knn" not in method_names()


def test_list_methods_is_sorted_by_name():
    get_plugin_manager().register(Registers(methods=[KNN, MethodSpec("aaa_knn", KNeighborsClassifier, "x")]))
    names = method_names()
    assert names == sorted(names) and {"aaa_knn", "knn"} <= set(names)


@pytest.mark.parametrize(
    "record, what",
    [
        (KNN, "method 'knn'"),
        (ComponentSpec("loss", "other_hinge", multilabel_core.Hinge), "component ('loss', 'other_hinge')"),
        (DatasetSpec("tiny", {"tiny.arff": ("file:///tiny.arff", "0" * 64)}), "dataset 'tiny'"),
    ],
)
def test_a_name_claimed_by_two_plugins_is_an_error_naming_both(record, what):
    field = {MethodSpec: "methods", ComponentSpec: "components", DatasetSpec: "datasets"}[type(record)]
    get_plugin_manager().register(Registers(**{field: [record]}), name="first_plugin")
    get_plugin_manager().register(Registers(**{field: [record]}), name="second_plugin")
    lister = {
        MethodSpec: multilabel_core.list_methods,
        ComponentSpec: multilabel_core.list_components,
        DatasetSpec: multilabel_core.list_datasets,
    }[type(record)]
    with pytest.raises(PluginError) as excinfo:
        lister()
    message = str(excinfo.value)
    assert what in message and "'first_plugin'" in message and "'second_plugin'" in message
    assert isinstance(excinfo.value, ValueError)


def test_a_plugin_registering_one_name_twice_is_an_error():
    get_plugin_manager().register(Registers(methods=[KNN, KNN]), name="doubled")
    with pytest.raises(PluginError, match="'knn' is registered by plugin 'doubled' twice"):
        multilabel_core.list_methods()


def test_registering_a_wrong_record_type_is_an_error_naming_the_plugin():
    get_plugin_manager().register(Registers(methods=[("knn", KNeighborsClassifier)]), name="sloppy")
    with pytest.raises(PluginError, match="'sloppy'.*expects a MethodSpec, got tuple"):
        multilabel_core.list_methods()


def test_a_hook_that_raises_warns_naming_the_plugin_and_the_others_still_register():
    class Explodes:
        @hookimpl
        def register_methods(self, register):
            raise RuntimeError("boom")

    get_plugin_manager().register(Explodes(), name="explodes")
    get_plugin_manager().register(Registers(methods=[KNN]), name="neighbours")
    with pytest.warns(PluginWarning, match="'explodes' failed in register_methods.*RuntimeError: boom"):
        names = method_names()
    assert "knn" in names


# -- entry points ---------------------------------------------------------------------


def test_a_plugin_that_fails_to_import_warns_naming_it_and_the_others_load(site):
    write_distribution(
        site,
        "broken-plugin",
        {"broken": f"{FAKE_PREFIX}broken"},
        {f"{FAKE_PREFIX}broken": "raise ImportError('needs libfoo >= 2')\n"},
    )
    write_distribution(site, "healthy-plugin", {"healthy": f"{FAKE_PREFIX}healthy"}, {f"{FAKE_PREFIX}healthy": ""})
    with pytest.warns(PluginWarning) as record:
        manager = get_plugin_manager()
    [warning] = [w for w in record if "broken" in str(w.message)]
    message = str(warning.message)
    assert "'broken'" in message and "broken-plugin" in message and "needs libfoo >= 2" in message
    assert manager.has_plugin("healthy") and manager.has_plugin("br")
    assert not manager.has_plugin("broken")


def test_a_plugin_whose_hook_does_not_match_the_spec_warns_naming_it(site):
    source = "from multilabel_core import hookimpl\n\n@hookimpl\ndef register_methods(callback):\n    pass\n"
    module = f"{FAKE_PREFIX}mismatched"
    write_distribution(site, "mismatched-plugin", {"mismatched": module}, {module: source})
    with pytest.warns(PluginWarning, match="(?s)'mismatched'.*mismatched-plugin.*failed to load.*'callback'"):
        manager = get_plugin_manager()
    assert not manager.has_plugin("mismatched") and manager.has_plugin("br")


def test_an_entry_point_seen_twice_is_loaded_once(site):
    module = f"{FAKE_PREFIX}twice"
    write_distribution(site, "twice-a", {"twice": module}, {module: ""})
    write_distribution(site, "twice-b", {"twice": module})
    found = [ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name == "twice"]
    assert len(found) == 2
    names = [name for name, _ in get_plugin_manager().list_name_plugin()]
    assert names.count("twice") == 1


def test_two_entry_points_with_one_name_is_an_error_naming_both_distributions(site):
    write_distribution(site, "first-dist", {"samename": f"{FAKE_PREFIX}one"}, {f"{FAKE_PREFIX}one": ""})
    write_distribution(site, "second-dist", {"samename": f"{FAKE_PREFIX}two"}, {f"{FAKE_PREFIX}two": ""})
    with pytest.raises(PluginError, match="'samename'") as excinfo:
        get_plugin_manager()
    assert "first-dist" in str(excinfo.value) and "second-dist" in str(excinfo.value)


def test_an_entry_point_cannot_take_the_core_plugin_name(site):
    write_distribution(site, "usurper", {CORE_PLUGIN_NAME: f"{FAKE_PREFIX}usurper"}, {f"{FAKE_PREFIX}usurper": ""})
    with pytest.raises(PluginError, match="the core's stock components.*usurper"):
        get_plugin_manager()


def test_environment_variable_disables_autoload_but_not_explicit_registration(site, monkeypatch):
    write_distribution(site, "broken-plugin", {"broken": f"{FAKE_PREFIX}broken"}, {f"{FAKE_PREFIX}broken": "1 / 0\n"})
    monkeypatch.setenv(DISABLE_AUTOLOAD_ENV, "1")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginWarning)
        manager = get_plugin_manager()
    assert [name for name, _ in manager.list_name_plugin()] == [CORE_PLUGIN_NAME]
    assert "br" not in method_names()
    manager.register(Registers(methods=[KNN]), name="neighbours")
    assert method_names() == ["knn"]


def test_empty_environment_variable_keeps_autoload(monkeypatch):
    monkeypatch.setenv(DISABLE_AUTOLOAD_ENV, "")
    assert get_plugin_manager().has_plugin("br")


# -- make_method / make_component errors ----------------------------------------------


@pytest.fixture
def knn_registered():
    get_plugin_manager().register(Registers(methods=[KNN]), name="neighbours")


def test_make_method_builds_an_unfitted_estimator_with_the_parameters(knn_registered):
    model = multilabel_core.make_method("knn", n_neighbors=3)
    assert isinstance(model, KNeighborsClassifier) and model.n_neighbors == 3
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0]).astype(int)
    assert model.fit(X, Y).predict(X).shape == (30, 2)


def test_unknown_method_name_lists_the_known_ones_and_suggests_a_close_match(knn_registered):
    with pytest.raises(ValueError, match="unknown method 'knm'. Did you mean 'knn'\\?") as excinfo:
        multilabel_core.make_method("knm")
    assert "knn" in str(excinfo.value).split("Known:")[1]
    with pytest.raises(ValueError, match="unknown method 'zzz'. Known:"):
        multilabel_core.get_method("zzz")


def test_unknown_parameter_is_named_with_the_valid_ones(knn_registered):
    with pytest.raises(ValueError, match="method 'knn' has no parameter 'k', 'neighbours'") as excinfo:
        multilabel_core.make_method("knn", k=3, neighbours=2, weights="distance")
    assert "n_neighbors" in str(excinfo.value) and "weights" in str(excinfo.value)


def test_make_component_errors():
    get_plugin_manager().register(
        Registers(components=[ComponentSpec("loss", "other_hinge", multilabel_core.Hinge)]), name="extra"
    )
    assert isinstance(multilabel_core.make_component("loss", "other_hinge"), multilabel_core.Hinge)
    with pytest.raises(ValueError, match="unknown component kind 'los'. Did you mean 'loss'"):
        multilabel_core.make_component("los", "hinge")
    with pytest.raises(ValueError, match="unknown component kind 'bogus'"):
        multilabel_core.list_components("bogus")
    with pytest.raises(ValueError, match="unknown loss component 'other_hing'. Did you mean 'other_hinge'"):
        multilabel_core.make_component("loss", "other_hing")
    with pytest.raises(ValueError, match="loss 'other_hinge' has no parameter 'margin'"):
        multilabel_core.make_component("loss", "other_hinge", margin=2.0)
