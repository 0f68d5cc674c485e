"""The package version, on the ground floor so that any module may record it."""

__version__ = "0.1.0"
