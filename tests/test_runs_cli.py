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
