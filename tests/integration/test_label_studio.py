"""The Label Studio round trip against a real Label Studio server (``make integration``).

Marked ``integration``: ``make test`` deselects it. ``make integration`` installs Label Studio
in its own environment (``.venv-labelstudio``, pinned by ``requirements/label-studio-lock.txt``)
and runs this file, which starts the server on a free loopback port with a throw-away data
folder, a user and an API token, and stops it at the end. Through the server's REST API it
creates a project from the labeling configuration ``session next --format label-studio``
wrote, imports its tasks, annotates them as two annotators would (one task in four by both,
one of those disagreeing), exports the project as JSON and records the export: the estimate
is the one the CSV path gives for the same labels. Nothing leaves this machine: the server's
version check and analytics are switched off.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from activeeval.cli import main
from activeeval.session import Session

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "activeeval-integration-token"
START_TIMEOUT = 300  # seconds; the first start migrates a fresh database (about 45 s here)


class Server:
    """A running Label Studio: its base URL and a JSON REST client."""

    def __init__(self, url: str) -> None:
        self.url = url

    def call(self, method: str, path: str, body: Any = None) -> Any:
        req = urllib.request.Request(
            self.url + path,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Token {TOKEN}", "Content-Type": "application/json"},
            method=method,
        )
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                raw = r.read()
        except urllib.error.HTTPError as exc:
            raise AssertionError(f"{method} {path}: {exc.code} {exc.read()[:500]!r}") from None
        return json.loads(raw) if raw else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def label_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    exe = Path(os.environ.get("LABEL_STUDIO", ROOT / ".venv-labelstudio/bin/label-studio"))
    if not exe.is_file():
        pytest.fail(f"{exe} not found: run `make integration` (it installs Label Studio)")
    data = tmp_path_factory.mktemp("label-studio-data")
    port = _free_port()
    env = {
        **os.environ,
        "LATEST_VERSION_CHECK": "false",  # no request to the package index at start
        "COLLECT_ANALYTICS": "false",
        "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
    }
    log = (data / "server.log").open("w")
    proc = subprocess.Popen(
        [str(exe), "start", "--no-browser", "--data-dir", str(data), "--internal-host",
         "127.0.0.1", "--port", str(port), "--username", "ci@example.org", "--password",
         "activeeval-ci", "--user-token", TOKEN, "--enable-legacy-api-token"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    server = Server(f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"Label Studio exited: {(data / 'server.log').read_text()}")
            try:
                server.call("GET", "/api/projects")
                break
            except (urllib.error.URLError, ConnectionError, AssertionError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(2)
        yield server
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def _run(*args: object) -> str:
    r = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    return r.stdout


def _choice(truth: int) -> list[dict[str, Any]]:
    value = {"choices": [str(truth)]}
    return [{"from_name": "label", "to_name": "item", "type": "choices", "value": value}]


def test_tasks_annotated_in_label_studio_give_the_csv_path_s_estimate(
    label_studio: Server, tmp_path: Path
) -> None:
    rng = np.random.default_rng(11)
    p1 = rng.beta(1.0, 5.0, 500)
    y = (rng.random(500) < p1).astype(int)
    pool, data = tmp_path / "pool.csv", tmp_path / "data.csv"
    pd.DataFrame({"id": np.arange(500), "p_0": 1 - p1, "p_1": p1}).to_csv(pool, index=False)
    pd.DataFrame({"id": np.arange(500), "text": [f"message {i}" for i in range(500)]}).to_csv(
        data, index=False
    )
    for name in ("ls.db", "csv.db"):
        _run("session", "init", tmp_path / name, "--pool", pool, "--measure", "error_rate",
             "--budget", 40, "--seed", 3)  # fmt: skip
    second = {"email": "bob@example.org", "username": "bob", "password": "b0b-pass!"}
    bob = label_studio.call("POST", "/api/users", second)["id"]
    project = None
    for _round in range(2):
        tasks = tmp_path / "tasks.json"
        _run("session", "next", tmp_path / "ls.db", "--k", 20, "--format", "label-studio",
             "--out", tasks, "--data", data)  # fmt: skip
        if project is None:
            config = (tmp_path / "tasks.config.xml").read_text()
            project = label_studio.call(
                "POST", "/api/projects", {"title": "activeeval campaign", "label_config": config}
            )["id"]
        label_studio.call("POST", f"/api/projects/{project}/import", json.loads(tasks.read_text()))
        listed = label_studio.call("GET", f"/api/tasks?project={project}&page_size=1000")["tasks"]
        for k, task in enumerate(t for t in listed if not t.get("total_annotations")):
            truth = int(y[task["data"]["id"]])
            label_studio.call("POST", f"/api/tasks/{task['id']}/annotations",
                              {"result": _choice(truth)})  # fmt: skip
            if k % 4 == 0:  # overlap: bob too, disagreeing on every other overlapping task
                second = truth if k % 8 else 1 - truth
                label_studio.call("POST", f"/api/tasks/{task['id']}/annotations",
                                  {"result": _choice(second), "completed_by": bob})  # fmt: skip
        export = tmp_path / "export.json"
        raw = urllib.request.Request(
            f"{label_studio.url}/api/projects/{project}/export?exportType=JSON",
            headers={"Authorization": f"Token {TOKEN}"},
        )
        with urllib.request.urlopen(raw, timeout=120) as r:
            export.write_bytes(r.read())
        # user 1 (the first annotator) adjudicates where bob disagrees
        out = _run("session", "record", tmp_path / "ls.db", export, "--overlap", "adjudicator",
                   "--adjudicator", "1")  # fmt: skip
        assert "with several annotations" in out
        ids = [int(v) for v in _run("session", "next", tmp_path / "csv.db", "--k", 20).split()[1:]]
        labels = tmp_path / "labels.csv"
        labels.write_text("id,label\n" + "".join(f"{i},{y[i]}\n" for i in ids))
        _run("session", "record", tmp_path / "csv.db", labels)
    with Session.open(tmp_path / "ls.db") as a, Session.open(tmp_path / "csv.db") as b:
        ea, eb = a.estimate(), b.estimate()
        assert ea.n_labels == eb.n_labels == 40
        assert (ea.estimate, ea.stderr, ea.ci) == (eb.estimate, eb.stderr, eb.ci)
        p = a.progress()
        assert p.complete and p.n_overlapping == 10 and p.n_unanimous == 4
    status = _run("session", "status", tmp_path / "ls.db")
    assert "agreement: 4 of 10 labels with several annotations were unanimous (40%)" in status
