"""The documentation site, built and opened as a reader opens it.

``make docs`` builds it (docs/ with the references generated from the build, MkDocs ``--strict``: a broken link,
a page missing from the navigation or a nav entry without its page fails the build) into build/docs/. Then
headless Chromium (Debian's ``chromium``; ``make deps`` installs it) loads, from a server on the loopback, a probe
page that holds the site's front page and one generated reference page in frames; once everything has loaded
(the frames' images included), the probe writes what it found into its own DOM, which Chromium prints
(``--dump-dom``): the navigation's entries, whether each image of the front page decoded, and the reference
page's title and table. Without MkDocs or a browser the tests are skipped, saying which is missing.
"""

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from helpers import build_lock

REPO = Path(__file__).resolve().parents[1]
SITE = REPO / "build" / "docs"
#: A generated reference page the browser opens (tools/docs/reference.py writes it at every make docs).
REFERENCE = "reference/scenario-keys.html"
#: The nav's top-level sections (mkdocs.yml).
SECTIONS = ["Home", "Guide", "Reference", "Results", "Design", "Notes"]

PROBE = """<!doctype html><html><body>
<iframe id="front" src="/index.html" width="1200" height="900"></iframe>
<iframe id="ref" src="/%s" width="1200" height="900"></iframe>
<script>
window.addEventListener("load", function () {
  var front = document.getElementById("front").contentDocument, ref = document.getElementById("ref").contentDocument;
  var nav = Array.prototype.map.call(front.querySelectorAll("nav a, nav .caption"), function (a) {
    return a.textContent.trim(); });
  var images = Array.prototype.map.call(front.querySelectorAll("img"), function (i) {
    return {src: i.getAttribute("src"), loaded: i.complete && i.naturalWidth > 0}; });
  var h1 = ref.querySelector("h1");
  var out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({nav: nav, images: images, ref_title: h1 ? h1.textContent.trim() : null,
                                    ref_tables: ref.querySelectorAll("table").length});
  document.body.appendChild(out);
});
</script></body></html>"""


def _built_this_run(stamp: Path) -> bool:
    """The site was built by this test run (pytest-xdist's workers share the run's id), so it is not built twice."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", str(os.getpid()))
    if stamp.is_file() and stamp.read_text() == run:
        return True
    stamp.write_text(run)
    return False


@pytest.fixture(scope="module")
def site():
    """build/docs/, made by make docs once per test run; the build's output if it failed."""
    try:
        import mkdocs, mkdocstrings_handlers.python  # noqa: F401
    except ImportError as e:
        pytest.skip(f"MkDocs or mkdocstrings-python is not installed ({e.name}; make deps installs both)")
    with build_lock(SITE):
        stamp = REPO / "build" / "docs.tested"
        if not _built_this_run(stamp) or not (SITE / "index.html").is_file():
            made = subprocess.run(["make", "-s", "docs"], cwd=REPO, capture_output=True, text=True, timeout=600)
            if made.returncode != 0:
                stamp.unlink(missing_ok=True)
                pytest.fail(f"make docs failed (exit {made.returncode}):\n{made.stdout[-3000:]}\n{made.stderr[-3000:]}")
    return SITE


def test_the_site_builds_strict_with_every_page(site):
    pages = {p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    assert {"index.html", "design.html", "results.html", "guide/policies/gang.html", REFERENCE} <= pages
    assert (site / "images" / "gang-trace.png").is_file()


def _browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return name
    pytest.skip("no headless browser: install Debian's chromium (make deps does) to open the built site")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def served(site):
    """The built site on a loopback port, with the probe page beside it."""
    probe = site / "_probe.html"
    probe.write_text(PROBE % REFERENCE)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    probe.unlink(missing_ok=True)


def test_a_browser_sees_the_navigation_a_reference_page_and_an_image(served, tmp_path):
    browser = _browser()
    shown = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                            f"--user-data-dir={tmp_path}", "--dump-dom",
                            f"{served}/_probe.html"], capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="probe">(.*?)</pre>', shown.stdout, re.S)
    assert found, f"the probe page reported nothing ({browser} exit {shown.returncode}):\n{shown.stderr[-2000:]}"
    probe = json.loads(found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                       .replace("&amp;", "&"))
    nav = probe["nav"]
    assert all(s in nav for s in SECTIONS), f"the navigation lacks a section: {nav}"
    assert {"Getting started", "gang", "Scenario keys", "Python API"} <= set(nav)
    assert probe["images"] and all(i["loaded"] for i in probe["images"]), probe["images"]
    assert probe["ref_title"] and probe["ref_tables"] >= 1, probe
