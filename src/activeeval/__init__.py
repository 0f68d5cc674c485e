"""activeeval: label-efficient evaluation and comparison of predictive models.

Seeds: C. Sawade, *Active Evaluation of Predictive Models* (thesis), Ch. 3–6.
"""

from __future__ import annotations

from ._validation import (
    ActiveEvalError,
    ActiveEvalWarning,
    BudgetError,
    DegenerateIntervalWarning,
    EmptyPoolError,
    InvalidCostsError,
    InvalidLevelError,
    InvalidSamplingDistributionError,
    InvalidVarianceError,
    LabelSpaceError,
    NonFiniteError,
    ProbabilityRowsError,
    ShapeError,
    UndefinedEstimateWarning,
    UnknownOptionError,
)
from .campaign import ComparisonResult, EvaluationResult, OracleError, compare, evaluate
from .datasets import EvaluationTask, list_tasks, load_task
from .inference import (
    Comparison,
    Estimate,
    MultipleComparison,
    estimate,
    importance_weights,
    multiple_comparison,
    paired_test,
    proportion_confint,
)
from .measures import (
    AbsoluteError,
    Accuracy,
    CostMatrixLoss,
    ErrorRate,
    FMeasure,
    Measure,
    Precision,
    Recall,
    SquaredError,
    get_measure,
)
from .predictive import Categorical, Gaussian, Mixture, Predictive, as_predictive, calibrate_scores
from .sampling import (
    DEFAULT_FLOOR,
    DEFAULT_MIX,
    comparison_distribution,
    cost_distribution,
    draw,
    optimal_distribution,
    passive_distribution,
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_FLOOR",
    "DEFAULT_MIX",
    "AbsoluteError",
    "Accuracy",
    "ActiveEvalError",
    "ActiveEvalWarning",
    "BudgetError",
    "Categorical",
    "Comparison",
    "ComparisonResult",
    "CostMatrixLoss",
    "DegenerateIntervalWarning",
    "EmptyPoolError",
    "ErrorRate",
    "Estimate",
    "EvaluationResult",
    "EvaluationTask",
    "FMeasure",
    "Gaussian",
    "InvalidCostsError",
    "InvalidLevelError",
    "InvalidSamplingDistributionError",
    "InvalidVarianceError",
    "LabelSpaceError",
    "Measure",
    "Mixture",
    "MultipleComparison",
    "NonFiniteError",
    "OracleError",
    "Precision",
    "Predictive",
    "ProbabilityRowsError",
    "Recall",
    "ShapeError",
    "SquaredError",
    "UndefinedEstimateWarning",
    "UnknownOptionError",
    "as_predictive",
    "calibrate_scores",
    "compare",
    "comparison_distribution",
    "cost_distribution",
    "draw",
    "estimate",
    "evaluate",
    "get_measure",
    "importance_weights",
    "list_tasks",
    "load_task",
    "multiple_comparison",
    "optimal_distribution",
    "paired_test",
    "passive_distribution",
    "proportion_confint",
]
