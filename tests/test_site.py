"""The built documentation site renders in a real browser (``make docs-check``).

Marked ``site``: ``make test`` deselects it (it needs ``make docs`` first and Debian's
Chromium); ``make docs-check`` builds the site, installs Chromium when missing and runs these.
The site is served over HTTP on the loopback address, as a reader's browser would get it, and
Chromium dumps each page's DOM after its scripts ran; screenshots go to
``site/_screenshots/``.
"""

from __future__ import annotations

import functools
import html
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytestmark = pytest.mark.site

SITE = Path(__file__).resolve().parents[1] / "site"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1600",
)


@pytest.fixture(scope="module")
def chromium() -> str:
    exe = os.environ.get("CHROMIUM") or shutil.which("chromium") or ""
    if not Path(exe).is_file():
        pytest.fail("Chromium not found: run `make docs-check` (it installs Debian's chromium)")
    if not (SITE / "index.html").is_file():
        pytest.fail("site/ is not built: run `make docs` first")
    return exe


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(SITE))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def _render(chromium: str, url: str, shot: Path, profile: Path) -> str:
    """The page's DOM after its scripts ran; a screenshot of it beside."""
    common = [chromium, *FLAGS, f"--user-data-dir={profile}"]
    dom = subprocess.run(
        [*common, "--dump-dom", url], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    shot.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [*common, f"--screenshot={shot}", url], capture_output=True, timeout=120, check=True
    )
    assert shot.is_file() and shot.stat().st_size > 10_000, f"no screenshot of {url}"
    return dom


def _headings(dom: str, level: int) -> list[str]:
    found = re.findall(rf"<h{level}[^>]*>(.*?)</h{level}>", dom, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", h)).replace("¶", "").strip() for h in found]


def test_home_page_renders_its_headings(chromium, server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    dom = _render(chromium, server + "/", SITE / "_screenshots" / "home.png", tmp_path)
    assert "activeeval" in _headings(dom, 1)
    assert 'class="md-nav' in dom  # the theme's navigation, built by its scripts and CSS
    for section in ("Getting started", "User guide", "How it works", "API reference"):
        assert section in dom, section


def test_api_page_renders_the_reference_of_evaluate(chromium, server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    url = server + "/reference/campaigns/"
    dom = _render(chromium, url, SITE / "_screenshots" / "reference-campaigns.png", tmp_path)
    assert _headings(dom, 1) == ["Campaigns and results"]
    names = _headings(dom, 2)
    for name in ("evaluate", "compare", "EvaluationResult", "ComparisonResult"):
        assert any(h.startswith(name) for h in names), (name, names)
    for anchor in ("activeeval.evaluate", "activeeval.compare"):
        assert f'id="{anchor}"' in dom
    assert "Parameters" in dom and "Returns" in dom and "Examples" in dom
