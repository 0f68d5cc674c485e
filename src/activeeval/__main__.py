"""``python -m activeeval``: the ``activeeval`` command."""

from __future__ import annotations

from .cli import main

if __name__ == "__main__":  # pragma: no cover - run as a subprocess in the tests
    main(prog_name="activeeval")
