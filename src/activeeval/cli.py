"""The ``activeeval`` command: ``demo``, ``plan`` (a labeling budget before the first label),
and ``session`` for labeling campaigns in a file.

File formats (pool, ranked pool, labels and features files) are read and tables written by
:mod:`activeeval.io`, whose docstring describes them (part of the contract).

Every input error exits with status 2 and a message on stderr that names the file, the line and
the column.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ._validation import MAX_STORED_SEED, check_seed
from .errors import (
    ActiveEvalError,
    ActiveEvalWarning,
    InputFileError,
    OutputFileError,
    UnknownIdError,
    UnknownOptionError,
)
from .io import (
    TABLE_FORMATS,
    _replacing,
    read_decision_column,
    read_features_file,
    read_group_column,
    read_labels_file,
    read_pools,
    write_table,
)

__all__ = ["main"]


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
    from .demo import run_demo

    try:
        check_seed(seed, "--seed", maximum=MAX_STORED_SEED)  # it seeds a session store too
        run_demo(budget=budget, seed=seed, reps=reps, echo=click.echo)
    except ActiveEvalError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)


#: Options that plan and session init share.
_MEASURE = click.option(
    "--measure",
    required=True,
    help="error_rate, accuracy, f1, precision, recall (classifiers; f1 and the like of one "
    "class, --pos-label with more than two); macro_f1, weighted_f1, balanced_accuracy "
    "(multi-class averages); mse, mae (regressors); mean, proportion (the label's own mean, "
    "e.g. a judge's score); dcg, err (ranked pools); plan only: brier, log_loss (one "
    "model's class probabilities).",
)
_POS_LABEL = click.option(
    "--pos-label", default=None, help="Positive class of f1/precision/recall."
)
_BETA = click.option(
    "--beta",
    type=float,
    default=None,
    help="β of the F-measure (with --measure f1, macro_f1 or weighted_f1).",
)


@main.command("plan")
@click.option(
    "--pool",
    "pools",
    multiple=True,
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Pool file of a model (CSV or Parquet); twice to plan a comparison of two models.",
)
@_MEASURE
@_POS_LABEL
@_BETA
@click.option(
    "--method",
    default="active",
    show_default=True,
    help="The sampling method planned, as session init's (passive is always planned next to it).",
)
@click.option("--estimator", default="assisted", show_default=True, help="assisted or snis.")
@click.option("--level", type=float, default=0.95, show_default=True, help="Confidence level.")
@click.option(
    "--budgets",
    default=None,
    help="Comma-separated budgets for the table (labels, or cost units if the pool has a "
    "cost column); default doublings from 50.",
)
@click.option(
    "--target-width",
    type=float,
    default=None,
    help="Width of the interval wanted (0.02 for ±0.01): print the budget that reaches it.",
)
@click.option(
    "--effect",
    type=float,
    default=None,
    help="The true value the test should detect: of the difference (model 0 − model 1) for "
    "two pools, of the measure for one (with --null the claim's threshold).",
)
@click.option("--power", type=float, default=0.8, show_default=True, help="Power wanted.")
@click.option(
    "--alternative",
    default="two-sided",
    show_default=True,
    help="Side of the test: two-sided, less (H1: Δ < null) or greater.",
)
@click.option("--null", type=float, default=0.0, show_default=True, help="Null value of Δ.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write a PNG of the predicted interval width against the budget.",
)
@click.option(
    "--prediction-column",
    default=None,
    help="A column of each pool file holding the model's decision f(x) to score, as session "
    "init takes it, so that the plan is for what the session will score.",
)
def plan_command(
    pools: tuple[Path, ...],
    measure: str,
    pos_label: str | None,
    beta: float | None,
    method: str,
    estimator: str,
    level: float,
    budgets: str | None,
    target_width: float | None,
    effect: float | None,
    power: float,
    alternative: str,
    null: float,
    as_json: bool,
    plot: Path | None,
    prediction_column: str | None,
) -> None:
    """Before labeling: how the interval narrows with the budget, active next to passive,
    and the budget for a target width (or, for two models, for a test's power)."""
    from .measures import FMeasure
    from .planner import plan

    with _command():
        if plot is not None:
            _check_plot_path(plot)
        grid = None if budgets is None else _budget_list(budgets)
        ranked = measure.strip().lower() in ("dcg", "err")
        read = read_pools(pools, ranked=ranked)
        preds: list[Any] = list(read.predictives)
        if ranked and pos_label is not None:
            raise UnknownOptionError(
                "--pos-label: dcg and err have no positive class; drop --pos-label."
            )
        pos = None if ranked else _pool_label(pos_label, preds[0])
        meas: Any = measure.strip().lower()
        if beta is not None:
            if meas != "f1":
                raise UnknownOptionError(f"--beta: only the F-measure (f1) has a β, not {meas!r}.")
            meas, pos = FMeasure(beta=beta, pos_label=pos), None
        decisions = _decision_columns(pools, preds, read.ids, prediction_column, ranked)
        with _as_flags(*_PLAN_ARGS, prediction="--prediction-column"):
            p = plan(
                preds[0] if len(preds) == 1 else preds, meas, grid, method=method,
                estimator=estimator, costs=read.costs, level=level, target_width=target_width,
                effect=effect, power=power, alternative=alternative, null=null, pos_label=pos,
                prediction=decisions,
            )  # fmt: skip
        if plot is not None:
            _save_axes(p.plot, plot)
        if as_json:
            click.echo(json.dumps(_json_safe(p.to_dict()), indent=2, allow_nan=False))
        else:
            click.echo(str(p) + (f"\nplot:     {plot}" if plot is not None else ""))


#: plan()'s arguments that activeeval plan takes as flags.
_PLAN_ARGS = ("alternative", "level", "target_width", "budgets", "power", "effect", "method",
              "estimator", "null", "pos_label")  # fmt: skip

#: Session.create()'s arguments that session init takes as flags.
_INIT_ARGS = ("target_width", "claim", "decide", "rule", "method", "level", "estimator",
              "pos_label", "beta", "measure")  # fmt: skip


@contextmanager
def _as_flags(*names: str, **renamed: str) -> Iterator[None]:
    """An error naming one of the API's arguments ``names`` names the command's flag instead
    (``pos_label`` → ``--pos-label``; ``renamed`` for a flag spelled otherwise): the argument
    that leads the message, and every ``argument=`` its advice spells."""
    flags = {name: "--" + name.replace("_", "-") for name in names} | renamed
    try:
        yield
    except ActiveEvalError as exc:
        head, sep, rest = str(exc).partition(":")
        if not (sep and head in flags):
            raise
        for name, flag in flags.items():
            rest = re.sub(rf"\b{name}=(?!\w)", flag + " ", rest)
        raise type(exc)(f"{flags[head]}:{rest}") from None


def _budget_list(text: str) -> list[float]:
    try:
        out = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UnknownOptionError(
            f"--budgets: expected comma-separated numbers such as 100,200,400; got {text!r}."
        ) from None
    if not out:
        raise UnknownOptionError("--budgets: give at least one budget, e.g. 100,200,400.")
    return out


def _pool_label(text: str | None, pred: Any) -> Any:
    """A --pos-label as the pool's class it names (the files' classes may be numbers)."""
    if text is None:
        return None
    for label in getattr(pred, "labels", ()):
        if str(label) == text:
            return label.item() if hasattr(label, "item") else label
    return text


def _check_plot_path(path: Path) -> None:
    if path.suffix.lower() != ".png":
        raise OutputFileError(f"--plot: {path} must end in .png (the file type written).")
    if not path.resolve().parent.is_dir():
        raise OutputFileError(
            f"--plot: {path.parent} does not exist or is not a directory; create the directory."
        )
    if _is_sqlite(path.resolve()):
        raise OutputFileError(
            f"--plot: {path} is an SQLite database (a session store?); refusing to overwrite it."
        )


def _save_axes(draw: Any, path: Path) -> None:
    """Draw with ``draw(ax)`` on an Agg figure and write it as PNG (atomically)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.0), layout="constrained")
    FigureCanvasAgg(fig)
    draw(fig.add_subplot())
    with _replacing(path) as tmp:
        fig.savefig(tmp, dpi=100, format="png")


# ------------------------------------------------------------------------------- session
@contextmanager
def _command(json_errors: bool = False) -> Iterator[None]:
    """Input errors → ``error: ...`` on stderr and exit status 2; the library's warnings →
    ``warning: ...`` lines on stderr."""
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ActiveEvalWarning)
            try:
                yield
            except ActiveEvalError as exc:
                click.echo(f"error: {exc}", err=True)
                sys.exit(2)
            except OSError as exc:  # the file system refused a read or write
                where = f"{exc.filename}: " if exc.filename else ""
                click.echo(f"error: {where}{exc.strerror or exc}", err=True)
                sys.exit(2)
    finally:
        # Replayed after the recording ends: inside it, showwarning would append to ``caught``.
        seen: set[str] = set()
        for w in caught:
            msg = str(w.message)
            if not issubclass(w.category, ActiveEvalWarning):
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)
            elif msg not in seen:
                seen.add(msg)
                click.echo(f"warning: {msg}", err=True)


_STORE = click.Path(exists=True, dir_okay=False, path_type=Path)


def _check_output(out: Path, store: Path, what: str, suffixes: tuple[str, ...] = ()) -> None:
    """Refuse, before any work, an output path that would destroy a store (this session's
    own file or its -wal/-shm/-journal, or any other SQLite database), whose directory is
    missing, or (with ``suffixes``) of another file type."""
    from .session.schema import _SIDE_FILES

    target, base = out.resolve(), store.resolve()
    if target in [base, *(base.with_name(base.name + x) for x in _SIDE_FILES)]:
        raise OutputFileError(
            f"{what}: {out} is the session store {store} (or one of its files); writing there "
            "would destroy the store and every label in it. Choose another file name."
        )
    owner = [target.with_name(target.name.removesuffix(x)) for x in _SIDE_FILES]
    for db in {target, *owner}:  # the file, or the database whose side file it is
        if _is_sqlite(db):
            raise OutputFileError(
                f"{what}: {out} is an SQLite database (another session store?) or one of its "
                "files; refusing to overwrite it. Choose another file name."
            )
    if not target.parent.is_dir():
        raise OutputFileError(
            f"{what}: {out.parent} does not exist or is not a directory; create the directory."
        )
    if suffixes and out.suffix.lower() not in suffixes:
        named = [x for x in suffixes if x]
        choices = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} or {named[-1]}"
        raise OutputFileError(
            f"{what}: {out} must end in {choices} (the file type written); "
            f"{out.suffix or 'a name without extension'} is not a type this command writes."
        )


def _is_sqlite(path: Path) -> bool:
    if not path.is_file():
        return False
    with open(path, "rb") as fh:
        return fh.read(16) == b"SQLite format 3\x00"


_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


@main.group()
def session() -> None:
    """Labeling campaigns kept in a store file: init, next, record, status, export.

    \b
    activeeval session init STORE --pool A.csv [--pool B.csv] --measure f1 --budget 300
    activeeval session next STORE --k 20 --out batch.csv
    activeeval session record STORE labels.csv --annotator NAME
    activeeval session status STORE [--json] [--plot progress.png]
    activeeval session export STORE labels_out.csv
    """


def _fmt(x: float, digits: int = 4) -> str:
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _measure_text(plan: Any) -> str:
    """The measure's name, with a ranking measure's truncation depth (dcg@10)."""
    k = plan.measure_spec.get("k")
    return plan.measure if k is None else f"{plan.measure}@{k}"


def _budget_text(budget: float, cost_sensitive: bool, ranking: bool = False) -> str:
    """The budget in its unit: cost units, else labels (queries for a ranked pool, whose
    query costs, the sums of the items' costs, are scaled to mean one over the pool)."""
    if cost_sensitive and ranking:
        return f"{budget:g} cost units (a query costs its items' summed cost ÷ the pool's mean)"
    if cost_sensitive:
        return f"{budget:g} cost units"
    return f"{budget:g} {'queries' if ranking else 'labels'}"


@session.command("init")
@click.argument("store", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--pool",
    "pools",
    multiple=True,
    required=True,
    type=_FILE,
    help="Pool file of a model (CSV or Parquet); repeat to compare models.",
)
@_MEASURE
@_POS_LABEL
@_BETA
@click.option(
    "--budget",
    type=float,
    required=True,
    help="Labels to buy (cost units if the pool has a cost column).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the draws (≥ 0).")
@click.option(
    "--method",
    default="active",
    show_default=True,
    help="active, passive, active_uniC, active_lambda (comparisons: also active_0, "
    "active_inf, active_risk; ranked pools: also active_uniD).",
)
@click.option("--level", type=float, default=0.95, show_default=True, help="Confidence level.")
@click.option(
    "--depth",
    type=click.IntRange(min=1),
    default=None,
    help="Ranked pools: truncation depth k of dcg/err (DCG@k); only each list's top k items "
    "are graded (and count toward a query's cost). Default: the whole list.",
)
@click.option(
    "--estimator",
    default="assisted",
    show_default=True,
    help="assisted (the model-assisted estimator, as evaluate/compare) or snis (the thesis's "
    "eq. 3.31, for reproduction).",
)
@click.option(
    "--target-width",
    type=float,
    default=None,
    help="Stopping rule: stop once the interval (a comparison's: of the difference) is at most "
    "this wide. Looking after every batch stays honest: the reported interval is then the "
    "anytime-valid one.",
)
@click.option(
    "--claim",
    default=None,
    help="Stopping rule: stop once a claim is settled either way, e.g. 'f1 >= 0.80' or, "
    "for two models, 'difference <= 0.005' (the syntax of status --gate).",
)
@click.option(
    "--decide",
    is_flag=True,
    help="Stopping rule for comparisons: stop once the anytime-valid interval of the "
    "difference excludes 0.",
)
@click.option(
    "--rule",
    default="anytime",
    show_default=True,
    help="anytime (the anytime-valid confidence sequence) or fixed-width (Chow-Robbins: "
    "the fixed-n interval, --target-width only; coverage only asymptotic).",
)
@click.option(
    "--prediction-column",
    default=None,
    help="A column of each pool file holding the model's decision f(x) to score (a tuned "
    "threshold's class, a rule's), where it is not the most probable class (or the mean); "
    "the p_<label> (mean, var) columns stay the beliefs that choose q.",
)
def session_init(
    store: Path,
    pools: tuple[Path, ...],
    measure: str,
    pos_label: str | None,
    beta: float | None,
    budget: float,
    seed: int,
    method: str,
    level: float,
    depth: int | None,
    estimator: str,
    target_width: float | None,
    claim: str | None,
    decide: bool,
    rule: str,
    prediction_column: str | None,
) -> None:
    """Plan a campaign: read the pool file(s) and create STORE."""
    from .ranking import DCG, ERR
    from .session.planning import DEFAULT_BLOCK_SIZE, CreateRequest

    with _command():
        check_seed(seed, "--seed", maximum=MAX_STORED_SEED)  # before any file is read
        key = measure.strip().lower()
        meas: Any = measure
        if depth is not None:
            if key not in ("dcg", "err"):
                raise UnknownOptionError(
                    f"--depth: truncates a ranking measure (dcg, err), not {measure!r}."
                )
            meas = DCG(k=depth) if key == "dcg" else ERR(k=depth)
        # Session.create's request, but for what the pool files give (pools, ids, costs,
        # names, decisions)
        request = CreateRequest(
            pools=None, measure=meas, budget=budget, method=method, seed=seed, costs=None,
            level=level, pos_label=pos_label, labels=None, ids=None, beta=beta, names=None,
            block_size=DEFAULT_BLOCK_SIZE, estimator=estimator,
            stopping=(target_width, claim, decide, rule),
        )  # fmt: skip
        s = None
        if key not in ("dcg", "err"):
            s = _streamed_init(store, pools, request, prediction_column)
        if s is None:
            s = _whole_init(store, pools, key, request, depth, prediction_column)
        with s:
            plan = s.plan
            what = (
                f"evaluation of {_measure_text(plan)}"
                if plan.kind == "evaluation"
                else f"comparison of {plan.n_models} models on {_measure_text(plan)}"
            )
            pos = f" (positive class {plan.pos_label!r})" if plan.pos_label is not None else ""
            click.echo(
                f"created {store}: {what}{pos}, pool of {plan.pool_size} "
                f"{'queries' if plan.ranking else 'instances'}, method "
                f"{plan.method}, estimator {plan.estimator}, budget "
                f"{_budget_text(plan.budget, plan.cost_sensitive, plan.ranking)}, "
                f"seed {plan.seed}"
                + ("" if plan.stopping is None else f", stop at {plan.stopping}")
                + f"\nsession id {plan.session_id}\n"
                f"next: activeeval session next {store} --k 20 --out batch.csv"
            )


def _streamed_init(
    store: Path, pools: tuple[Path, ...], request: Any, prediction_column: str | None
) -> Any:
    """``session init`` on pool files a chunk at a time (:mod:`activeeval.session.streaming`);
    None where they are to be read whole."""
    from .session import Session
    from .session.streaming import create_from_files

    with _as_flags(*_INIT_ARGS):
        made = create_from_files(store, pools, request, prediction_column)
    return None if made is None else Session.open(made)


def _whole_init(
    store: Path,
    pools: tuple[Path, ...],
    key: str,
    request: Any,
    depth: int | None,
    prediction_column: str | None,
) -> Any:
    """``session init`` on pool files read whole (``Session.create`` on what they give)."""
    from .session import Session
    from .session.planning import create_store

    read = read_pools(pools, ranked=key in ("dcg", "err"))
    preds: list[Any] = list(read.predictives)
    if depth is not None:  # only the top items count, so only they are graded and paid
        preds = [r.truncated(depth) for r in preds]
    decisions = _decision_columns(pools, preds, read.ids, prediction_column, key in ("dcg", "err"))
    request = dataclasses.replace(
        request, pools=preds[0] if len(preds) == 1 else preds, costs=read.costs, ids=read.ids,
        names=read.names, prediction=decisions,
    )  # fmt: skip
    with _as_flags(*_INIT_ARGS, prediction="--prediction-column"):
        return Session.open(create_store(store, request))


def _decision_columns(
    pools: tuple[Path, ...], preds: list[Any], ids: Any, column: str | None, ranked: bool
) -> Any:
    """``--prediction-column``: each pool file's decisions, in the pool's order, as
    ``prediction=`` takes them (one array for one model, a list for several); None without
    the flag."""
    if column is None:
        return None
    if ranked:
        raise UnknownOptionError(
            "--prediction-column: a ranked pool's decision is its ranking; drop it."
        )
    decisions = [
        read_decision_column(path, column, ids, getattr(p, "labels", None))
        for path, p in zip(pools, preds, strict=True)
    ]
    return decisions if len(decisions) > 1 else decisions[0]


@session.command("next")
@click.argument("store", type=_STORE)
@click.option("--k", "k", type=int, default=20, show_default=True, help="Ids to hand out.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the ids to this CSV file (header 'id'; a ranked pool: a sheet id,item,grade "
    "with the grades to fill in) instead of stdout; Parquet for a .parquet or .pq name.",
)
@click.option(
    "--annotator",
    default=None,
    help="Hand out to this annotator: their pending ids first, then ids no one holds; never "
    "ids another annotator holds, so several annotators split the one budget.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "label-studio"]),
    default="table",
    show_default=True,
    help="label-studio: write Label Studio import tasks to --out (.json) and a labeling "
    "configuration beside them (<name>.config.xml).",
)
@click.option(
    "--data",
    type=_FILE,
    default=None,
    help="With --format label-studio: a CSV or Parquet file with an 'id' column and the "
    "data to show (e.g. 'text'), copied into each task.",
)
def session_next(
    store: Path, k: int, out: Path | None, annotator: str | None, fmt: str, data: Path | None
) -> None:
    """Ids to label next: pending ones first (idempotent), then new draws, within budget."""
    from .session import Session

    if fmt == "label-studio" and (out is None or out.suffix.lower() != ".json"):
        raise click.UsageError(
            "--format label-studio writes tasks to a .json file: give --out with a .json name."
        )
    if data is not None and fmt != "label-studio":
        raise click.UsageError("--data goes with --format label-studio.")

    with _command():
        if out is not None:
            _check_output(
                out, store, "--out", (".json",) if fmt != "table" else tuple(TABLE_FORMATS)
            )
        with Session.open(store) as s, _as_flags("annotator", "k"):
            frame = _label_studio_data(s, data) if fmt == "label-studio" else None
            ids = s.next_batch(k, annotator=annotator)
            if fmt == "label-studio":
                _write_label_studio(s, ids, out, frame)  # type: ignore[arg-type]
                return
            frame = (
                s.items_to_grade(ids)  # a sheet id,item,grade with the grades to fill in
                if s.plan.ranking
                else pd.DataFrame({"id": pd.Series(ids, dtype=object)})
            )
            if out is None:
                click.echo(frame.to_csv(index=False, lineterminator="\n"), nl=False)
            else:
                write_table(frame, out)
            prog = s.progress()
            done = s.stopped if not ids and s.plan.stopping is not None else None
            if done is not None:
                click.echo(
                    f"done: {done} after {prog.n_labels} labels; see activeeval session "
                    f"status {store}",
                    err=True,
                )
            elif not ids:
                click.echo(
                    f"nothing left to label: the campaign is complete ({prog.n_labels} labels); "
                    f"see activeeval session status {store}",
                    err=True,
                )
            elif out is not None:
                click.echo(
                    f"wrote {len(ids)} ids to {out} ({prog.n_pending} pending in all; "
                    f"{prog.committed:g} of "
                    f"{_budget_text(prog.budget, s.plan.cost_sensitive, s.plan.ranking)} committed)"
                )


def _one_choice_per_task(s: Any, what: str) -> None:
    """Label Studio's tasks and exports hold one class per task: a classification session."""
    if s.plan.ranking or s.plan.label_space is None:
        raise UnknownOptionError(
            f"{what} one choice per task, for a classification session; this one's labels "
            "are " + ("a ranked pool's grades." if s.plan.ranking else "numbers (a regressor's).")
        )


def _label_studio_data(s: Any, data: Path | None) -> pd.DataFrame | None:
    """Before anything is handed out: a session Label Studio tasks can label, and the data
    file to show (without the model's beliefs and costs: annotators should not see them)."""
    from .io import _read_table

    _one_choice_per_task(s, "--format: label-studio tasks carry")
    if data is None:
        return None
    frame = _read_table(data)[0]
    if "id" not in frame.columns:
        raise InputFileError(f"{data}: no column 'id'; --data is keyed by the pool's ids.")
    have = set(frame["id"].map(lambda v: str(v).strip()))
    missing = [i for i in s.ids.tolist() if str(i) not in have]
    if missing:  # refused before any id is handed out
        raise InputFileError(
            f"{data}: no row for pool id {missing[0]!r} ({len(missing)} ids in all); --data "
            "must hold every id of the session's pool."
        )
    hidden = [c for c in frame.columns if c.startswith("p_") or c in ("mean", "var", "cost")]
    return frame.drop(columns=hidden)


def _write_label_studio(s: Any, ids: list[Any], out: Path, data: pd.DataFrame | None) -> None:
    """``session next --format label-studio``: the tasks, the configuration, one line."""
    from .labelstudio import write_tasks

    with _as_flags("data"):
        tasks, config = write_tasks(
            ids, out, s.plan.label_space, data=data, session_id=s.plan.session_id
        )
    prog = s.progress()
    click.echo(
        f"wrote {len(ids)} tasks to {tasks} and the labeling configuration to {config} "
        f"({prog.n_pending} pending in all); import both into a Label Studio project, then "
        f"activeeval session record {s.path} <its JSON export>"
    )


@session.command("extend")
@click.argument("store", type=_STORE)
@click.option(
    "--budget",
    type=float,
    required=True,
    help="The new total budget (labels, or cost units), larger than the current one.",
)
def session_extend(store: Path, budget: float) -> None:
    """Raise the budget: the campaign continues the same draws."""
    from .session import Session

    with _command(), Session.open(store) as s, _as_flags("budget"):
        old = s.plan.budget
        s.extend(budget)
        plan = s.plan
        done = s.stopped  # a stopping rule met: the larger budget hands out nothing more
        click.echo(
            f"extended {store}: budget {_budget_text(old, plan.cost_sensitive, plan.ranking)} "
            f"-> {_budget_text(plan.budget, plan.cost_sensitive, plan.ranking)}\n"
            + (
                f"note: the plan's stopping rule is met ({done}); session next hands out "
                "nothing more"
                if done is not None
                else f"next: activeeval session next {store} --k 20 --out batch.csv"
            )
        )


@session.command("add-model")
@click.argument("store", type=_STORE)
@click.option("--pool", "pool", required=True, type=_FILE, help="The new model's pool file.")
@click.option("--name", default=None, help="The model's name (default: the file's stem).")
@click.option(
    "--prediction-column",
    default=None,
    help="A column of the pool file holding the model's decision f(x), as for init.",
)
def session_add_model(
    store: Path, pool: Path, name: str | None, prediction_column: str | None
) -> None:
    """Add a model: q is re-planned to compare every model; recorded labels keep counting."""
    from .session import Session

    with _command(), Session.open(store) as s:
        read = read_pools([pool], ranked=s.plan.ranking)
        given = pd.Index(read.ids)
        missing = s.ids[given.get_indexer(s.ids) < 0] if len(given) else s.ids
        extra = read.ids[pd.Index(s.ids).get_indexer(read.ids) < 0]
        if len(missing) or len(extra):
            some = (missing if len(missing) else extra)[:3].tolist()
            raise UnknownIdError(
                f"{pool}: the file's ids are not the session's pool ({len(missing)} of the "
                f"session's ids missing, {len(extra)} unknown, e.g. {some}); give the new "
                "model's predictions on the session's pool."
            )
        order = given.get_indexer(s.ids)
        _check_added_costs(pool, read.costs, order, s)
        pred = read.predictives[0].take(order)
        decision = None
        if prediction_column is not None:
            decision = read_decision_column(
                pool, prediction_column, read.ids, getattr(pred, "labels", None)
            )[order]
        label = pool.stem if name is None else name
        with _as_flags(predictions="--pool", name="--name", prediction="--prediction-column"):
            s.add_model(pred, name=label, prediction=decision)
        plan = s.plan
        click.echo(
            f"added {label!r} to {store}: now a comparison of {plan.n_models} models "
            f"({', '.join(plan.model_names)}); the next draws come from q planned for them\n"
            f"more labels: activeeval session extend {store} --budget N"
        )


def _check_added_costs(pool: Path, costs: Any, order: NDArray[np.intp], s: Any) -> None:
    """A ``cost`` column of an added model's pool file must be the session's costs (an
    instance has one cost); a session without costs takes none."""
    from .errors import InvalidCostsError

    if costs is None:
        return
    if s.costs is None:
        raise InvalidCostsError(
            f"{pool}: has a 'cost' column, but the session has no labeling costs (its budget "
            "counts labels); drop the column."
        )
    c = np.asarray(costs)[order]
    if not np.array_equal(c, s.costs):
        r = int(np.flatnonzero(c != s.costs)[0])
        raise InvalidCostsError(
            f"{pool}: column 'cost' differs from the session's at id {s.ids[r]!r} "
            f"({c[r]:g} vs {s.costs[r]:g}); an instance has one cost."
        )


@session.command("release")
@click.argument("store", type=_STORE)
@click.option("--annotator", required=True, help="Whose pending ids to release.")
@click.option(
    "--to",
    "to",
    default=None,
    help="Hand them to this annotator instead of freeing them for whoever asks next.",
)
def session_release(store: Path, annotator: str, to: str | None) -> None:
    """Free an annotator's pending ids (or reassign them with --to); labels are kept."""
    from .session import Session

    with _command(), Session.open(store) as s, _as_flags("annotator", "to"):
        ids = s.release(annotator, to=to)
        whom = "anyone" if to is None else to
        click.echo(f"released {len(ids)} pending ids of {annotator} to {whom}")


@session.command("record")
@click.argument("store", type=_STORE)
@click.argument("labels", type=_FILE)
@click.option("--annotator", default=None, help="Who labeled them (stored with each label).")
@click.option("--overwrite", is_flag=True, help="Replace stored labels that differ (audited).")
@click.option(
    "--chunk-size",
    type=click.IntRange(min=1),
    default=5000,
    show_default=True,
    help="Labels committed per transaction.",
)
@click.option(
    "--overlap",
    type=click.Choice(["refuse", "majority", "adjudicator"]),
    default="refuse",
    show_default=True,
    help="A Label Studio export (.json) whose task has several annotations that disagree: "
    "refuse it, take the majority, or the --adjudicator's choice.",
)
@click.option("--adjudicator", default=None, help="With --overlap adjudicator: whose choice.")
def session_record(
    store: Path,
    labels: Path,
    annotator: str | None,
    overwrite: bool,
    chunk_size: int,
    overlap: str,
    adjudicator: str | None,
) -> None:
    """Record a labels file (id,label), or a Label Studio JSON export (.json). Idempotent;
    conflicting relabels are refused."""
    from .session import Session

    with _command(), Session.open(store) as s:
        if labels.suffix.lower() == ".json":
            if annotator is not None:
                raise UnknownOptionError(
                    "--annotator: a Label Studio export names who gave each label (its "
                    "completed_by); drop --annotator."
                )
            frame, row_label, export = _label_studio_labels(labels, s, overlap, adjudicator)
        else:
            if overlap != "refuse" or adjudicator is not None:
                raise UnknownOptionError(
                    "--overlap: settles a Label Studio export's overlapping annotations; "
                    f"{labels} is a labels table (one label per id)."
                )
            frame, row_label = read_labels_file(labels, ranking=s.plan.ranking)
            export = None
        done = s.record(
            frame,
            annotator=annotator,
            overwrite=overwrite,
            chunk_size=chunk_size,
            source=str(labels),
            row_label=row_label,
        )
        prog = s.progress()
        click.echo(
            f"recorded {done.n_new} new labels ({done.n_unchanged} unchanged, "
            f"{done.n_overwritten} overwritten) from {labels}; {prog.n_labels} labels, cost "
            f"{prog.cost_spent:g} of "
            f"{_budget_text(prog.budget, s.plan.cost_sensitive, s.plan.ranking)}, "
            f"{prog.n_pending} pending"
        )
        if export is not None:
            click.echo(_label_studio_summary(export))


def _label_studio_labels(
    path: Path, s: Any, overlap: str, adjudicator: str | None
) -> tuple[pd.DataFrame, str, Any]:
    """A Label Studio export as the labels table ``record`` takes (one row per task)."""
    from .labelstudio import read_export

    _one_choice_per_task(s, f"{path}: Label Studio exports carry")
    with _as_flags("overlap", "adjudicator"):
        export = read_export(path, overlap=overlap, adjudicator=adjudicator)
    return export.labels, "task", export  # indexed by the Label Studio task id


def _label_studio_summary(export: Any) -> str:
    several = int((export.labels["n_annotations"] > 1).sum())
    text = f"label studio: {export.n_tasks} tasks, policy {export.policy}"
    if export.n_unlabeled:
        text += f", {export.n_unlabeled} without a label (skipped or not annotated: still pending)"
    if export.n_cancelled:
        text += f", {export.n_cancelled} cancelled annotations skipped"
    if several:
        agreed = int((export.labels["n_agreeing"] == export.labels["n_annotations"]).sum())
        agreed -= int((export.labels["n_annotations"] == 1).sum())
        text += (
            f"; {several} with several annotations, all agreeing on {agreed} "
            f"({agreed / several:.0%})"
        )
    return text


def _nan_to_none(x: Any) -> Any:
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


def _json_safe(x: Any) -> Any:
    """NaN and infinities as null, recursively: JSON has no such numbers."""
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_json_safe(v) for v in x]
    if isinstance(x, float | np.floating):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x


def _why_no_estimate(prog: Any) -> str | None:
    """Why a session has no estimate yet, in words; None once it has labeled draws."""
    if prog.n_labels == 0:
        return (
            "none yet: no label has been recorded (hand out ids with activeeval session next, "
            "then record their labels with activeeval session record)"
        )
    if prog.n_estimation_draws == 0:
        return (
            "none yet: the first id handed out has no label (the estimate uses the draws up to "
            "the first unlabeled one)"
        )
    return None


def _status_dict(
    s: Any, result: Any, features: NDArray[np.float64] | None = None, prog: Any = None
) -> dict[str, Any]:
    prog = s.progress() if prog is None else prog
    plan = s.plan
    out: dict[str, Any] = {
        "measure": plan.measure,
        "n_labels": prog.n_labels,
        "n_draws": prog.n_estimation_draws,
        "cost_spent": prog.cost_spent,
        "budget": plan.budget,
    }
    if plan.n_models == 1:
        e = result
        inf: Any = e.inference
        out.update(
            estimate=_nan_to_none(e.estimate),
            stderr=_nan_to_none(e.stderr),
            ci=[_nan_to_none(v) for v in e.ci],
            level=plan.level,
            interval=None if inf is None else e.interval,
            effective_n=_nan_to_none(e.effective_n),
        )
    else:
        c = result
        inf = c.comparison
        out.update(
            estimate=[_nan_to_none(float(v)) for v in c.estimates],
            stderr=_nan_to_none(c.stderr),
            ci=[_nan_to_none(v) for v in c.ci],
            level=plan.level,
            estimate_ci=[[_nan_to_none(float(x)) for x in row] for row in c.model_intervals()],
            difference=_nan_to_none(c.difference),
            p_value=_nan_to_none(c.p_value),
            best=None if math.isnan(c.difference) else int(c.best),
            interval=None if inf is None else c.interval,
        )
    out["pending_by_annotator"] = _by_holder(prog.pending_by_annotator)
    out["waiting"] = {"labels": prog.n_waiting, "behind": _by_holder(prog.blocking_by_annotator)}
    out["agreement"] = {"labels": prog.n_overlapping, "unanimous": prog.n_unanimous}
    if plan.stopping is not None:  # the rule's keys appear with a rule, as "gate" with --gate
        out["stopping"] = str(plan.stopping)
        out["stopped"] = result.stopped
    if features is not None:  # λ_s of the smoothed residuals; None before the first label
        out["feature_power"] = None if inf is None else _nan_to_none(inf.feature_power)
    return out


def _by_holder(counts: dict[str | None, int]) -> list[dict[str, Any]]:
    """Counts per holder for JSON, ids held by nobody in particular under a null name."""
    return [{"annotator": k, "ids": v} for k, v in counts.items()]


def _holders_text(counts: dict[str | None, int]) -> str:
    return ", ".join(f"{'(unassigned)' if k is None else k} {v}" for k, v in counts.items())


def _plot(s: Any, path: Path, features: NDArray[np.float64] | None = None) -> None:
    """Estimate (or difference) ± interval against labels spent, Agg backend."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    plan = s.plan
    traj = s.trajectory(features=features)
    fig = Figure(figsize=(6.4, 4.0), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    x_col = "cost" if plan.cost_sensitive else "n_labels"
    name = _measure_text(plan)
    what = name if plan.n_models == 1 else f"difference in {name} (model 0 − 1)"
    if plan.n_models > 2:
        what = f"{name}: best − runner-up"
    if traj.empty:
        ax.text(0.5, 0.5, "no labels recorded yet", ha="center", va="center")
    else:
        x = traj[x_col].to_numpy(float)
        ax.fill_between(
            x,
            traj["low"].to_numpy(float),
            traj["high"].to_numpy(float),
            alpha=0.25,
            color="C0",
            label=f"{plan.level:.0%} interval",
        )
        ax.plot(x, traj["estimate"].to_numpy(float), color="C0", marker=".", label="estimate")
        if plan.n_models > 1:
            ax.axhline(0.0, color="0.4", lw=0.8)
        ax.legend(loc="best")
    ax.set_xlabel("labeling cost spent" if plan.cost_sensitive else "labels")
    ax.set_ylabel(what)
    ax.set_title(
        f"{s.path.name}: {plan.kind} of {_measure_text(plan)}, method {plan.method}, "
        f"estimator {plan.estimator}"
    )
    ax.set_xlim(left=0, right=plan.budget)
    with _replacing(path) as tmp:
        fig.savefig(tmp, dpi=100, format="png")


@session.command("status")
@click.argument("store", type=_STORE)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write a PNG of the estimate ± interval against labels spent.",
)
@click.option(
    "--features",
    type=_FILE,
    default=None,
    help="CSV/Parquet of the pool's features (id + numeric columns): labeled neighbours "
    "become a second control variate of the estimate or comparison.",
)
@click.option(
    "--gate",
    default=None,
    metavar="CLAIM",
    help="A claim such as 'f1 >= 0.80', 'error_rate <= 5%' or 'difference <= 0.005' "
    "(model 0 − model 1): exit 0 when the one-sided bound establishes it, 1 when not yet "
    "(or refuted: the opposite bound lies beyond the threshold; the text says so), 2 on bad "
    "input.",
)
@click.option(
    "--level",
    type=float,
    default=None,
    help="Confidence level of the --gate bound (default: the session's).",
)
@click.option(
    "--target-width",
    type=float,
    default=None,
    help="Re-plan for an interval this wide (0.02 for ±0.01): about how many more labels "
    "(with --json, a 'plan' key).",
)
@click.option(
    "--anytime",
    is_flag=True,
    help="Report the anytime-valid interval (valid however often you look and whenever you "
    "stop; 1.4-2.3x as wide at 300 labels on the real tasks); always so when the session "
    "has a stopping rule.",
)
@click.option(
    "--by",
    default=None,
    metavar="COLUMN",
    help="Also report within each group of this column of the --pool file (a country, a "
    "segment): the estimate (or difference) and interval per group.",
)
@click.option(
    "--pool",
    "group_file",
    type=_FILE,
    default=None,
    help="With --by: the file holding the column (the pool file, or any with an id column).",
)
def session_status(
    store: Path,
    as_json: bool,
    plot: Path | None,
    features: Path | None,
    gate: str | None,
    level: float | None,
    target_width: float | None,
    anytime: bool,
    by: str | None,
    group_file: Path | None,
) -> None:
    """Labels and cost spent against the budget, the estimate and its interval (or the
    difference, p-value and best model); with --gate, whether a claim is established."""
    from .claims import parse_claim
    from .estimators.report import _no_features
    from .session import Session
    from .stopping import as_anytime

    verdict = None
    with _command(), _gate_errors(gate is not None):
        if level is not None and gate is None:
            raise UnknownOptionError("level: --level sets the --gate bound's level; give --gate.")
        claim = None if gate is None else parse_claim(gate)
        if plot is not None:
            _check_output(plot, store, "--plot", (".png",))
        if (by is None) != (group_file is None):
            raise UnknownOptionError(
                "--by: name the column with --by and the file holding it with --pool (the "
                "pool file, or any CSV/Parquet file with an id column)."
            )
        with Session.open(store) as s:
            x = None
            if features is not None:
                if s.plan.ranking:  # refused before the file is read, as Session would refuse it
                    _no_features(features, "ranking pools")
                x = read_features_file(features, s.ids)
            result = s.estimate(features=x) if s.plan.n_models == 1 else s.compare(features=x)
            if anytime and result.interval != "anytime" and result.n_labels > 0:
                result = as_anytime(result)
            prog = s.progress()  # once: the text and the JSON report the same
            status = _status_dict(s, result, x, prog)
            if (
                target_width is None
                and s.plan.n_models <= 2  # more are not planned (_replan): no hint
                and s.plan.pool_size > _REPLAN_ROWS
                and s._from_summary()
            ):
                replanned = None  # the re-plan reads the pool: above one chunk only when asked
                if not as_json and result.n_labels > 0 and not prog.complete:
                    status["plan_hint"] = True
            elif target_width is None and prog.complete:
                replanned = None  # finished: no width "at the budget" left to predict
            else:
                replanned = _replan(s, result, target_width)
            if replanned is not None and (target_width is not None or not as_json):
                status["plan"] = replanned  # in --json only when asked, as "gate"
            if claim is not None:
                lv = s.plan.level if level is None else level
                verdict = claim.check(result, lv, aliases=(_measure_text(s.plan),))
                status["gate"] = {
                    "claim": str(claim),
                    "established": verdict.established,
                    "bound": _nan_to_none(verdict.bound),
                    "level": verdict.level,
                    "margin": _nan_to_none(verdict.margin),
                    "refuted": verdict.refuted,
                    "valid_for": "any look" if result.interval == "anytime" else "one look",
                }
            if by is not None and group_file is not None:
                with _as_flags(groups="--by"):
                    g = read_group_column(group_file, by, s.ids)
                    grouped = (
                        s.estimate(features=x, groups=g)
                        if s.plan.n_models == 1
                        else s.compare(features=x, groups=g)
                    )
                status["groups"] = _group_rows(grouped, by)
            if plot is not None:
                _plot(s, plot, x)
            if as_json:
                click.echo(json.dumps(_json_safe(status), indent=2, allow_nan=False))
            else:
                click.echo(_status_text(s, status, plot, verdict, prog))
    if verdict is not None and not verdict.established:
        sys.exit(1)


def _group_rows(grouped: Any, column: str) -> dict[str, Any]:
    """``status --by``'s groups: each group's share, labels, value and interval."""
    frame = grouped.to_frame()
    value = "difference" if grouped.comparison else "estimate"
    rows = [
        {"group": r["group"], "share": float(r["share"]), "n_labels": int(r["n_labels"]),
         value: _nan_to_none(float(r[value])), "stderr": _nan_to_none(float(r["stderr"])),
         "ci": [_nan_to_none(float(r["lower"])), _nan_to_none(float(r["upper"]))]}
        for r in frame.to_dict("records")
    ]  # fmt: skip
    return {"column": column, "value": value, "rows": rows}


#: Above this many instances ``status`` of a session whose estimate reads its pool summary
#: re-plans only with ``--target-width``: the re-plan's pool sums read the whole pool.
_REPLAN_ROWS = 1 << 18


def _replan(s: Any, result: Any, target_width: float | None) -> dict[str, Any] | None:
    """The session's plan re-predicted from its labels so far (:meth:`~activeeval.Plan.
    replan`): the width expected at the full budget and, with a target width, the budget
    that reaches it. None where nothing can be planned (no standard error yet,
    more than two models)."""
    from .planner import plan_for_q

    plan = s.plan
    if plan.n_models > 2:
        if target_width is not None:
            raise UnknownOptionError(
                "--target-width: a comparison of more than two models is not planned; plan "
                "the pairs you will test one at a time (activeeval plan)."
            )
        return None
    if len(s.phases) > 1:  # a model added: the labels so far came from another q
        if target_width is not None:
            raise UnknownOptionError(
                "--target-width: a session whose q changed (a model added) is not re-planned "
                "yet; plan the new comparison with activeeval plan."
            )
        return None
    if result.n_labels == 0 or not (math.isfinite(result.stderr) and result.stderr > 0):
        return None
    preds = s.predictives[0] if plan.n_models == 1 else list(s.predictives)
    pl = plan_for_q(
        preds, s.measure, s.q, [plan.budget], method=plan.method, estimator=plan.estimator,
        costs=s.costs, level=plan.level, target_width=target_width,
    ).replan(result)  # fmt: skip
    spent = s.progress().cost_spent
    needed = pl.needed.get(plan.method)
    return {
        "replanned_from": pl.labels_so_far,
        "width_at_budget": pl.width(plan.budget),
        "target_width": target_width,
        "budget_needed": needed,
        "more_needed": None if needed is None else max(needed - spent, 0.0),
    }


@contextmanager
def _gate_errors(gating: bool) -> Iterator[None]:
    """With --gate, any failure exits 2 (bad input or an unreadable store), never 1, which
    a pipeline reads as "not established yet"."""
    try:
        yield
    except Exception as exc:
        if not gating or isinstance(exc, ActiveEvalError | OSError):
            raise
        click.echo(f"error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(2)


_ONE_LOOK = (
    "         (a fixed-n bound, valid for one look: checking after every batch and stopping at "
    "the first pass is repeated testing)"
)


def _status_text(
    s: Any, status: dict[str, Any], plot: Path | None, verdict: Any, prog: Any = None
) -> str:
    """``session status``'s text (``prog``: the session's progress, read once by the caller)."""
    plan, prog = s.plan, (s.progress() if prog is None else prog)
    pct = f"{prog.cost_spent / plan.budget:.0%}"
    state = (
        "complete"
        if prog.complete
        else ("all handed out; waiting for pending labels" if prog.finished else "in progress")
    )
    if status.get("stopped"):
        state = "stopped by its rule"
    lines = [
        f"session {plan.session_id} ({plan.kind}, {_measure_text(plan)}, "
        f"method {plan.method}, estimator {plan.estimator}, seed {plan.seed})",
        f"labels:   {prog.n_labels} recorded, {prog.n_pending} pending; cost "
        f"{prog.cost_spent:g} of "
        f"{_budget_text(plan.budget, plan.cost_sensitive, plan.ranking)} ({pct}); "
        f"{prog.n_draws} draws; {state}",
    ]
    if any(k is not None for k in prog.pending_by_annotator):
        lines.append(f"pending:  {_holders_text(prog.pending_by_annotator)}")
    if prog.n_waiting:
        lines.append(
            f"waiting:  {prog.n_waiting} recorded labels are not in the estimate yet: they wait "
            f"behind {sum(prog.blocking_by_annotator.values())} unreturned ids "
            f"({_holders_text(prog.blocking_by_annotator)}) handed out before them"
        )
    if prog.n_overlapping:
        lines.append(
            f"agreement: {prog.n_unanimous} of {prog.n_overlapping} labels with several "
            f"annotations were unanimous ({prog.n_unanimous / prog.n_overlapping:.0%})"
        )
    lv = f"{plan.level:.0%}"
    pending = _why_no_estimate(prog)
    if pending is not None:
        lines.append(f"{'estimate' if plan.n_models == 1 else 'difference'}: {pending}")
        if plan.n_models > 1:
            lines.extend(f"model {j}:  {name}" for j, name in enumerate(plan.model_names))
    elif plan.n_models == 1:
        lines.append(
            f"estimate: {_fmt(status['estimate'])}  stderr {_fmt(status['stderr'])}  "
            f"{lv} CI [{_fmt(status['ci'][0])}, {_fmt(status['ci'][1])}] ({status['interval']})  "
            f"(from {status['n_draws']} draws; effective n {_fmt(status['effective_n'], 1)})"
        )
    else:
        own = status.get("estimate_ci") or [[None, None]] * plan.n_models
        for j, (name, est) in enumerate(zip(plan.model_names, status["estimate"], strict=True)):
            lo, hi = own[j]
            ci = "" if lo is None else f"  {lv} CI [{_fmt(lo)}, {_fmt(hi)}]"
            lines.append(f"model {j}:  {_fmt(est)}{ci}  {name}")
        if status.get("estimate_ci"):
            lines.append(
                "          (each model's interval rests on draws chosen for the difference: "
                "at small budgets it covers less than its level)"
            )
        pair = "model 0 − model 1" if plan.n_models == 2 else "best − runner-up"
        best = status["best"]
        lines.append(
            f"difference ({pair}): {_fmt(status['difference'])}  stderr "
            f"{_fmt(status['stderr'])}  {lv} CI [{_fmt(status['ci'][0])}, "
            f"{_fmt(status['ci'][1])}] ({status['interval']})  p-value {_fmt(status['p_value'])}"
            + (" (anytime-valid)" if status.get("interval") == "anytime" else "")
        )
        lines.append(
            "best:     " + ("—" if best is None else f"model {best} ({plan.model_names[best]})")
        )
    if "feature_power" in status:
        lines.append(
            f"features: coefficient {_fmt(status['feature_power'])} on the smoothed "
            "residuals (0: the estimate does not use them; its standard error comes from "
            "the jackknife that re-tunes the coefficients, so it can differ slightly)"
        )
    if "plan" in status:
        lines.extend(_plan_text(status["plan"], plan, status.get("interval") == "anytime"))
    elif status.get("plan_hint"):
        lines.append(
            "plan:     --target-width W re-plans the budget from the labels so far (on a pool "
            "this large it reads the pool)"
        )
    if "groups" in status:
        g = status["groups"]
        lines.append(f"by {g['column']} ({g['value']}, {lv} CI, marginal):")
        lines.extend(
            f"  {r['group']}: {_fmt(r[g['value']])} [{_fmt(r['ci'][0])}, {_fmt(r['ci'][1])}]  "
            f"{r['n_labels']} labels, share {r['share']:.3f}"
            for r in g["rows"]
        )
    if plot is not None:
        lines.append(f"plot:     {plot}")
    if status.get("stopping") is not None:
        done = status.get("stopped")
        lines.append(
            f"stopping: {status['stopping']}: "
            + (f"done — {done}" if done else "not met yet (the interval is anytime-valid)")
        )
    if verdict is not None:
        lines.append(f"gate:     {verdict}")
        if status.get("interval") != "anytime":
            lines.append(_ONE_LOOK)
    return "\n".join(lines)


def _plan_text(r: dict[str, Any], plan: Any, anytime: bool = False) -> list[str]:
    """``session status``'s re-plan lines (fixed-n widths; said so beside an anytime
    interval, which is wider at the same labels)."""
    count = "queries" if plan.ranking else "labels"
    unit = "cost units" if plan.cost_sensitive else count
    w = r["width_at_budget"]
    lines = [
        f"plan:     re-planned from {r['replanned_from']} {count}: at the budget "
        f"({plan.budget:g} {unit}) the interval should be about {w:.4g} wide (±{w / 2:.4g})"
    ]
    if r["target_width"] is not None:
        tw = r["target_width"]
        lines.append(
            f"          for width {tw:g} (±{tw / 2:g}): about {r['budget_needed']:.0f} {unit} in "
            f"all, {r['more_needed']:.0f} more"
        )
    if anytime:
        lines.append(
            "          (fixed-n widths: the anytime-valid interval reported above is wider at "
            "the same labels, 1.4–2.3× at 300 on the real tasks)"
        )
    return lines


@session.command("export")
@click.argument("store", type=_STORE)
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
def session_export(store: Path, out: Path) -> None:
    """Write every label with annotator, timestamp and draw order (CSV for a .csv name or
    one without extension, Parquet for .parquet or .pq; other endings are refused)."""
    from .session import Session

    with _command():
        _check_output(out, store, "out", tuple(TABLE_FORMATS))
        with Session.open(store) as s:
            frame = s.labels_frame()
            write_table(frame, out)
            click.echo(f"wrote {frame.shape[0]} labels to {out}")


if __name__ == "__main__":  # pragma: no cover
    main()
