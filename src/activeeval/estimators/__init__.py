"""Estimators of a performance measure from a sample of labeled draws.

:mod:`.report` is the one step from a sample (draws, their q, labels) to what a campaign
(:func:`~activeeval.evaluate`, :func:`~activeeval.compare`) and a
:class:`~activeeval.Session` report. Each submodule is importable as an attribute
(``activeeval.estimators.inference``), loaded when first asked for, as the top level's
submodules are.
"""

from __future__ import annotations

import importlib
from typing import Any

#: The subpackage's modules, importable as attributes (PEP 562).
_SUBMODULES = frozenset(
    (
        "anytime", "assisted", "classwise", "inference", "probability", "report", "smoother",
        "tempered",
    )
)  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBMODULES})
