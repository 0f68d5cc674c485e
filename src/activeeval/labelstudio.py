"""Label Studio files: import tasks and a labeling configuration out, a JSON export in.

A session hands out ids; :func:`write_tasks` writes them as Label Studio import tasks (each
task's ``data`` carries the pool ``id`` and any columns of the data to show, such as the text
to label) with a labeling configuration beside them whose choices, under a control named
``label``, are the session's classes. Annotators label in Label Studio; its JSON export goes
back through :func:`read_export`, which turns each task's annotations into one label, by a
stated policy where a task has several (Label Studio's overlap), and reports the agreement.
The result is what ``Session.record`` takes (``activeeval session record STORE export.json``).
"""

from __future__ import annotations

import datetime
import json
import math
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np
import pandas as pd

from .errors import InputFileError, LabelConflictError, ShapeError, UnknownOptionError
from .io import _replacing

__all__ = ["CONTROL", "OVERLAP_POLICIES", "LabelStudioExport", "labeling_config", "read_export",
           "write_tasks"]  # fmt: skip

CONTROL = "label"
"""The name of the ``Choices`` control whose choice is the label (``from_name`` in exports)."""

OVERLAP_POLICIES = ("refuse", "majority", "adjudicator")
"""What one label of a task with several annotations is: ``"refuse"`` (they must agree, else
the export is refused naming the task), ``"majority"`` (the most frequent choice; a tie is
refused) or ``"adjudicator"`` (the named adjudicating annotator's choice where they
disagree; a disagreement without one is refused)."""


def labeling_config(labels: Sequence[Any], show: str | None = None) -> str:
    """A Label Studio labeling configuration: one choice per class under the control ``label``.

    Parameters
    ----------
    labels : sequence
        The session's classes (``SessionPlan.label_space``), in order.
    show : str, optional
        The task data field to show the annotator as text (e.g. ``"text"``); by default the
        pool id.

    Returns
    -------
    str
        The XML of the configuration.

    See Also
    --------
    write_tasks : Writes the tasks and this configuration beside them.

    Examples
    --------
    >>> from activeeval.labelstudio import labeling_config
    >>> print(labeling_config([0, 1], show="text"))
    <View>
      <Text name="item" value="$text"/>
      <Choices name="label" toName="item" choice="single" showInline="true">
        <Choice value="0"/>
        <Choice value="1"/>
      </Choices>
    </View>
    """
    if not labels:
        raise ShapeError("labels: a classification session's classes, got none.")
    field = "id" if show is None else show
    choices = "".join(f"    <Choice value={quoteattr(str(v))}/>\n" for v in labels)
    return (
        "<View>\n"
        f'  <Text name="item" value={quoteattr("$" + field)}/>\n'
        f'  <Choices name="{CONTROL}" toName="item" choice="single" showInline="true">\n'
        f"{choices}"
        "  </Choices>\n"
        "</View>"
    )


def write_tasks(
    ids: Sequence[Any],
    out: str | os.PathLike[str],
    labels: Sequence[Any],
    data: pd.DataFrame | None = None,
    show: str | None = None,
    session_id: str | None = None,
) -> tuple[Path, Path]:
    """Write ids as Label Studio import tasks, with the labeling configuration beside them.

    Parameters
    ----------
    ids : sequence
        Pool ids to label (``Session.next_batch``).
    out : path
        The tasks file (JSON). The configuration goes beside it, ``<name>.config.xml``.
        Both are written to a temporary file first and renamed, so a failed write leaves any
        earlier file whole.
    labels : sequence
        The session's classes, the configuration's choices.
    data : pandas.DataFrame, optional
        The data to show, one row per pool id in a column ``id``; its other columns are
        copied into each task's ``data`` (text, an image URL, ...). Every id must have a row.
    show : str, optional
        The column shown as text; by default ``"text"`` if ``data`` has it, else the first
        other column of ``data``, else the id.
    session_id : str, optional
        The session's id, carried in each task's ``data`` so that its export is refused by
        any other session (``Session.record`` checks it).

    Returns
    -------
    (Path, Path)
        The tasks file and the configuration file.

    Raises
    ------
    ShapeError
        ``data`` has no ``id`` column, lacks a row for an id, or has no column ``show``.

    See Also
    --------
    read_export : Reads the labels back from a Label Studio JSON export.
    activeeval.Session.next_batch : The ids to write.

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from activeeval.labelstudio import write_tasks
    >>> tmp = tempfile.TemporaryDirectory()
    >>> text = pd.DataFrame({"id": [3, 5], "text": ["good movie", "dull"]})
    >>> tasks, config = write_tasks([5, 3], Path(tmp.name) / "tasks.json", [0, 1], data=text)
    >>> json.loads(tasks.read_text())
    [{'data': {'id': 5, 'text': 'dull'}}, {'data': {'id': 3, 'text': 'good movie'}}]
    >>> config.name
    'tasks.config.xml'
    >>> tmp.cleanup()
    """
    out = Path(out)
    rows: list[dict[str, Any]] = [{"id": _plain(i)} for i in ids]
    if session_id is not None:
        for r in rows:
            r["session_id"] = session_id
    if data is not None:
        if "id" not in data.columns:
            raise ShapeError(f"data: no column 'id' (columns: {', '.join(map(str, data))}).")
        extra = [c for c in data.columns if c not in ("id", "session_id")]
        by_id = data.assign(_key=data["id"].map(str)).drop_duplicates("_key").set_index("_key")
        missing = [r["id"] for r in rows if str(r["id"]) not in by_id.index]
        if missing:
            raise ShapeError(
                f"data: no row for id {missing[0]!r} ({len(missing)} ids in all); the data "
                "file must hold every pool id handed out."
            )
        for r in rows:
            r.update({c: _plain(by_id.at[str(r["id"]), c]) for c in extra})
        if show is None:
            show = "text" if "text" in extra else (extra[0] if extra else None)
    if show is not None and show != "id" and (data is None or show not in data.columns):
        raise ShapeError(f"show: the data has no column {show!r} to show.")
    config = out.with_name(out.name.removesuffix(".json") + ".config.xml")
    with _replacing(out) as tmp:
        tmp.write_text(json.dumps([{"data": r} for r in rows], ensure_ascii=False, indent=1))
    with _replacing(config) as tmp:
        tmp.write_text(labeling_config(labels, show) + "\n")
    return out, config


@dataclass(frozen=True)
class LabelStudioExport:
    """The labels of a Label Studio JSON export, one per task, and how its annotators agreed.

    Attributes
    ----------
    labels : pandas.DataFrame
        Columns ``id``, ``label`` (the choice, as text), ``annotator`` (who gave it: the
        annotation's ``completed_by``, several joined by ``+`` where a policy combined
        them), ``n_annotations`` and ``n_agreeing`` (how many gave the chosen label).
    n_tasks : int
        Tasks in the export.
    n_cancelled : int
        Annotations skipped because they were cancelled (Label Studio's "skip").
    policy : str
        The overlap policy applied (``OVERLAP_POLICIES``).
    n_unlabeled : int
        Tasks with no annotation that is not cancelled (skipped in Label Studio, or not
        annotated yet): they give no label, and their ids stay pending in the session.

    See Also
    --------
    read_export : Builds it.

    Examples
    --------
    >>> import pandas as pd
    >>> from activeeval.labelstudio import LabelStudioExport
    >>> frame = pd.DataFrame({"id": [1, 2], "label": ["0", "1"], "annotator": ["a", "a+b"],
    ...                       "n_annotations": [1, 2], "n_agreeing": [1, 2]})
    >>> LabelStudioExport(frame, n_tasks=2, n_cancelled=0, policy="refuse").agreement
    1.0
    """

    labels: pd.DataFrame
    n_tasks: int
    n_cancelled: int
    policy: str
    n_unlabeled: int = 0

    @property
    def agreement(self) -> float:
        """Among tasks with several annotations, the share where all gave the same choice
        (NaN if no task has several)."""
        several = self.labels["n_annotations"] > 1
        if not several.any():
            return float("nan")
        both = self.labels.loc[several]
        return float((both["n_agreeing"] == both["n_annotations"]).mean())


def read_export(
    path: str | os.PathLike[str], overlap: str = "refuse", adjudicator: str | None = None
) -> LabelStudioExport:
    """Read a Label Studio JSON export: one label per task, from its choice under ``label``.

    Each task's ``data.id`` is the pool id (tasks imported twice for one id count as one);
    its non-cancelled annotations each give one choice of the control ``label``, an
    annotator's latest where they annotated it twice. A task with none (skipped, or not
    annotated yet) gives no label: its id stays pending. An annotation without a choice for
    ``label``, or with several, is refused naming the task, and so is a disagreement the
    policy cannot settle: nothing is returned, so nothing is recorded.

    Parameters
    ----------
    path : path
        The export (Label Studio's "JSON" export format: a list of tasks).
    overlap : {"refuse", "majority", "adjudicator"}
        How one label is chosen where a task has several annotations that disagree
        (``OVERLAP_POLICIES``); annotations that agree always give their common choice.
    adjudicator : str, optional
        With ``overlap="adjudicator"``: the annotator whose choice settles a disagreement,
        as the export names them in ``completed_by``: the user id as text (what Label Studio
        exports), or the e-mail where the export carries one. A disagreement the adjudicator
        did not annotate is refused, naming the task and its annotators.

    Returns
    -------
    LabelStudioExport
        The labels (columns ``id``, ``label``, ``annotator``, ``n_annotations``,
        ``n_agreeing``, and ``session_id`` where the tasks carry it; indexed by the Label
        Studio task id) and the agreement.

    Raises
    ------
    InputFileError
        The file is not JSON, not a list of tasks, or a task has no ``data.id``; an
        annotation without exactly one choice for ``label``.
    LabelConflictError
        Annotations of a task disagree and the policy cannot settle it.
    UnknownOptionError
        ``overlap`` is not a policy, or ``adjudicator`` is missing or given without it.

    See Also
    --------
    write_tasks : The tasks this export labels.
    activeeval.Session.record : Records the labels (``labels`` of the result).

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> from activeeval.labelstudio import read_export
    >>> def ann(who, choice):
    ...     value = {"choices": [choice]}
    ...     result = [{"from_name": "label", "type": "choices", "value": value}]
    ...     return {"completed_by": who, "was_cancelled": False, "result": result}
    >>> tasks = [{"id": 1, "data": {"id": 7}, "annotations": [ann(1, "1"), ann(2, "1")]},
    ...          {"id": 2, "data": {"id": 9}, "annotations": [ann(1, "0"), ann(2, "1"),
    ...                                                        ann(3, "0")]}]
    >>> tmp = tempfile.TemporaryDirectory()
    >>> _ = (Path(tmp.name) / "export.json").write_text(json.dumps(tasks))
    >>> got = read_export(Path(tmp.name) / "export.json", overlap="majority")
    >>> got.labels[["id", "label", "annotator"]].values.tolist()
    [[7, '1', '1+2'], [9, '0', '1+3']]
    >>> got.agreement
    0.5
    >>> tmp.cleanup()
    """
    if overlap not in OVERLAP_POLICIES:
        raise UnknownOptionError(
            f"overlap: {overlap!r} is not a policy; use one of {', '.join(OVERLAP_POLICIES)}."
        )
    if (overlap == "adjudicator") != (adjudicator is not None):
        raise UnknownOptionError(
            "adjudicator: name the adjudicating annotator with overlap='adjudicator', and "
            "only then."
        )
    path = Path(path)
    merged, cancelled = _merged_tasks(path, _tasks(path))
    rows, index, unlabeled = [], [], 0
    for t in merged.values():
        given = [(who, choice) for who, choice in t["given"].items()]
        if not given:  # skipped or not annotated yet: stays pending in the session
            unlabeled += 1
            continue
        where = f"{path}: task {t['task']!r} (id {t['id']!r})"
        label, who, agreeing = _settle(given, overlap, adjudicator, where)
        rows.append((t["id"], label, who, len(given), agreeing, t["session"]))
        index.append(t["task"])
    frame = pd.DataFrame(
        rows,
        columns=["id", "label", "annotator", "n_annotations", "n_agreeing", "session_id"],
        index=pd.Index(index, name="task"),
    )
    if frame["session_id"].isna().all():
        frame = frame.drop(columns="session_id")
    return LabelStudioExport(frame, len(merged), cancelled, overlap, unlabeled)


def _tasks(path: Path) -> list[dict[str, Any]]:
    try:
        tasks = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise InputFileError(f"{path}: not JSON ({exc.msg}, line {exc.lineno}).") from None
    if not isinstance(tasks, list) or not all(isinstance(t, dict) for t in tasks):
        raise InputFileError(
            f"{path}: a Label Studio JSON export is a list of tasks; this file is not (export "
            "the project as 'JSON', not 'JSON-MIN' or CSV)."
        )
    return tasks


_Who = tuple[str, str | None]  # an annotator: the user id as text, and the e-mail if exported


def _merged_tasks(path: Path, tasks: list[dict[str, Any]]) -> tuple[dict[str, Any], int]:
    """Per pool id (tasks imported twice for one id are one), the first task's id and each
    annotator's last non-cancelled choice; and the number of cancelled annotations."""
    merged: dict[str, Any] = {}
    cancelled = 0
    for k, task in enumerate(tasks):
        where = f"{path}: task {task.get('id', f'#{k + 1} of the file')!r}"
        data = task.get("data")
        if not isinstance(data, dict) or "id" not in data:
            raise InputFileError(
                f"{where}: no data.id; the tasks must be those activeeval session next "
                "--format label-studio wrote (their data carries the pool id)."
            )
        key = json.dumps(data["id"])
        first = {"id": data["id"], "task": task.get("id", k + 1), "given": {},
                 "session": data.get("session_id")}  # fmt: skip
        entry = merged.setdefault(key, first)
        for ann in task.get("annotations") or []:
            if ann.get("was_cancelled"):
                cancelled += 1
                continue
            who = _who(ann.get("completed_by"))
            entry["given"].pop(who, None)  # one annotator, one choice: their latest
            entry["given"][who] = _choice(ann, f"{where} (id {data['id']!r})")
    return merged, cancelled


def _who(completed_by: Any) -> _Who:
    """An annotation's annotator: the user id as text, and the e-mail where the export has it."""
    if isinstance(completed_by, dict):
        return str(completed_by.get("id")), completed_by.get("email")
    return str(completed_by), None


def _name(who: _Who) -> str:
    return who[1] or who[0]


def _choice(ann: dict[str, Any], where: str) -> str:
    picks = [
        r.get("value", {}).get("choices")
        for r in ann.get("result") or []
        if r.get("from_name") == CONTROL and r.get("type") == "choices"
    ]
    if len(picks) != 1 or not isinstance(picks[0], list) or len(picks[0]) != 1:
        raise InputFileError(
            f"{where}: annotation {ann.get('id', '?')!r} by "
            f"{_name(_who(ann.get('completed_by')))} has "
            f"{'no' if not picks else 'more than one'} choice for the control {CONTROL!r}; "
            "each annotation must pick exactly one class."
        )
    return str(picks[0][0])


def _settle(
    given: list[tuple[_Who, str]], overlap: str, adjudicator: str | None, where: str
) -> tuple[str, str, int]:
    """One label from a task's (annotator, choice) pairs: (label, who, how many agree)."""
    counts = Counter(c for _, c in given)
    (top, n_top), *rest = counts.most_common()

    def by(choice: str) -> str:
        return "+".join(_name(w) for w, c in given if c == choice)

    if not rest:
        return top, by(top), n_top
    said = ", ".join(f"{_name(w)}: {c!r}" for w, c in given)
    if overlap == "majority":
        if rest[0][1] == n_top:
            raise LabelConflictError(
                f"{where}: the annotations tie ({said}); no majority. Adjudicate it in Label "
                "Studio, or use overlap='adjudicator'."
            )
        return top, by(top), n_top
    if overlap == "adjudicator":
        final = [(w, c) for w, c in given if str(adjudicator) in w]
        if not final:  # (the export names annotators by user id, or e-mail where it has one)
            raise LabelConflictError(
                f"{where}: the annotations disagree ({said}) and the adjudicator "
                f"{adjudicator!r} has not annotated this task; nothing was recorded."
            )
        who, choice = final[-1]
        return choice, _name(who), counts[choice]
    raise LabelConflictError(
        f"{where}: the annotations disagree ({said}); nothing was recorded. Settle it in Label "
        "Studio, or choose an overlap policy, 'majority' or 'adjudicator' (overlap=, or "
        "--overlap on the command line)."
    )


def _plain(value: Any) -> Any:
    """A JSON-ready scalar: numpy scalars as Python ones, a missing value as null, a time as
    ISO 8601 text, anything else JSON has no type for as its text."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, pd.Timestamp | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, np.ndarray | list | tuple):  # e.g. a Parquet list column's cell
        return [_plain(v) for v in value]
    if isinstance(value, bool | int | float | str):
        return value
    return str(value)
