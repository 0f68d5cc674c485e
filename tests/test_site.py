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


def _styled_and_scripted(dom: str, shot: Path) -> None:
    """The theme's scripts ran (they turn the page's ``no-js`` class into ``js``) and its
    stylesheet applied (the header bar is painted in the theme's primary colour, indigo
    #4051b5, where an unstyled page is white)."""
    from matplotlib.image import imread

    root = re.search(r"<html[^>]*>", dom)
    assert root is not None and "no-js" not in root.group(0) and " js" in root.group(0)
    pixel = imread(shot)[10, 640, :3] * 255  # 10 px down the header, mid-width
    assert abs(pixel - (0x40, 0x51, 0xB5)).max() < 12, pixel


def test_home_page_renders_its_headings(chromium, server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    shot = SITE / "_screenshots" / "home.png"
    dom = _render(chromium, server + "/", shot, tmp_path)
    _styled_and_scripted(dom, shot)
    assert "activeeval" in _headings(dom, 1)
    for section in ("Getting started", "User guide", "How it works", "API reference"):
        assert section in dom, section


def test_api_page_renders_the_reference_of_evaluate(chromium, server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    url = server + "/reference/campaigns/"
    shot = SITE / "_screenshots" / "reference-campaigns.png"
    dom = _render(chromium, url, shot, tmp_path)
    _styled_and_scripted(dom, shot)
    assert _headings(dom, 1) == ["Campaigns and results"]
    names = _headings(dom, 2)
    for name in ("evaluate", "compare", "EvaluationResult", "ComparisonResult"):
        assert any(h.startswith(name) for h in names), (name, names)
    for anchor in ("activeeval.evaluate", "activeeval.compare"):
        assert f'id="{anchor}"' in dom
    assert "Parameters" in dom and "Returns" in dom and "Examples" in dom


def test_the_build_fails_on_a_broken_link_and_a_failing_example(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``make docs``'s own command on a copy of the pages with a link to nowhere and an
    example that raises: the strict build must stop, naming both."""
    root = SITE.parent
    dry = subprocess.run(["make", "-n", "docs"], cwd=root, capture_output=True, text=True)
    command = next(line for line in dry.stdout.splitlines() if "mkdocs build" in line)
    docs = tmp_path / "docs"
    shutil.copytree(root / "docs", docs)
    page = docs / "guide" / "budgets.md"
    page.write_text(
        page.read_text()
        + "\n[nowhere](no-such-page.md)\n\n"
        + '```python exec="on"\nraise RuntimeError("an example that fails")\n```\n'
    )
    config = (root / "mkdocs.yml").read_text()
    config = config.replace("docs_dir: docs", f"docs_dir: {docs}")
    config = config.replace("site_dir: site", f"site_dir: {tmp_path / 'site'}")
    (tmp_path / "mkdocs.yml").write_text(config)
    run = subprocess.run(
        f"{command} -f {tmp_path / 'mkdocs.yml'}",
        shell=True, cwd=root, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    said = run.stdout + run.stderr
    assert run.returncode != 0
    assert "no-such-page.md" in said and "markdown_exec" in said
    assert "Aborted with 2 warnings in strict mode" in said
