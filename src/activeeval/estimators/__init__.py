"""Estimators of a performance measure from a sample of labeled draws.

:mod:`.report` is the one step from a sample (draws, their q, labels) to what a campaign
(:func:`~activeeval.evaluate`, :func:`~activeeval.compare`) and a
:class:`~activeeval.Session` report.
"""
