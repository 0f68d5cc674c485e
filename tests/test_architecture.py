"""The package's imports flow one way, as docs/architecture.md draws them.

Each module has a floor; a module may import only modules on lower floors (at module level or
inside a function alike), so there is no import cycle and campaigns and sessions, on one floor,
never import each other. The installed package never imports the research code outside it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "activeeval"

#: docs/architecture.md's floors, from the ground up.
FLOORS: dict[str, int] = {
    "activeeval._version": 0,
    "activeeval.errors": 0,
    "activeeval.methods": 0,
    "activeeval._validation": 1,
    "activeeval.predictive": 2,
    "activeeval.measures": 3,
    "activeeval.ranking": 4,
    "activeeval.estimators.inference": 4,
    "activeeval.estimators.smoother": 4,
    "activeeval.sampling": 5,
    "activeeval.datasets": 5,
    "activeeval.estimators.assisted": 6,
    "activeeval.acquisition": 6,
    "activeeval.estimators": 7,
    "activeeval.estimators.report": 7,
    "activeeval.results": 7,
    "activeeval.campaign": 8,
    "activeeval.store": 8,
    "activeeval.demo": 9,
    "activeeval.cli": 10,
    "activeeval.__main__": 11,
    "activeeval": 11,  # the package's face: hands names on
}


def _module(path: Path) -> str:
    parts = ("activeeval", *path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module the file imports, at any depth."""
    mod = _module(path)
    package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            out.add(target)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


MODULES = sorted(SRC.rglob("*.py"))


def test_every_module_has_a_floor() -> None:
    assert sorted(_module(p) for p in MODULES) == sorted(FLOORS)


@pytest.mark.parametrize("path", MODULES, ids=_module)
def test_a_module_imports_only_modules_below_it(path: Path) -> None:
    mod = _module(path)
    for target in _imports(path):
        if not target.startswith("activeeval"):
            assert target.split(".")[0] not in ("reproduce", "benchmarks", "tests"), target
            continue
        # ``from .estimators import report`` names the module report.
        owner = target if target in FLOORS else target.rsplit(".", 1)[0]
        assert FLOORS[owner] < FLOORS[mod], f"{mod} (floor {FLOORS[mod]}) imports {target}"


def test_campaigns_and_sessions_never_import_each_other() -> None:
    for mod, other in (("campaign", "store"), ("store", "campaign")):
        assert f"activeeval.{other}" not in _imports(SRC / f"{mod}.py")
