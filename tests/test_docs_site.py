"""The documentation site's completeness check (docs/_hooks.py), which `mkdocs build --strict` runs.

The hook is tested here too, so that a public name without a docstring, or a registered method missing
from the API reference, fails the test suite with a clear message even where mkdocs is not installed.
The tests that need the built site run ``mkdocs build --strict`` once, with a fake third-party plugin
installed beside the project (it must not fail the build), and read the reference's HTML; the page
sources are checked for bare ``docs/...md`` paths where a link belongs.
"""

import importlib.util
import re
import types
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _module(**members):
    module = types.ModuleType("fake", "A module.")
    for name, obj in members.items():
        obj.__module__ = "fake"
        setattr(module, name, obj)
    return module


def test_the_check_names_an_undocumented_function_class_and_method(hooks):
    def documented():
        """Yes."""

    def bare():
        pass

    class Base:
        """A base."""

        def step(self):
            """Documented here."""

    class Child(Base):
        """A child."""

        def step(self):  # inherits Base.step's docstring, as help() shows it
            pass

        def extra(self):
            pass

    class Undocumented:
        pass

    module = _module(documented=documented, bare=bare, Base=Base, Child=Child, Undocumented=Undocumented)
    assert sorted(hooks._undocumented(module)) == ["fake.Child.extra", "fake.Undocumented", "fake.bare"]


def test_the_reference_covers_the_public_api_with_docstrings(hooks):
    """Every public module and registered method is referenced, and every public name has a docstring."""
    assert hooks.problems(ROOT / "docs") == []


@pytest.mark.parametrize(
    "html, shown",
    [
        (":class:<code>~multilabel_core.base.Loss</code> and", "<code>Loss</code> and"),
        ("see :func:<code>multilabel_core.make_method</code>.", "see <code>multilabel_core.make_method</code>."),
        (":mod:<code>~.loading</code>", "<code>loading</code>"),
        ("a ratio :math: stays", "a ratio :math: stays"),  # only the cross-reference roles
    ],
)
def test_sphinx_roles_left_by_mkdocstrings_show_as_code(hooks, html, shown):
    assert hooks.on_page_content(html) == shown


# -- a third-party plugin installed beside the project ---------------------------------------------

FAKE_PLUGIN = '''"""A third-party multilabel_core plugin, as someone else's distribution installs it."""

import os

import multilabel_core
from multilabel_core.registry import MethodSpec


class LogisticBR(multilabel_core.MultiLabelEstimator):
    """Someone else's method: its distribution documents it, not multilabel-core's site."""


@multilabel_core.hookimpl
def register_methods(register):
    marker = os.environ.get("FAKE_PLUGIN_MARKER")
    if marker:  # lets the test see that a build in another process loaded the plugin
        with open(marker, "a", encoding="utf-8") as stream:
            stream.write("register_methods\\n")
    register(MethodSpec(name="logistic_br", estimator=LogisticBR, citation="none"))
'''


def _fake_distribution(folder: Path) -> Path:
    """A folder that, put on sys.path, installs the distribution ``fake-thirdparty`` and its entry point."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fake_thirdparty_plugin.py").write_text(FAKE_PLUGIN, encoding="utf-8")
    info = folder / "fake_thirdparty-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-thirdparty\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[multilabel_core.plugins]\nlogistic_br = fake_thirdparty_plugin\n", encoding="utf-8"
    )
    return folder


@pytest.fixture
def third_party_plugin(tmp_path, monkeypatch):
    """The fake distribution on sys.path and the plugin manager rebuilt to see it (and rebuilt again after)."""
    import sys

    from multilabel_core.plugins import reset_plugin_manager

    monkeypatch.delenv("MULTILABEL_CORE_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.syspath_prepend(str(_fake_distribution(tmp_path / "site-packages")))
    reset_plugin_manager()
    yield
    sys.modules.pop("fake_thirdparty_plugin", None)
    monkeypatch.undo()
    reset_plugin_manager()


def test_a_third_party_plugins_method_is_not_this_sites_to_document(hooks, third_party_plugin):
    import multilabel_core

    names = {spec.name: spec.plugin for spec in multilabel_core.list_methods()}
    assert names.get("logistic_br") == "logistic_br"  # the plugin is really installed and registered
    assert "logistic_br" not in hooks.own_plugins()
    assert hooks.problems(ROOT / "docs") == []


def test_a_method_of_this_distribution_missing_from_the_reference_is_still_reported(
    hooks, third_party_plugin, monkeypatch
):
    """The filter keeps the check: the same method, counted as one of ours, fails it."""
    ours = hooks.own_plugins()
    monkeypatch.setattr(hooks, "own_plugins", lambda: ours | {"logistic_br"})
    assert hooks.problems(ROOT / "docs") == [
        "registered method 'logistic_br' (fake_thirdparty_plugin.LogisticBR) is in no ::: directive of docs/api/"
    ]


def test_own_plugins_are_the_entry_points_of_the_installed_distribution(hooks):
    from importlib.metadata import distribution

    from multilabel_core.plugins import CORE_PLUGIN_NAME, ENTRY_POINT_GROUP

    declared = {ep.name for ep in distribution("multilabel-core").entry_points if ep.group == ENTRY_POINT_GROUP}
    assert {"br", "mlrl", "ranking", "prml"} <= declared
    assert hooks.own_plugins() == declared | {CORE_PLUGIN_NAME}


@pytest.fixture(scope="module")
def site_with_a_third_party_plugin(tmp_path_factory):
    """``mkdocs build --strict`` run as the README runs it, with the fake plugin installed; the built site."""
    import os
    import subprocess
    import sys

    pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install '.[docs]')")
    work = tmp_path_factory.mktemp("docs_build")
    plugin_dir = _fake_distribution(work / "site-packages")
    marker = work / "loaded.txt"
    env = {key: value for key, value in os.environ.items() if key != "MULTILABEL_CORE_DISABLE_PLUGIN_AUTOLOAD"}
    env.update(
        PYTHONPATH=os.pathsep.join([str(plugin_dir), *filter(None, [os.environ.get("PYTHONPATH")])]),
        FAKE_PLUGIN_MARKER=str(marker),
        NO_MKDOCS_2_WARNING="1",
    )
    site = work / "site"
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
        # Not from ROOT: `python -m` puts the working directory first on sys.path, and a checkout installed
        # without -e (CI) has an unbuilt multilabel_core/ there that would shadow the installed package.
        cwd=work, env=env, capture_output=True, text=True, timeout=900,
    )
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stdout[-3000:]}\n{run.stderr[-6000:]}"
    assert marker.exists(), "the build did not load the third-party plugin, so it tested nothing"
    return site


def test_the_strict_build_passes_with_a_third_party_plugin_installed(site_with_a_third_party_plugin):
    assert (site_with_a_third_party_plugin / "api" / "methods" / "index.html").is_file()


# -- no private names in the reference ---------------------------------------------------------------


class _ReferenceParts(HTMLParser):
    """The text a reader sees in the reference's signatures, class bases and object headings (with titles).

    mkdocstrings puts a signature in its object's heading (``separate_signature`` off) or, when on, in a
    ``doc-signature`` block: both are read."""

    KINDS = ("doc-signature", "doc-class-bases", "doc-heading")

    def __init__(self):
        super().__init__()
        self.parts: list[tuple[str, str]] = []
        self._kind, self._depth, self._text = None, 0, []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if self._kind is None:
            kind = next((k for k in self.KINDS if k in classes), None)
            if kind is None:
                return
            self._kind, self._depth, self._text = kind, 0, []
        self._depth += 1
        if attributes.get("title"):  # the hover text of a cross-reference is shown too
            self._text.append(f" {attributes['title']} ")

    def handle_endtag(self, tag):
        if self._kind is None:
            return
        self._depth -= 1
        if self._depth == 0:
            self.parts.append((self._kind, " ".join("".join(self._text).split())))
            self._kind = None

    def handle_data(self, data):
        if self._kind is not None:
            self._text.append(data)


def test_the_reference_shows_no_private_names_or_lambdas(hooks, site_with_a_third_party_plugin):
    """``Bases: _LabelRanking``, ``*_NOT_FITTED_BASES``, ``attrs.field(converter=_names)``, a dict of lambdas:
    none of them in a signature, a bases line or a heading of the API reference."""
    pages = sorted((site_with_a_third_party_plugin / "api").glob("*/index.html"))
    assert len(pages) >= 10
    seen: dict[str, int] = {kind: 0 for kind in _ReferenceParts.KINDS}
    headings = []
    leaks = []
    for page in pages:
        parser = _ReferenceParts()
        parser.feed(page.read_text(encoding="utf-8"))
        for kind, text in parser.parts:
            seen[kind] += 1
            headings.append(text)
            for match in hooks.PRIVATE_NAME.finditer(text):
                leaks.append(f"{page.parent.name}: {kind}: {match.group()!r} in {text[:160]!r}")
    # the parser found what it checks (signatures are part of the headings: separate_signature is off)
    assert seen["doc-class-bases"] > 20 and seen["doc-heading"] > 200, seen
    # a default given by a private constant (_SAMPLES) shows its value
    assert any(text.startswith("label_matrices(draw, n_samples=integers(min_value=4") for text in headings)
    assert leaks == []


def test_private_bases_are_replaced_by_the_public_classes_they_stand_for(hooks, site_with_a_third_party_plugin):
    html = (site_with_a_third_party_plugin / "api" / "methods" / "index.html").read_text(encoding="utf-8")
    parser = _ReferenceParts()
    parser.feed(html)
    bases = {text for kind, text in parser.parts if kind == "doc-class-bases"}
    assert any("MultiLabelEstimator" in text for text in bases)  # _LabelRanking, _Privileged, ... stand for it


def test_public_bases_skip_private_classes_but_keep_their_public_ancestors(hooks):
    class Public:
        pass

    class _Mixin:
        pass

    class _Private(Public, _Mixin):
        pass

    class Other:
        pass

    class Leaf(_Private, Other):
        pass

    assert hooks.public_bases(Leaf) == [Public, Other]
    assert hooks.public_bases(Public) == []


@pytest.mark.parametrize(
    "text, private",
    [
        ("_PerLabel", True),
        ("lambda name, value: check_cost(value, name)", True),
        ("attrs.field(converter=_names)", True),
        ("MultiLabelEstimator", False),
        ("__init__", False),  # dunders are public protocol
        ("multilabel_core._builtin", False),  # a module path, not a name the reader uses
        ("n_samples=integers(min_value=4, max_value=12)", False),
    ],
)
def test_the_private_name_pattern(hooks, text, private):
    assert bool(hooks.PRIVATE_NAME.search(text)) is private


# -- links, not bare paths -----------------------------------------------------------------------------

#: A bare path to a documentation page, as prose wrote them before: "(docs/estimators.md)".
_BARE_PAGE_PATH = re.compile(r"\bdocs/[\w./-]+\.md\b")


def _prose_html(markdown_text: str) -> str:
    """The page rendered as mkdocs renders it, with code (blocks and spans) and link targets removed."""
    markdown = pytest.importorskip("markdown", reason="the docs extra is not installed (pip install '.[docs]')")
    html = markdown.markdown(
        markdown_text,
        extensions=["admonition", "tables", "pymdownx.superfences", "pymdownx.arithmatex"],
        extension_configs={"pymdownx.arithmatex": {"generic": True}},
    )
    html = re.sub(r"<pre\b.*?</pre>|<code\b.*?</code>", " ", html, flags=re.DOTALL)
    return re.sub(r'\bhref="[^"]*"', "", html)


def test_the_pages_link_to_pages_instead_of_naming_their_paths():
    pages = sorted((ROOT / "docs").rglob("*.md"))
    pages = [page for page in pages if "examples" not in page.relative_to(ROOT / "docs").parts]
    assert len(pages) > 30
    bare = [
        f"{page.relative_to(ROOT)}: {match.group()}"
        for page in pages
        for match in _BARE_PAGE_PATH.finditer(_prose_html(page.read_text(encoding="utf-8")))
    ]
    assert bare == []


@pytest.mark.parametrize(
    "text, found",
    [
        ("see (docs/estimators.md) for more", ["docs/estimators.md"]),
        ("see [Estimators](../estimators.md)", []),
        ("`docs/estimators.md` in code", []),
        ("```\nmlcore ... # docs/estimators.md\n```", []),
    ],
)
def test_the_bare_path_check_finds_prose_only(text, found):
    assert _BARE_PAGE_PATH.findall(_prose_html(text)) == found
