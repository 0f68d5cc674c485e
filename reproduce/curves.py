"""MAE curves of the active-estimation protocol (thesis Ch. 4.4): one method's error per
budget, the setting (task, model, measure) that holds them, and the label efficiency read off
them. The protocol (:mod:`.estimation`) makes them and its report (:mod:`.report`) prints them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from activeeval.demo import labels_to_match


@dataclass
class Curve:
    """MAE (and its Monte-Carlo standard error) per budget for one method."""

    method: str
    budgets: list[float]
    mae: list[float]
    mae_se: list[float]
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Setting:
    """One (task, model, measure, budget kind) combination."""

    task: str
    model: str
    measure: str
    truth: float
    cost_budget: bool
    curves: list[Curve] = field(default_factory=list)

    def curve(self, method: str) -> Curve:
        return next(c for c in self.curves if c.method == method)


def label_efficiency(setting: Setting, method: str, reference: str = "passive") -> float:
    """Labels ``reference`` needs ÷ labels ``method`` needs to reach the MAE ``reference``
    reaches at the largest budget (log-log interpolation on the budget grid)."""
    ref = setting.curve(reference)
    other = setting.curve(method)
    target = ref.mae[-1]
    b = np.asarray(ref.budgets)
    need_other = labels_to_match(b, np.asarray(other.mae), target)
    return float(b[-1] / need_other)
