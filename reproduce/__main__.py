"""Reproduction of the thesis's protocols on real bundled data, written to ``--out``:
active estimation (Ch. 4.4), active comparison (Ch. 5.4), the model-assisted estimator
against the thesis's and the peers, ranking functions (Sec. 6.3), the stress suite of
models whose probabilities are wrong (issue 26) and the budget planner's predictions with the
one-sided bounds' coverage (issue 28) and the anytime-valid intervals and stopping rules
(issue 29), the multi-class averages and per-class measures (issue 27) and the measures of
probabilities (issue 31); ``--only`` runs one.
``make reproduce`` (1,000 repetitions into ``docs/results``) or ``python -m reproduce --smoke``
from the repository's root.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .estimation import ASSISTED_REPS, BATCH_REPS, BUDGETS, run


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m reproduce", description=__doc__)
    ap.add_argument("--out", type=Path, default=Path("docs/results"))
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--smoke", action="store_true", help="a < 60 s version")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument(
        "--oasis-reps", type=int, default=None,
        help="robustness: repetitions of the (slow) oasis samplers; default as --reps",
    )  # fmt: skip
    ap.add_argument(
        "--only",
        choices=(
            "estimation",
            "comparison",
            "assisted",
            "ranking",
            "robustness",
            "planning",
            "label_mean",
            "sequential",
            "classwise",
            "continuous",
        ),
        default=None,
    )
    ap.add_argument(
        "--sections", nargs="+", default=None,
        choices=("measures", "groups", "reuse", "settings", "digits_case", "recheck", "widths",
                 "probability", "singles", "pairs"),
        help="continuous (measures, groups, reuse), robustness (settings, digits_case, recheck), "
        "planning (widths, probability) or sequential (singles, pairs): regenerate only these "
        "sections, keeping the others from OUT's JSON",
    )  # fmt: skip
    ap.add_argument(
        "--measures", nargs="+", default=None,
        choices=("brier", "log_loss", "ece", "roc_auc", "average_precision"),
        help="continuous: regenerate only these measures' rows, keeping the others from OUT's "
        "continuous.json",
    )  # fmt: skip
    ap.add_argument(
        "--slices", nargs="+", default=None, metavar="TASK/MODEL",
        help="continuous: regenerate only these models' slices (e.g. caravan_skew/boosted), "
        "keeping the others from OUT's continuous.json",
    )  # fmt: skip
    ap.add_argument(
        "--workers", type=int, default=1,
        help="continuous, planning's probability section: processes for the cells (the "
        "numbers do not depend on it)",
    )  # fmt: skip
    args = ap.parse_args(argv)
    robust_sections = ("settings", "digits_case", "recheck")
    parts = {
        "robustness": robust_sections,
        "continuous": ("measures", "groups", "reuse"),
        "planning": ("widths", "probability"),
        "sequential": ("singles", "pairs"),
    }
    if args.sections is not None:
        if args.only is not None and args.only not in parts:
            ap.error(f"--sections: --only {args.only} has none; drop --sections")
        if args.only is not None:
            wrong = [x for x in args.sections if x not in parts[args.only]]
            if wrong:
                ap.error(f"--sections {' '.join(wrong)}: not a section of --only {args.only}")
        # A part regenerated in part keeps the rest from OUT: refuse before any work. (The
        # robustness recheck reads only the settings, so a run with them needs no JSON.)
        for part, names in parts.items():
            given = [x for x in args.sections if x in names]
            whole = set(given) == set(names) or (part == "robustness" and "settings" in given)
            if args.only in (None, part) and given and not whole:
                if not (args.out / f"{part}.json").exists():
                    ap.error(f"--sections {' '.join(given)}: keeps the other sections of "
                             f"{args.out / (part + '.json')}, which does not exist")  # fmt: skip
    reps = min(args.reps, 30) if args.smoke else args.reps
    budgets = (50, 100, 200) if args.smoke else BUDGETS
    if args.only in (None, "estimation"):
        run(args.out, reps, budgets, smoke=args.smoke, with_peers=not args.no_peers)
    if args.only in (None, "comparison"):
        from . import comparison

        comparison.run(args.out, reps, budgets, smoke=args.smoke)
    if args.only in (None, "assisted"):
        from . import assisted

        # The model-assisted estimator is not vectorised across runs (its power is tuned per
        # sample): ASSISTED_REPS repetitions.
        assisted.run(args.out, min(reps, ASSISTED_REPS), budgets, smoke=args.smoke)
        if not args.smoke:
            assisted.run_batch_adaptive(args.out, BATCH_REPS)
    if args.only in (None, "ranking"):
        from . import ranking

        ranking.run(args.out, reps, ranking.BUDGETS[:4] if args.smoke else ranking.BUDGETS,
                    smoke=args.smoke)  # fmt: skip
    if args.only in (None, "robustness"):
        from . import robustness

        chosen = [x for x in args.sections or robust_sections if x in robust_sections]
        robustness.run(args.out, reps, budgets, smoke=args.smoke, oasis_reps=args.oasis_reps,
                       sections=tuple(chosen) or robust_sections)  # fmt: skip
    if args.only in (None, "planning"):
        from . import planning

        chosen = [x for x in args.sections or () if x in parts["planning"]]
        planning.run(args.out, reps, smoke=args.smoke, workers=args.workers,
                     sections=tuple(chosen) or tuple(planning.SECTIONS))  # fmt: skip
    if args.only in (None, "label_mean"):
        from . import label_mean

        label_mean.run(args.out, reps, smoke=args.smoke)
    if args.only in (None, "sequential"):
        from . import sequential

        given = [x for x in args.sections or () if x in parts["sequential"]]
        sequential.run(args.out, reps, smoke=args.smoke,
                       sections=tuple(given) or parts["sequential"])  # fmt: skip
    if args.only in (None, "classwise"):
        from . import classwise

        classwise.run(args.out, reps, smoke=args.smoke)
    if args.only in (None, "continuous"):
        from . import continuous

        given = [x for x in args.sections or () if x in parts["continuous"]]
        sections = tuple(given) or tuple(continuous.SECTIONS)
        measures = continuous.MEASURES if args.measures is None else tuple(args.measures)
        continuous.run(args.out, reps, smoke=args.smoke, sections=sections,
                       workers=args.workers, measures=measures, slices=args.slices)  # fmt: skip


if __name__ == "__main__":
    main()
