"""`moot runs` and `moot runs show`: what a person sees about recorded runs."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from moot.cli import runs_cmd
from moot.errors import ModelHTTPError, MootError
from moot.models.base import ModelResponse, Usage
from moot.models.testing import ScriptedModel, tool_call
from moot.runtime import Budget, RunStore, SubAgent, SubAgentTask, TaskGraph, tool


@tool
def lookup(term: str) -> str:
    """Looks a term up."""
    return f"{term} is a word"


@pytest.fixture
def runs_db(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    path = tmp_path / "runs.sqlite3"
    monkeypatch.setenv("MOOT_RUNS_DB", str(path))
    return path


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """test app"""

    runs_cmd.register(app)
    return app


def record_runs() -> tuple[str, str]:
    priced = ModelResponse(text="summary", usage=Usage(input_tokens=120, output_tokens=30, requests=1, cost_usd=0.0123))
    graph = TaskGraph(
        [
            SubAgent("researcher", "", "", [lookup], ScriptedModel([tool_call("lookup", term="moot"), "notes"])),
            SubAgent("critic", model=ScriptedModel(["critique"])),
            SubAgent("writer", model=ScriptedModel([priced])),
        ],
        [SubAgentTask("researcher", "r"), SubAgentTask("critic", "c"), SubAgentTask("writer", "w", depends_on=["researcher", "critic"])],
    )
    done = graph.run_sync(store=RunStore(), name="demo run")
    stopped_graph = TaskGraph(
        [SubAgent("looper", "", "", [lookup], ScriptedModel([tool_call("lookup", term="x")], repeat_last=True)),
         SubAgent("broken", model=ScriptedModel([ModelHTTPError("nope", status=500)]))],
        [SubAgentTask("looper", "loop"), SubAgentTask("broken", "b", on_failure="skip")],
    )
    stopped = stopped_graph.run_sync(store=RunStore(), name="budget run", budget=Budget(max_calls=3))
    return done.run_id, stopped.run_id


def test_runs_lists_recorded_runs(runs_db, app) -> None:  # type: ignore[no-untyped-def]
    done_id, stopped_id = record_runs()
    result = CliRunner().invoke(app, ["runs"], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert done_id[:8] in result.output and stopped_id[:8] in result.output
    assert "demo run" in result.output and "completed" in result.output and "stopped" in result.output
    as_json = json.loads(CliRunner().invoke(app, ["runs", "--json", "--limit", "1"]).output)
    assert [r["id"] for r in as_json["runs"]] == [stopped_id]
    assert as_json["runs"][0]["usage"]["requests"] == 3


def test_runs_show_renders_a_timeline(runs_db, app) -> None:  # type: ignore[no-untyped-def]
    done_id, stopped_id = record_runs()
    result = CliRunner().invoke(app, ["runs", "show", done_id[:7]], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    out = result.output
    for text in ("researcher", "critic", "writer", "↳ lookup", "moot is a word", "█", "stop reason: all 3 tasks completed"):
        assert text in out, text
    assert "$0.0123" in out  # the writer's cost
    writer_line = next(line for line in out.splitlines() if line.startswith("writer"))
    assert " 150 " in writer_line  # 120 in + 30 out tokens

    stopped = CliRunner().invoke(app, ["runs", "show", stopped_id], env={"COLUMNS": "160"}).output
    assert "stop reason: stopped: the run's budget of 3 model calls would be exceeded" in stopped
    assert "failed" in stopped and "nope" in stopped


def test_runs_show_json_and_unknown_ids(runs_db, app) -> None:  # type: ignore[no-untyped-def]
    done_id, _ = record_runs()
    payload = json.loads(CliRunner().invoke(app, ["runs", "show", done_id, "--json"]).output)
    assert payload["run"]["id"] == done_id and payload["run"]["status"] == "completed"
    assert any(e["type"] == "tool_call" for e in payload["events"])
    result = CliRunner().invoke(app, ["runs", "show", "ffffffff"])
    assert isinstance(result.exception, MootError)
    assert result.exception.one_line() == "no run matches 'ffffffff' (fix: list runs with `moot runs`)"


def test_runs_with_no_runs_yet(runs_db, app) -> None:  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(app, ["runs"])
    assert result.exit_code == 0 and "no runs recorded yet" in result.output


# --------------------------------------------------------------------------- scripting (issue #35)


def _moot(*args: str, db: object) -> "subprocess.CompletedProcess[str]":
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("MOOT_")}
    env.update({"MOOT_RUNS_DB": str(db), "MOOT_HOME": str(db) + ".home", "MOOT_CONFIG": "", "COLUMNS": "60"})
    return subprocess.run([sys.executable, "-m", "moot", *args], capture_output=True, text=True, env=env, timeout=120)


def test_piped_runs_are_tab_separated_whole_rows(runs_db) -> None:  # type: ignore[no-untyped-def]
    done_id, stopped_id = record_runs()
    out = _moot("runs", db=runs_db)
    assert out.returncode == 0, out.stderr
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    assert [r[0] for r in rows] == [stopped_id, done_id]  # whole ids, newest first, no header, no title
    assert all(len(r) == 8 for r in rows)
    assert rows[1][1] == "demo run" and rows[1][2] == "completed" and rows[0][2] == "stopped"
    assert "…" not in out.stdout and rows[1][7].startswith("$")  # nothing cut, even at 60 columns
    assert len(rows[1][3]) == len("2026-11-27 19:30:00")  # the date on one line


def test_runs_filter_by_status_team_and_since(runs_db, app) -> None:  # type: ignore[no-untyped-def]
    done_id, stopped_id = record_runs()
    runner = CliRunner()
    stopped = json.loads(runner.invoke(app, ["runs", "--status", "stopped", "--json"]).output)
    assert [r["id"] for r in stopped["runs"]] == [stopped_id]
    recent = json.loads(runner.invoke(app, ["runs", "--since", "1h", "--json"]).output)
    assert {r["id"] for r in recent["runs"]} == {done_id, stopped_id}
    future = json.loads(runner.invoke(app, ["runs", "--since", "2999-01-01", "--json"]).output)
    assert future["runs"] == []
    assert json.loads(runner.invoke(app, ["runs", "--team", "research", "--json"]).output)["runs"] == []
    others = json.loads(runner.invoke(app, ["runs", "--team", "other", "--json"]).output)
    assert {r["id"] for r in others["runs"]} == {done_id, stopped_id}  # "demo run" is no team's name
    for bad in (["--status", "done"], ["--team", "chess"], ["--since", "yesterday"]):
        result = runner.invoke(app, ["runs", *bad])
        assert isinstance(result.exception, MootError) and result.exception.exit_code == 2, bad


def test_runs_delete_removes_a_run_and_what_it_holds_and_refuses_unknown_ids(runs_db, app) -> None:  # type: ignore[no-untyped-def]
    done_id, stopped_id = record_runs()
    with RunStore() as store:
        store.start_run("parent-1", "learn 2 files into kb")
        store.start_run("child-1", "learn a.md", parent_run_id="parent-1")
    runner = CliRunner()
    running = runner.invoke(app, ["runs", "delete", "parent-1"])
    assert isinstance(running.exception, MootError) and "--force" in running.exception.fix  # its child still runs
    with RunStore() as store:
        store.close_parent("child-1", "completed", "done")
        store.close_parent("parent-1", "completed", "done")
    refused = runner.invoke(app, ["runs", "delete", done_id[:10], "nosuchrun"])
    assert isinstance(refused.exception, MootError)
    with RunStore() as store:
        assert store.get_run(done_id).id == done_id  # nothing deleted: all or none
    deleted = json.loads(runner.invoke(app, ["runs", "delete", done_id[:10], "parent-1", "--json"]).output)
    assert set(deleted["deleted"]) == {done_id, "parent-1", "child-1"}
    with RunStore() as store:
        assert [r.id for r in store.list_runs(10)] == [stopped_id]
        assert store.events(stopped_id)  # the other run's events are untouched
        with pytest.raises(MootError):
            store.events(done_id)


def test_runs_prune_keeps_the_newest_and_never_a_running_run(runs_db, app) -> None:  # type: ignore[no-untyped-def]
    done_id, stopped_id = record_runs()
    with RunStore() as store:
        store.start_run("still-going", "research: long", started=1.0)  # oldest, but running
    runner = CliRunner()
    dry = json.loads(runner.invoke(app, ["runs", "prune", "--keep", "1", "--dry-run", "--json"]).output)
    assert dry["would_delete"] == [done_id]
    result = json.loads(runner.invoke(app, ["runs", "prune", "--older-than", "0s", "--json"]).output)
    assert set(result["deleted"]) == {done_id, stopped_id}
    with RunStore() as store:
        assert [r.id for r in store.list_runs(10)] == ["still-going"]
    refused = runner.invoke(app, ["runs", "prune"])
    assert isinstance(refused.exception, MootError) and "--older-than" in refused.exception.fix
