"""The documentation site typesets mathematics: every method page writes its objective and dual as formulas,
the site serves MathJax itself, and in a headless browser every formula typesets without an error.

The site is built once (``mkdocs build --strict``, as the README's test command runs it).  The browser
tests need Chromium (Debian: ``apt-get install chromium-headless-shell`` or ``chromium``); where none is
installed they are skipped with that reason, and only they.
"""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The method pages (docs/methods/) whose objective and dual are written as formulas, and the solver pages
#: that state a primal or a dual.
METHOD_PAGES = ["br", "mlrl", "mtrl", "ranking", "prml", "concept-network", "lieml", "llsf", "trace-ls"]
SOLVER_PAGES = ["cd", "cd-ranking", "cd-svmplus", "smo", "fista"]
PAGES = [f"methods/{name}" for name in METHOD_PAGES] + [f"solvers/{name}" for name in SOLVER_PAGES]

#: What pymdownx.arithmatex (generic mode) leaves for MathJax: an element of class "arithmatex" holding
#: \[...\] (displayed) or \(...\) (inline).
_DISPLAYED = re.compile(r'<div class="arithmatex">\\\[.+?\\\]</div>', re.DOTALL)
_ANY_FORMULA = re.compile(r'class="arithmatex"')
#: A line of an indented code block that reads like an ASCII formula (what the pages had before).
_ASCII_FORMULA = re.compile(r"\b(min|max|argmin)_\{?\w|\bs\.t\.\s|\|\|\w.*\|\||\s(=|<=|>=)\s")

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def _browser() -> str | None:
    return next((path for path in map(shutil.which, BROWSERS) if path), None)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install '.[docs]')")
    site = tmp_path_factory.mktemp("docs_math") / "site"
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
        # Not from ROOT: `python -m` puts the working directory first on sys.path, and a checkout installed
        # without -e (CI) has an unbuilt multilabel_core/ there that would shadow the installed package.
        cwd=site.parent, capture_output=True, text=True, timeout=900,
    )
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stdout[-3000:]}\n{run.stderr[-6000:]}"
    return site


def _page(site: Path, page: str) -> str:
    return (site / page / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES)
def test_the_page_writes_its_formulas_for_mathjax(site, page):
    html = _page(site, page)
    assert _DISPLAYED.search(html), f"{page}: no displayed formula (arithmatex \\[...\\] block)"
    scripts = re.findall(r'<script src="([^"]+)"', html)
    assert [s for s in scripts if s.endswith("assets/javascripts/mathjax-config.js")], scripts
    assert [s for s in scripts if s.endswith("assets/mathjax/tex-chtml.js")], scripts
    # the configuration must come first: MathJax reads window.MathJax when it loads
    order = [s.rsplit("/", 1)[-1] for s in scripts]
    assert order.index("mathjax-config.js") < order.index("tex-chtml.js")


@pytest.mark.parametrize("page", [f"methods/{name}" for name in METHOD_PAGES] + [f"solvers/{n}" for n in SOLVER_PAGES])
def test_no_ascii_formula_is_left_in_an_indented_block(page):
    """The formulas the pages wrote as indented ASCII blocks are formulas now (commands may stay code)."""
    assert _ascii_formulas((ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8")) == []


def _ascii_formulas(text: str) -> list[str]:
    """First lines of indented code blocks that read like formulas (inside a list item a block is indented
    by 8 spaces: 4 are the item's continuation)."""
    fenced, in_list, previous, found = False, False, "", []
    for line in text.splitlines():
        if re.match(r"\s*(```|~~~)", line):
            fenced = not fenced
        elif not fenced:
            if re.match(r"(\d+\.|[-*+])\s", line):
                in_list = True
            elif line and not line[0].isspace():
                in_list = False
            code = line.startswith(" " * (8 if in_list else 4)) and not line.lstrip().startswith(("-", "*", "$$"))
            if code and previous.strip() == "" and _ASCII_FORMULA.search(line):
                found.append(line.strip())
        previous = line
    return found


def test_the_ascii_formula_check_finds_what_the_pages_had():
    before = (
        "Problem (6):\n\n    min_{W, b}  1/2 ||W||^2 + C sum xi\n\n"
        "1. **Dual**\n\n        D(A) = -C loss*(Y, -A / C)\n"
    )
    assert _ascii_formulas(before) == ["min_{W, b}  1/2 ||W||^2 + C sum xi", "D(A) = -C loss*(Y, -A / C)"]
    after = "1. **Dual**\n\n    $$\n    D(A) = 0\n    $$\n\n    is a lower bound = prose in the item.\n"
    assert _ascii_formulas(after) == []


def test_mathjax_is_served_by_the_site_with_its_fonts_and_licence(site):
    """No CDN: the script, the fonts it loads (beside it, [mathjax]/output/chtml/fonts/woff-v2) and its licence."""
    script = site / "assets" / "mathjax" / "tex-chtml.js"
    assert script.stat().st_size > 500_000
    font_dir = site / "assets" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2"
    fonts = {path.name for path in font_dir.glob("*.woff")}
    assert {f"MathJax_{name}.woff" for name in ("Main-Regular", "Math-Italic", "AMS-Regular", "Size1-Regular")} <= fonts
    assert "Apache License" in (site / "assets" / "mathjax" / "LICENSE").read_text(encoding="utf-8")
    config = (site / "assets" / "javascripts" / "mathjax-config.js").read_text(encoding="utf-8")
    assert 'processHtmlClass: "arithmatex"' in config


# -- in a browser ---------------------------------------------------------------------------------------


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the test reads the pages, not the access log
        pass


@pytest.fixture(scope="module")
def served(site):
    """The built site over HTTP on the loopback interface (fonts are not loaded from file:// pages)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    path = _browser()
    if path is None:
        pytest.skip(
            "no headless browser on this machine (looked for " + ", ".join(BROWSERS) + "): the formulas' "
            "rendering is not checked; Debian: apt-get install chromium-headless-shell"
        )
    return path


def _chromium(browser: str, *args: str) -> subprocess.CompletedProcess:
    # --virtual-time-budget lets the page's scripts (MathJax's typesetting, its font loads) finish first
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--virtual-time-budget=20000", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("page", PAGES)
def test_every_formula_typesets_without_an_error_in_a_browser(site, served, browser, page):
    """As many MathJax containers as formulas, no parse error (merror), no undefined macro (red text).

    A macro of an extension the site does not ship (say \\boldsymbol) stops the typesetting of the whole
    page, which the count catches."""
    expected = len(_ANY_FORMULA.findall(_page(site, page)))
    run = _chromium(browser, "--dump-dom", f"{served}/{page}/")
    dom = run.stdout
    assert "</html>" in dom, run.stderr[-2000:]
    assert len(re.findall(r"<mjx-container\b", dom)) == expected
    assert re.findall(r"<mjx-merror\b[^>]*>.{0,200}", dom) == []
    assert re.findall(r'<mjx-mtext[^>]*style="[^"]*color: red[^>]*>.{0,200}', dom) == []


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_a_screenshot_of_a_method_page_shows_its_formulas(site, served, browser, tmp_path):
    """The br page in a 1280-pixel window: the screenshot is taken after MathJax ran, and its formula region
    differs from the same page with the formulas left as TeX source (MathJax disabled)."""
    shot = tmp_path / "br.png"
    run = _chromium(browser, "--window-size=1280,2200", f"--screenshot={shot}", f"{served}/methods/br/")
    assert shot.exists(), run.stderr[-2000:]
    data = shot.read_bytes()
    assert _png_size(data) == (1280, 2200)

    # The same page without MathJax: arithmatex's \[ ... \] source would show instead.
    plain_page = site / "methods" / "br" / "plain.html"
    plain_page.write_text(
        re.sub(r'<script src="[^"]*mathjax[^"]*"></script>', "", _page(site, "methods/br")), encoding="utf-8"
    )
    plain_dom = _chromium(browser, "--dump-dom", f"{served}/methods/br/plain.html").stdout
    rendered_dom = _chromium(browser, "--dump-dom", f"{served}/methods/br/").stdout
    assert "<mjx-container" not in plain_dom and "\\min_{v_j}" in plain_dom
    assert "<mjx-container" in rendered_dom
    plain_shot = tmp_path / "br-plain.png"
    _chromium(browser, "--window-size=1280,2200", f"--screenshot={plain_shot}", f"{served}/methods/br/plain.html")
    assert plain_shot.read_bytes() != data  # typeset formulas change what the page shows
    pil = pytest.importorskip("PIL", reason="Pillow not installed: the screenshots' pixels are not compared")
    from PIL import Image, ImageChops

    difference = ImageChops.difference(Image.open(shot).convert("L"), Image.open(plain_shot).convert("L"))
    changed = sum(difference.histogram()[33:])  # pixels whose grey level moved by more than 32 of 255
    assert changed > 5_000, changed
