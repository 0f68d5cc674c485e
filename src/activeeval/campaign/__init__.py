"""Evaluation campaigns against a labeling oracle (thesis Algorithm 2).

``evaluate`` draws pool instances i.i.d. from an instrumental distribution, asks the oracle only
for instances it has not labeled before (a deterministic oracle is the common case, so a
repeated draw costs nothing), and stops at the first draw whose label the remaining budget can
no longer pay for. The budget counts labels, or cost units Λ when per-instance costs are given
(Thm 4.2: about n* = Λ / E_q[λ] draws). The walk is :mod:`activeeval.acquisition`'s, shared
with sessions; the draws, their sampling probabilities and the labels go to
:mod:`activeeval.estimators.report`, which gives what campaigns and sessions report.

``method="stratified"`` is the baseline of Bennett & Carvalho (2010): equal-count strata on the
model's confidence, labels allocated to strata in batches in proportion to N_h·σ̂_h (Neyman),
σ̂_h re-estimated as labels arrive, sampling without replacement within strata.
"""

from __future__ import annotations

from .comparison import compare
from .evaluation import evaluate

__all__ = ["compare", "evaluate"]
