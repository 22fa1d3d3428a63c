"""The documentation site as a reader sees it, in headless Chromium (slow tier).

Builds the site from a copy of ``docs/`` (into ``tmp_path``; Sphinx in a
subprocess, warnings as errors), serves it on localhost and drives Debian's
``chromium``: screenshots of the index, an API page, a tutorial and the
gallery (saved under the folder printed, and copied into
``docs/_build/screenshots`` when run from a checkout), the search page's
results for ``Network``, ``local_rule`` and ``Sweep`` (the DOM after the
search script ran), the gallery thumbnails, every internal link of every
built page, and that the site works offline: no page loads anything from the
network, and a rule's page opened from disk with Chromium's network off shows
its equations typeset by the site's own MathJax, not raw LaTeX.

To keep CI short, only two scripts run (``NEUROSIM_DOCS_EXECUTE``): a
tutorial and a gallery example that draw figures, so two thumbnails are real
figures; the other pages show their code without output. The full site, with
every script run, is ``python -m sphinx -W --keep-going -b html docs
docs/_build/html``.

Needs ``chromium`` on the PATH (``apt-get install -y chromium``; ``.ci/run``
installs it) and the ``docs`` extra; skipped, saying which is missing,
otherwise.
"""

from __future__ import annotations

import functools
import html.parser
import http.server
import importlib.util
import json
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import urllib.parse
import zlib

import pytest

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: the scripts the test build runs: both draw figures, and share their networks' compiled code with others
EXECUTED = r"tutorial_02_recordings|example_sweep"
BUILD_TIMEOUT = 900
#: a rule's page whose docstring has display equations (LaTeX's split environment, over two lines)
MATH_PAGE = "api/generated/neurosim.BCM.html"
#: what a page whose MathJax did not run shows of its equations
RAW_LATEX = ("\\[", "\\(", "\\begin", "\\Delta")


def _missing():
    if CHROMIUM is None:
        return "chromium is not installed (apt-get install -y chromium)"
    for module in ("sphinx", "sphinx_gallery", "numpydoc", "myst_parser", "pydata_sphinx_theme", "sphinx_copybutton",
                   "mathjax"):
        if importlib.util.find_spec(module) is None:
            return f"the docs extra is not installed ({module} missing): pip install -e '.[docs]'"
    return None


# ---------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    reason = _missing()
    if reason:
        pytest.skip(reason)
    work = tmp_path_factory.mktemp("site")
    src = work / "docs"
    # a copy, so the build's generated sources (api/generated, auto_*) never touch the checkout
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns("_build", "auto_examples", "auto_tutorials",
                                                             "generated", "gen_modules", "sg_execution_times.rst"))
    for name in ("CHANGELOG.md", "CITATION.cff", "CONTRIBUTING.md"):   # the root files the pages include
        shutil.copy(ROOT / name, work / name)
    out = work / "html"
    env = dict(os.environ, NEUROSIM_DOCS_EXECUTE=EXECUTED, MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(src),
                           str(out)], env=env, cwd=work, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    assert proc.returncode == 0, f"sphinx failed:\n{proc.stdout[-5000:]}\n{proc.stderr[-5000:]}"
    return out


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join(10)


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = tmp_path_factory.mktemp("screenshots")
    print(f"\nscreenshots: {folder}")
    yield folder
    if (DOCS / "conf.py").exists():
        keep = DOCS / "_build" / "screenshots"
        keep.mkdir(parents=True, exist_ok=True)
        for png in folder.glob("*.png"):
            shutil.copy(png, keep / png.name)
        print(f"screenshots copied to {keep}")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


# ---------------------------------------------------------------------------------------------- chromium


def _chromium(*args, timeout=120):
    with tempfile.TemporaryDirectory() as profile:
        cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--hide-scrollbars", f"--user-data-dir={profile}", *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"chromium failed ({proc.returncode}): {proc.stderr[-3000:]}"
    return proc.stdout


def _screenshot(url, path, height=1000):
    _chromium(f"--screenshot={path}", f"--window-size=1280,{height}", "--virtual-time-budget=5000", url)
    assert path.exists(), f"no screenshot of {url}"
    return path


def _dom(url, budget_ms=15000):
    return _chromium("--dump-dom", f"--virtual-time-budget={budget_ms}", url)


def _offline_dom(url, netlog, budget_ms=15000):
    """The DOM of ``url`` after its scripts ran with no host resolvable, and the URLs the page asked the network for.

    Chromium's net log lists every request that reached its network stack
    (``file://`` reads never do). Chromium's own background requests (update
    checks, accounts) are told apart by their isolation key: a page opened
    from disk makes requests keyed ``file://``.
    """
    dom = _chromium("--dump-dom", f"--virtual-time-budget={budget_ms}", '--host-resolver-rules=MAP * ~NOTFOUND',
                    f"--log-net-log={netlog}", url)
    log = json.loads(pathlib.Path(netlog).read_text())
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    asked = [event["params"]["url"] for event in log["events"] if event["type"] == start
             and event["params"].get("network_isolation_key", "").startswith("file://")]
    return dom, asked


# ---------------------------------------------------------------------------------------------- PNG


def _png_pixels(path):
    """(width, height, channels, rows of bytes) of an 8-bit non-interlaced PNG, read with zlib only."""
    data = pathlib.Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    pos, chunks = 8, {}
    idat = b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IDAT":
            idat += body
        else:
            chunks.setdefault(kind, body)
        pos += 12 + length
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    assert depth == 8 and interlace == 0, f"{path}: unsupported PNG (depth {depth}, interlace {interlace})"
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color]
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], (prev[i - channels] if i >= channels else 0)
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def _distinct_colours(path, step=4):
    width, height, channels, rows = _png_pixels(path)
    seen = set()
    for row in rows[::step]:
        for x in range(0, width * channels, channels * step):
            seen.add(row[x:x + min(channels, 3)])
    return width, height, len(seen)


# ---------------------------------------------------------------------------------------------- HTML


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links, self.loads = set(), [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        for key in ("href", "src"):
            if attrs.get(key) and tag in ("a", "link", "img", "script"):
                self.links.append(attrs[key])
                if tag != "a":   # what the browser fetches to show the page, not where a reader may go
                    self.loads.append(attrs[key])


class _Text(html.parser.HTMLParser):
    """The text a reader sees: everything outside ``<script>``, ``<style>`` and the head."""

    HIDDEN = ("script", "style", "head", "template")

    def __init__(self):
        super().__init__()
        self.depth, self.parts = 0, []

    def handle_starttag(self, tag, attrs):
        self.depth += tag in self.HIDDEN

    def handle_endtag(self, tag):
        self.depth -= tag in self.HIDDEN

    def handle_data(self, data):
        if not self.depth:
            self.parts.append(data)


def _visible_text(markup):
    parser = _Text()
    parser.feed(markup)
    return "".join(parser.parts)


def _parse(path, cache):
    if path not in cache:
        parser = _Links()
        parser.feed(path.read_text(encoding="utf-8", errors="replace"))
        cache[path] = parser
    return cache[path]


# ---------------------------------------------------------------------------------------------- tests


def test_pages_render_and_screenshots(site, server, shots):
    pages = {
        "index": "index.html",
        "api_network": "api/generated/neurosim.Network.html",
        "tutorial_recordings": "auto_tutorials/tutorial_02_recordings.html",
        "gallery": "auto_examples/index.html",
    }
    for name, page in pages.items():
        assert (site / page).exists(), f"{page} was not built"
        png = _screenshot(f"{server}/{page}", shots / f"{name}.png")
        width, height, colours = _distinct_colours(png)
        assert (width, height) == (1280, 1000)
        # a page that failed to render (blank, or an error page) has one or two colours
        assert colours > 20, f"{name}: the screenshot has {colours} colours; the page looks blank"
    dom = _dom(f"{server}/api/generated/neurosim.Network.html", budget_ms=3000)
    assert "neurosim.Network" in dom and "Parameters" in dom
    dom = _dom(f"{server}/auto_tutorials/tutorial_02_recordings.html", budget_ms=3000)
    assert "identical after a round trip: True" in dom, "the tutorial's output is not on its page"


@pytest.mark.parametrize("query, expect", [("Network", "neurosim.Network"), ("local_rule", "neurosim.local_rule"),
                                           ("Sweep", "neurosim.Sweep")])
def test_search_finds(server, query, expect):
    dom = _dom(f"{server}/search.html?q={urllib.parse.quote(query)}")
    assert 'class="search"' in dom, "the search page shows no result list"
    results = dom.split('class="search"', 1)[1].split("</ul>", 1)[0]
    assert expect in results, f"searching {query!r} does not list {expect}"


def test_gallery_thumbnails(site):
    index = (site / "auto_examples" / "index.html").read_text()
    thumbs = sorted({src for src in _parse(site / "auto_examples" / "index.html", {}).links
                     if "thumb" in src and src.endswith(".png")})
    assert len(thumbs) >= 8, f"expected a thumbnail per example, found {thumbs}"
    placeholder = None
    import sphinx_gallery

    default = pathlib.Path(sphinx_gallery.__file__).parent / "_static" / "no_image.png"
    if default.exists():
        placeholder = default.read_bytes()
    real = 0
    for src in thumbs:
        path = (site / "auto_examples" / src).resolve()
        assert path.exists(), f"thumbnail {src} is missing"
        _, _, colours = _distinct_colours(path, step=2)
        assert colours > 3, f"thumbnail {src} is blank ({colours} colours)"
        real += path.read_bytes() != placeholder
    # the executed example draws a figure: its thumbnail is that figure, not the placeholder
    assert any("example_sweep" in src for src in thumbs) and real >= 1
    assert "example_000_neurogenesis" in index


def test_no_broken_internal_links(site):
    cache, broken = {}, []
    # _static holds the theme's templates (webpack-macros.html) as files, not pages
    pages = sorted(p for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts)
    assert len(pages) > 100
    for page in pages:
        for link in _parse(page, cache).links:
            parts = urllib.parse.urlsplit(link)
            if parts.scheme or link.startswith("//"):
                continue   # outside links (and data:, mailto:) are not checked offline
            target = page if not parts.path else (page.parent / urllib.parse.unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {link}")
                continue
            if parts.fragment and target.suffix == ".html":
                if parts.fragment not in _parse(target, cache).ids:
                    broken.append(f"{page.relative_to(site)}: {link} (no id {parts.fragment!r})")
    assert not broken, f"{len(broken)} broken internal links, e.g.:\n" + "\n".join(broken[:40])


def test_no_page_loads_from_the_network(site):
    """Every script, stylesheet and image of every page is a file of the site (MathJax too, not a CDN's)."""
    cache, remote = {}, []
    for page in sorted(p for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts):
        for link in _parse(page, cache).loads:
            if urllib.parse.urlsplit(link).scheme in ("http", "https") or link.startswith("//"):
                remote.append(f"{page.relative_to(site)}: {link}")
    assert not remote, f"{len(remote)} pages load from the network, e.g.:\n" + "\n".join(remote[:20])
    assert (site / "_static" / "mathjax" / "tex-mml-chtml.js").is_file()
    assert "_static/mathjax/tex-mml-chtml.js" in (site / MATH_PAGE).read_text()


def test_math_renders_offline(site, tmp_path):
    page = site / MATH_PAGE
    source = page.read_text()
    # the page as built holds its equations as LaTeX for MathJax: what a reader sees when MathJax does not run
    assert all(raw in _visible_text(source) for raw in ("\\[", "\\begin{split}"))
    dom, asked = _offline_dom(page.as_uri(), tmp_path / "net.json")
    assert not asked, f"{MATH_PAGE} asked the network for {asked}"
    equations = source.count('class="math notranslate')
    assert equations >= 2 and dom.count("<mjx-container") == equations, "MathJax did not typeset every equation"
    assert "<mjx-merror" not in dom, "MathJax could not typeset an equation"
    shown = _visible_text(dom)
    assert "Bienenstock" in shown
    left = [raw for raw in RAW_LATEX if raw in shown]
    assert not left, f"{MATH_PAGE} shows raw LaTeX ({left}) after MathJax ran"


def test_the_offline_check_sees_a_request(tmp_path):
    """The net log check notices a page that loads from a CDN (here, with no host resolvable, a failed load)."""
    reason = _missing()
    if reason:
        pytest.skip(reason)
    page = tmp_path / "remote.html"
    page.write_text('<html><head><script src="https://cdn.invalid/x.js"></script></head><body>x</body></html>')
    _, asked = _offline_dom(page.as_uri(), tmp_path / "net.json", budget_ms=2000)
    assert asked == ["https://cdn.invalid/x.js"]


@pytest.mark.parametrize("page, example", [
    ("api/generated/neurosim.Network.html", "auto_tutorials/tutorial_01_first_network.html"),
    ("api/generated/neurosim.plot.facet.html", "auto_tutorials/tutorial_05_comparing_rules.html"),
    ("api/generated/neurosim.Sweep.html", "auto_examples/example_sweep.html"),
])
def test_api_pages_list_the_examples_using_them(site, page, example):
    """sphinx-gallery's backreferences: an object's page shows "Examples using X" with the scripts that use it."""
    text = (site / page).read_text()
    assert "Examples using" in text, f"{page} has no 'Examples using' section"
    section = text.split("Examples using", 1)[1]
    assert f"../../{example}" in section, f"{page} does not list {example} among the examples using it"
