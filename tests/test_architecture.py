"""The package's imports flow one way, as docs/architecture.md draws them.

Each module has a floor; a module may import only modules on lower floors (at module level or
inside a function alike), so there is no import cycle and campaigns and sessions, on one floor,
never import each other. The installed package never imports the research code outside it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "activeeval"

#: docs/architecture.md's floors, from the ground up.
FLOORS: dict[str, float] = {
    "activeeval._version": 0,
    "activeeval.errors": 0,
    "activeeval.methods": 0,
    "activeeval._chunks": 0,
    "activeeval._validation": 1,
    "activeeval.predictive": 2,
    "activeeval.measures": 3,
    "activeeval.probability_measures": 3.5,
    "activeeval.ranking": 4,
    "activeeval.estimators.inference": 4,
    "activeeval.estimators.smoother": 4,
    "activeeval.estimators.anytime": 4,
    "activeeval.estimators.classwise": 4.5,
    "activeeval.estimators.probability": 4.6,
    "activeeval.sampling": 5,
    "activeeval.datasets": 5,
    "activeeval.io": 5,
    "activeeval.labelstudio": 5.5,
    "activeeval.estimators.assisted": 6,
    "activeeval.estimators.tempered": 6.5,
    "activeeval.estimators.summary": 6.7,
    "activeeval.acquisition": 6,
    "activeeval.estimators": 7,
    "activeeval.estimators.report": 7,
    "activeeval.results": 7,
    # a package sits on one floor; within it, tenths order its modules
    "activeeval.campaign.steps": 8,
    "activeeval.campaign.reuse": 8.05,
    "activeeval.campaign.batches": 8.1,
    "activeeval.campaign.stratified": 8.1,
    "activeeval.campaign.ranked": 8.1,
    "activeeval.campaign.classwise": 8.1,
    "activeeval.campaign.probability": 8.15,
    "activeeval.campaign.groups": 8.16,
    "activeeval.campaign.distributed": 8.17,
    "activeeval.campaign.evaluation": 8.2,
    "activeeval.campaign.comparison": 8.2,
    "activeeval.campaign": 8.3,
    "activeeval.session.blobs": 8,
    "activeeval.session.lookup": 8.005,
    "activeeval.session.codec": 8.01,
    "activeeval.session.schema": 8.02,
    "activeeval.session.stored": 8.05,
    "activeeval.session.summaries": 8.07,
    "activeeval.session.planning": 8.1,
    "activeeval.session.streaming": 8.12,
    "activeeval.session.ledger": 8.15,
    "activeeval.session.handout": 8.2,
    "activeeval.session.intake": 8.2,
    "activeeval.session.report": 8.2,
    "activeeval.session.revision": 8.2,
    "activeeval.session.facade": 8.3,
    "activeeval.session": 8.4,
    "activeeval.claims": 7.5,
    "activeeval.stopping": 7.6,
    "activeeval.planner": 8,
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
            # ``from . import report`` imports the module report, not the package
            named = {f"{target}.{a.name}" for a in node.names} & set(FLOORS)
            out |= named or {target}
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


def _files(name: str) -> list[Path]:
    """The files of a module or of a package."""
    return sorted((SRC / name).rglob("*.py")) if (SRC / name).is_dir() else [SRC / f"{name}.py"]


@pytest.mark.parametrize(("side", "other"), [("campaign", "session"), ("session", "campaign")])
def test_campaigns_and_sessions_never_import_each_other(side: str, other: str) -> None:
    files = _files(side)
    assert files and all(f.exists() for f in files)
    for f in files:
        for target in _imports(f):
            assert not target.startswith(f"activeeval.{other}"), f"{_module(f)} imports {target}"


def test_the_top_level_holds_what_a_user_calls() -> None:
    import activeeval

    assert len(activeeval.__all__) <= 45  # issue 25, counting what the open issues add
    for name in activeeval.__all__:
        assert getattr(activeeval, name) is not None
    assert not set(activeeval.__all__) & set(activeeval._MOVED)


@pytest.mark.parametrize("name", ["ShapeError", "paired_test", "optimal_distribution"])
def test_a_moved_name_still_reads_from_the_top_level_with_a_warning(name: str) -> None:
    import importlib

    import activeeval

    home = importlib.import_module(activeeval._MOVED[name])
    with pytest.warns(DeprecationWarning, match=rf"activeeval\.{name} moved to {home.__name__}"):
        assert getattr(activeeval, name) is getattr(home, name)
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        activeeval.not_a_name  # noqa: B018


def test_every_moved_name_is_at_its_new_home() -> None:
    import importlib

    import activeeval

    for name, home in activeeval._MOVED.items():
        assert hasattr(importlib.import_module(home), name), (name, home)


def test_nothing_in_the_repository_reads_a_moved_name_from_the_top_level() -> None:
    import re

    import activeeval

    moved = "|".join(sorted(activeeval._MOVED))
    attr = re.compile(rf"\b(?:ae|activeeval)\.(?:{moved})\b")
    imported = re.compile(rf"from activeeval import [^\n]*\b(?:{moved})\b")
    root = SRC.parents[1]
    files = [
        *root.glob("src/**/*.py"),
        *root.glob("tests/*.py"),
        *root.glob("reproduce/*.py"),
        *root.glob("benchmarks/*.py"),
        root / "README.md",
        *root.glob("docs/**/*.md"),
    ]
    for f in files:
        text = f.read_text()
        if f.name == "test_architecture.py":
            continue
        assert not attr.search(text) and not imported.search(text), f


def _documented_floors() -> dict[str, int]:
    """docs/architecture.md's table: floor -> modules (``pkg/`` is every module of pkg)."""
    table = (SRC.parents[1] / "docs" / "architecture.md").read_text()
    out: dict[str, int] = {}
    for floor, cell in re.findall(r"^\| (\d+) \| (.+?) \|", table, re.M):
        for name in re.findall(r"`([\w/]+)`", cell):
            mod = "activeeval" if name == "__init__" else "activeeval." + name.replace("/", ".")
            if name.endswith("/"):
                out |= dict.fromkeys((m for m in FLOORS if m.startswith(mod)), int(floor))
                out[mod.rstrip(".")] = int(floor)
            else:
                out[mod] = int(floor)
    return out


def test_the_module_map_draws_the_floors_the_test_enforces() -> None:
    documented = _documented_floors()
    assert {m: int(f) for m, f in FLOORS.items() if m != "activeeval.estimators"} == {
        m: f for m, f in documented.items() if m != "activeeval.estimators"
    }
