"""The README is the front door: short, its example runs as written, its links lead somewhere."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block, in order."""
    return re.findall(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S)


def test_readme_is_under_120_lines() -> None:
    assert len(README.read_text().splitlines()) < 120


def test_readme_example_runs_as_written_and_prints_what_it_shows() -> None:
    blocks = _blocks(README.read_text())
    i = next(k for k, (lang, _) in enumerate(blocks) if lang == "python")
    code, (_, shown) = blocks[i][1], blocks[i + 1]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})
    assert out.getvalue().split() == shown.split()


def test_readme_links_lead_to_files() -> None:
    links = re.findall(r"\]\(([^)#]+)\)", README.read_text())
    assert links
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, missing
