"""The API reference is the docstrings: every public name is documented, in numpydoc form.

The public names are the ``__all__`` of the modules listed in :data:`PUBLIC_MODULES` (the top
level and the homes that ``docs/reference`` documents). For each public function and class the
docstring has the numpydoc sections a reader of a reference looks for; each public method has
its Parameters and Returns. Exceptions and warnings need only say when they are raised. The
Examples themselves run as doctests in ``make test`` (``--doctest-modules`` over the package).
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"

#: The modules whose ``__all__`` is the public API the reference documents.
PUBLIC_MODULES = (
    "activeeval",
    "activeeval.claims",
    "activeeval.datasets",
    "activeeval.errors",
    "activeeval.estimators.assisted",
    "activeeval.estimators.classwise",
    "activeeval.estimators.inference",
    "activeeval.estimators.probability",
    "activeeval.io",
    "activeeval.labelstudio",
    "activeeval.measures",
    "activeeval.methods",
    "activeeval.planner",
    "activeeval.predictive",
    "activeeval.probability_measures",
    "activeeval.ranking",
    "activeeval.sampling",
    "activeeval.session",
)

_SECTION = re.compile(r"^(\w[\w ]*)\n-{3,}\s*$", re.MULTILINE)


def _public() -> list[tuple[str, str, Any]]:
    """(module, name, object) for each public name; an object exported twice (the top level
    re-exports from its home) is listed once, under the first module that names it."""
    out, seen = [], set()
    for mod in PUBLIC_MODULES:
        m = importlib.import_module(mod)
        for name in m.__all__:
            obj = getattr(m, name)
            key = id(obj) if callable(obj) else (mod, name)
            if key not in seen:
                seen.add(key)
                out.append((mod, name, obj))
    return out


def _sections(doc: str | None) -> set[str]:
    return set(_SECTION.findall(doc or ""))


def _is_exception(obj: Any) -> bool:
    return inspect.isclass(obj) and issubclass(obj, BaseException | Warning)


def _directives() -> list[str]:
    """The dotted paths of every ``::: dotted.path`` directive in docs/reference."""
    return [
        path
        for page in sorted(REFERENCE.glob("*.md"))
        for path in re.findall(r"^::: ([\w.]+)\s*$", page.read_text(), re.MULTILINE)
    ]


def _resolve(path: str) -> Any:
    mod, _, name = path.rpartition(".")
    try:
        return getattr(importlib.import_module(mod), name)
    except (ImportError, AttributeError):
        return importlib.import_module(path)


def _params(obj: Any) -> list[str]:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    return [
        p
        for p, v in sig.parameters.items()
        if p not in ("self", "cls") and v.kind not in (v.VAR_POSITIONAL, v.VAR_KEYWORD)
    ]


def _needs(obj: Any) -> set[str]:
    """The sections a public function or class must carry."""
    need = {"See Also", "Examples"}
    if inspect.isclass(obj):
        return need | ({"Parameters"} if _params(obj) else set())
    need |= {"Returns"} if not _returns_none(obj) else set()
    return need | ({"Parameters"} if _params(obj) else set())


def _returns_none(fn: Any) -> bool:
    ann = inspect.signature(fn).return_annotation
    return ann in (None, "None")


def _missing(obj: Any, need: set[str]) -> set[str]:
    have = _sections(inspect.getdoc(obj))
    if "Parameters" in need and "Attributes" in have and inspect.isclass(obj):
        have = have | {"Parameters"}  # a result dataclass lists its fields as Attributes
    return need - have


CALLABLES = [
    (f"{mod}.{name}", obj)
    for mod, name, obj in _public()
    if (inspect.isfunction(obj) or inspect.isclass(obj)) and not _is_exception(obj)
]


@pytest.mark.parametrize(("path", "obj"), CALLABLES, ids=[p for p, _ in CALLABLES])
def test_public_name_has_the_reference_sections(path: str, obj: Any) -> None:
    missing = _missing(obj, _needs(obj))
    assert not missing, f"{path}: docstring lacks {sorted(missing)}"


def _methods(cls: type) -> list[tuple[str, Any]]:
    out = []
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        fn = member.__func__ if isinstance(member, classmethod | staticmethod) else member
        if inspect.isfunction(fn):
            out.append((name, fn))
    return out


METHODS = [
    (f"{path}.{name}", fn)
    for path, obj in CALLABLES
    if inspect.isclass(obj)
    for name, fn in _methods(obj)
]


@pytest.mark.parametrize(("path", "fn"), METHODS, ids=[p for p, _ in METHODS])
def test_public_method_documents_its_parameters_and_return(path: str, fn: Any) -> None:
    need = set()
    if _params(fn):
        need.add("Parameters")
    if not _returns_none(fn):
        need.add("Returns")
    doc = inspect.getdoc(fn)
    assert doc, f"{path}: no docstring"
    missing = need - _sections(doc)
    assert not missing, f"{path}: docstring lacks {sorted(missing)}"


def test_exceptions_say_when_they_are_raised() -> None:
    bare = [f"{m}.{n}" for m, n, o in _public() if _is_exception(o) and not inspect.getdoc(o)]
    assert not bare, f"undocumented exceptions: {bare}"


def test_every_public_name_is_in_the_api_reference() -> None:
    """A callable is documented where any directive names it (under its home or the top
    level); a constant, under its own module's path."""
    paths = set(_directives())
    ids = {id(_resolve(p)) for p in paths}
    absent = sorted(
        f"{mod}.{name}"
        for mod, name, obj in _public()
        if (id(obj) not in ids if callable(obj) else f"{mod}.{name}" not in paths)
    )
    assert not absent, f"not in docs/reference: {absent}"


def test_every_reference_directive_names_a_public_name() -> None:
    """The reference documents the public API only (no private or internal helpers)."""
    public = {id(o) for _, _, o in _public() if callable(o)}
    public_paths = {f"{m}.{n}" for m, n, o in _public()}
    stray = [p for p in _directives() if id(_resolve(p)) not in public and p not in public_paths]
    assert not stray, f"docs/reference documents non-public names: {stray}"
