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


def _locked_numerics() -> bool:
    """numpy, scipy and scikit-learn at the lock's versions (what the README's output was
    printed with); other versions fit the example's model a little differently."""
    import numpy
    import scipy
    import sklearn

    pins = dict(
        line.strip().lower().split("==")
        for line in (ROOT / "requirements" / "lock.txt").read_text().splitlines()
        if "==" in line
    )
    have = {"numpy": numpy.__version__, "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__}  # fmt: skip
    return all(pins.get(name) == version for name, version in have.items())


def test_readme_example_runs_as_written_and_prints_what_it_shows() -> None:
    blocks = _blocks(README.read_text())
    i = next(k for k, (lang, _) in enumerate(blocks) if lang == "python")
    code, (_, shown) = blocks[i][1], blocks[i + 1]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})
    if _locked_numerics():
        assert out.getvalue().split() == shown.split()
    else:  # the same result, fitted by another scikit-learn: its shape, not its digits
        assert out.getvalue().split()[:2] == shown.split()[:2]
        assert len(out.getvalue().splitlines()) == len(shown.strip().splitlines())


def test_readme_links_lead_to_files() -> None:
    links = re.findall(r"\]\(([^)#]+)\)", README.read_text())
    assert links
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, missing
