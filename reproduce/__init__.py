"""The thesis's experimental protocols, their reports and the benchmark's research code, run on
the real bundled data with ``python -m reproduce`` (``make reproduce``) from the repository's
root. Not part of the installed package: it stands on :mod:`activeeval`, never the reverse.
"""
