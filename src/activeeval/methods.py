"""The one registry of method and estimator names, and the safeguards' defaults.

Every ``method=``, ``estimator=``, interval and variance option of the package is checked
against a tuple defined here, so a name means one thing everywhere. Which tuple a function
checks says which of the names it serves (a session cannot run ``stratified``, which plans
its draws from labels as they arrive).
"""

from __future__ import annotations

__all__ = [
    "ALTERNATIVES",
    "COMPARISON_METHODS",
    "DEFAULT_FLOOR",
    "DEFAULT_MIX",
    "ESTIMATORS",
    "EVALUATE_METHODS",
    "INTERVAL_METHODS",
    "PROPORTION_METHODS",
    "RANKING_METHODS",
    "SAMPLING_METHODS",
    "SESSION_COMPARISON_METHODS",
    "VARIANCE_METHODS",
]

SAMPLING_METHODS = ("active", "passive", "active_lambda", "active_uniC")
"""Sampling distributions for estimating one model's measure (Thm 4.1, 4.2; Sec. 4.4).

``active`` q* (with costs, eq. 4.25), ``passive`` q = p, ``active_uniC`` q* ignoring the
costs, ``active_lambda`` q ∝ λ^(-1/2) (costs only). A [Session][activeeval.Session] evaluating
one model takes these.
"""

EVALUATE_METHODS = ("active", "passive", "stratified", "active_lambda", "active_uniC")
"""The methods [evaluate][activeeval.evaluate] accepts.

The sampling distributions of ``SAMPLING_METHODS`` and the ``stratified`` baseline (Neyman
allocation over confidence strata).
"""

COMPARISON_METHODS = (
    "active",
    "passive",
    "active_0",
    "active_inf",
    "active_neq",
    "active_risk",
    "active_uniC",
    "active_lambda",
)
"""Sampling distributions for comparing models (Thm 5.1, Sec. 5.2.2).

``active`` q* of the difference, ``passive``, the label-free ``active_0`` / ``active_inf`` /
``active_neq`` (uniform on the disagreements; identifies only the difference),
``active_risk`` (q* of each model's risk, mixed), ``active_uniC`` and ``active_lambda`` as
for one model.
"""

SESSION_COMPARISON_METHODS = tuple(m for m in COMPARISON_METHODS if m != "active_neq")
"""The methods of a comparison [Session][activeeval.Session]: ``COMPARISON_METHODS``
without ``active_neq``.

A session reports every model's estimate, which ``active_neq`` (zero probability where the
models agree) cannot identify.
"""

RANKING_METHODS = ("active", "active_uniD", "active_uniC", "active_lambda", "passive")
"""Sampling distributions for ranking pools (Sec. 6.3).

``active`` (eq. 6.10 / 6.11 with costs), ``active_uniD`` (uniform grade distribution
instead of the model's), ``active_uniC`` (costs ignored), ``active_lambda`` (q ∝ λ^(-1/2),
costs only), ``passive`` (uniform over the pool).
"""

ESTIMATORS = ("assisted", "snis")
"""Estimators of a measure from labeled draws.

``assisted`` the model-assisted estimator (the default; ``activeeval.estimators.assisted``),
``snis`` the thesis's self-normalized importance-sampling estimator (eq. 3.31).
"""

PROPORTION_METHODS = ("wald", "t", "logit", "wilson", "clopper-pearson", "agresti-coull")
"""Intervals for a proportion from a count (Lemma 3.3 and the binomial intervals)."""

INTERVAL_METHODS = (*PROPORTION_METHODS, "tempered")
"""Confidence-interval methods of an estimate: ``PROPORTION_METHODS`` and ``tempered``.

``tempered`` is the default's: the logit or Wald interval joined with the tempered-model
score interval (``activeeval.estimators.tempered``).
"""

ALTERNATIVES = ("two-sided", "less", "greater")
"""Sides of an interval or a test, scipy's convention.

``"less"`` bounds the quantity from above (the interval (−∞, upper]), ``"greater"`` from
below ([lower, ∞)).
"""

VARIANCE_METHODS = ("jackknife", "linearized")
"""Standard errors of the model-assisted estimator: the jackknife or the linearization."""

DEFAULT_FLOOR = 0.05
"""Default bounds [floor, 1 − floor] on the intrinsic value for 0/1 losses, a safeguard of
q* (see the *Sampling distributions* page, ``docs/how-it-works/sampling.md``)."""

DEFAULT_MIX = 0.1
"""Default weight ε of the defensive mixture (1 − ε)·q* + ε·p with the pool distribution."""
