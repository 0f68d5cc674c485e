"""activeeval: label-efficient evaluation and comparison of predictive models.

The top level holds what a user calls: :func:`evaluate` and :func:`compare` (campaigns against
a labeling oracle), :class:`Session` (a campaign kept in a file), their two results, the
measures, the models' predictive distributions, ranking types, the bundled datasets, the base
error and the warnings. The rest lives in submodules: :mod:`activeeval.errors` (every
exception), :mod:`activeeval.sampling` (q* and drawing), :mod:`activeeval.estimators`
(the estimators and tests on labeled draws), :mod:`activeeval.ranking` (the dynamic programs),
:mod:`activeeval.methods` (method names), :mod:`activeeval.session`, :mod:`activeeval.io`.

Seeds: C. Sawade, *Active Evaluation of Predictive Models* (thesis), Ch. 3–6.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

if TYPE_CHECKING:  # what the names below are, for type checkers and IDEs
    from .campaign import compare, evaluate
    from .datasets import EvaluationTask, list_tasks, load_task
    from .errors import (
        ActiveEvalError,
        ActiveEvalWarning,
        DegenerateIntervalWarning,
        OracleError,
        UndefinedEstimateWarning,
    )
    from .measures import (
        AbsoluteError,
        Accuracy,
        BalancedAccuracy,
        CostMatrixLoss,
        ErrorRate,
        FMeasure,
        MacroF1,
        Measure,
        PerClass,
        Precision,
        Recall,
        SquaredError,
        WeightedF1,
        get_measure,
    )
    from .planner import Plan, plan
    from .predictive import (
        Categorical,
        Gaussian,
        Mixture,
        Predictive,
        as_predictive,
        calibrate_scores,
        from_estimator,
    )
    from .ranking import (
        DCG,
        ERR,
        GradedRelevance,
        RankingMeasure,
        grades_from_classifier,
        grades_from_regression,
    )
    from .results import ComparisonResult, EvaluationResult, GroupResult, PerClassResult
    from .session import Session

#: Where each top-level name lives. The top level imports each one when first asked for
#: (PEP 562), so that ``import activeeval`` — and a command such as ``activeeval session
#: next`` — loads numpy, pandas and scipy only as far as the names it uses need them.
_HOMES: dict[str, str] = {
    "compare": "campaign",
    "evaluate": "campaign",
    "EvaluationTask": "datasets",
    "list_tasks": "datasets",
    "load_task": "datasets",
    "ActiveEvalError": "errors",
    "ActiveEvalWarning": "errors",
    "DegenerateIntervalWarning": "errors",
    "OracleError": "errors",
    "UndefinedEstimateWarning": "errors",
    "AbsoluteError": "measures",
    "Accuracy": "measures",
    "BalancedAccuracy": "measures",
    "CostMatrixLoss": "measures",
    "ErrorRate": "measures",
    "FMeasure": "measures",
    "MacroF1": "measures",
    "Measure": "measures",
    "PerClass": "measures",
    "Precision": "measures",
    "Recall": "measures",
    "SquaredError": "measures",
    "WeightedF1": "measures",
    "get_measure": "probability_measures",  # its names registered: measures' function
    "Plan": "planner",
    "plan": "planner",
    "Categorical": "predictive",
    "Gaussian": "predictive",
    "Mixture": "predictive",
    "Predictive": "predictive",
    "as_predictive": "predictive",
    "calibrate_scores": "predictive",
    "from_estimator": "predictive",
    "DCG": "ranking",
    "ERR": "ranking",
    "GradedRelevance": "ranking",
    "RankingMeasure": "ranking",
    "grades_from_classifier": "ranking",
    "grades_from_regression": "ranking",
    "ComparisonResult": "results",
    "EvaluationResult": "results",
    "GroupResult": "results",
    "PerClassResult": "results",
    "Session": "session",
}

__all__ = [
    "DCG",
    "ERR",
    "AbsoluteError",
    "Accuracy",
    "ActiveEvalError",
    "ActiveEvalWarning",
    "BalancedAccuracy",
    "Categorical",
    "ComparisonResult",
    "CostMatrixLoss",
    "DegenerateIntervalWarning",
    "ErrorRate",
    "EvaluationResult",
    "EvaluationTask",
    "FMeasure",
    "Gaussian",
    "GradedRelevance",
    "GroupResult",
    "MacroF1",
    "Measure",
    "Mixture",
    "OracleError",
    "PerClass",
    "PerClassResult",
    "Plan",
    "Precision",
    "Predictive",
    "RankingMeasure",
    "Recall",
    "Session",
    "SquaredError",
    "UndefinedEstimateWarning",
    "WeightedF1",
    "as_predictive",
    "calibrate_scores",
    "compare",
    "evaluate",
    "from_estimator",
    "get_measure",
    "grades_from_classifier",
    "grades_from_regression",
    "list_tasks",
    "load_task",
    "plan",
]

#: Names the top level held before 0.2, and the submodule that holds each now. Reading one
#: from the top level still works, with a DeprecationWarning naming its home.
_MOVED: dict[str, str] = {
    **dict.fromkeys(
        (
            "BudgetError", "DuplicateIdError", "EmptyPoolError", "InputFileError",
            "InvalidCostsError", "InvalidLevelError", "InvalidOffsetsError",
            "InvalidRandomStateError", "InvalidSamplingDistributionError", "InvalidVarianceError",
            "LabelConflictError", "LabelSpaceError", "NonFiniteError", "NotAStoreError",
            "OutputFileError", "ProbabilityRowsError", "RankingItemsError", "SchemaVersionError",
            "SessionMismatchError", "ShapeError", "StoreError", "UnknownIdError",
            "UnknownOptionError",
        ),
        "activeeval.errors",
    ),
    **dict.fromkeys(
        (
            "Comparison", "Estimate", "MultipleComparison", "estimate", "importance_weights",
            "logit_interval", "multiple_comparison", "paired_test", "proportion_confint",
        ),
        "activeeval.estimators.inference",
    ),
    **dict.fromkeys(
        (
            "comparison_distribution", "cost_distribution", "draw", "inclusion_probabilities",
            "optimal_distribution", "passive_distribution", "successive_time",
        ),
        "activeeval.sampling",
    ),
    **dict.fromkeys(("DEFAULT_FLOOR", "DEFAULT_MIX", "RANKING_METHODS"), "activeeval.methods"),
    **dict.fromkeys(
        (
            "QueryValue", "ranking_difference_expectation", "ranking_difference_moment",
            "ranking_distribution", "ranking_expectation", "ranking_intrinsic_difference",
            "ranking_intrinsic_value", "ranking_mixed_pair", "ranking_pair_values",
            "ranking_query_costs", "ranking_second_moment", "ranking_union", "ranking_values",
        ),
        "activeeval.ranking",
    ),
    **dict.fromkeys(("SessionPlan", "SessionProgress"), "activeeval.session"),
}  # fmt: skip


#: The package's modules, importable as attributes of the top level (``ae.sampling``).
_SUBMODULES = frozenset(
    (
        "acquisition", "campaign", "claims", "cli", "datasets", "demo", "errors", "estimators",
        "io", "labelstudio", "measures", "methods", "planner", "predictive",
        "probability_measures", "ranking", "results", "sampling", "session", "stopping",
    )
)  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        value = getattr(importlib.import_module(f"activeeval.{_HOMES[name]}"), name)
        globals()[name] = value  # once: later reads find it without this hook
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"activeeval.{name}")
    home = _MOVED.get(name)
    if home is None:
        raise AttributeError(f"module 'activeeval' has no attribute {name!r}")
    warnings.warn(
        f"activeeval.{name} moved to {home}.{name}; the top-level name will be removed.",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(home), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *_SUBMODULES})
