"""The ``activeeval`` command."""

from __future__ import annotations

import sys

import click

from ._validation import ActiveEvalError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="activeeval")
def main() -> None:
    """Label-efficient evaluation and comparison of predictive models."""


@main.command()
@click.option("--budget", default=100, show_default=True, help="Labels to buy.")
@click.option("--seed", default=0, show_default=True, help="Random seed of the draws.")
@click.option(
    "--reps",
    default=300,
    show_default=True,
    help="Repetitions used to measure the label savings.",
)
def demo(budget: int, seed: int, reps: int) -> None:
    """Active vs passive evaluation of a spam filter on a shifted pool (real bundled data)."""
    from .experiments.demo import run_demo

    try:
        run_demo(budget=budget, seed=seed, reps=reps, echo=click.echo)
    except ActiveEvalError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)


if __name__ == "__main__":  # pragma: no cover
    main()
