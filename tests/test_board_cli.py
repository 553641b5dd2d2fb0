"""`moot board …` as a person uses it, through a tiny Typer app that registers the group."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from moot.cli import board_cmd
from moot.errors import MootError


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """test app"""

    board_cmd.register(app)
    return app


runner = CliRunner()


def run(app: typer.Typer, *args: str) -> str:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_init_submit_work_and_status(app: typer.Typer, tmp_path: Path) -> None:
    ws = str(tmp_path / "ws")
    assert "board ready" in run(app, "board", "init", ws)
    task = json.loads(run(app, "board", "submit", ws, "say hello", "--type", "greeting", "--requires", "echo", "--json"))
    assert task["type"] == "greeting" and task["requirements"] == ["echo"] and task["status"] == "pending"
    spec = tmp_path / "t.json"
    spec.write_text(json.dumps({"id": "from_file", "description": "from a file", "context": {"original_goal": "g"}}))
    run(app, "board", "submit", ws, "--file", str(spec))
    child = json.loads(run(app, "board", "submit", ws, "a part", "--parent", "from_file", "--json"))
    assert child["parent_id"] == "from_file" and child["depth"] == 1 and child["context"]["original_goal"] == "g"
    status = json.loads(run(app, "board", "status", ws, "--json"))
    assert status["counts"]["pending"] == 3
    summary = json.loads(run(app, "board", "worker", ws, "--agent", "echo", "--until-idle", "--lease", "5", "--json"))
    assert summary["completed"] == 3 and summary["stop_reason"].startswith("idle")
    status = json.loads(run(app, "board", "status", ws, "--json"))
    assert status["counts"]["completed"] == 3 and status["counts"]["pending"] == 0
    assert {t["result"]["echo"] for t in status["tasks"]} == {"say hello", "from a file", "a part"}
    table = run(app, "board", "status", ws)
    assert "completed 3" in table and "from_file" in table
    frame = run(app, "board", "watch", ws, "--once")
    assert "completed 3" in frame


def test_until_idle_waits_out_the_grace_on_work_for_other_agents(app: typer.Typer, tmp_path: Path) -> None:
    ws = str(tmp_path / "ws")
    run(app, "board", "init", ws)
    run(app, "board", "submit", ws, "say hello", "--requires", "echo", "--id", "hello")
    # the breakdown agent declines it by the requirements pre-check (no model is loaded) and,
    # with only someone else's task on the board, stops once the board stood still for the grace
    summary = json.loads(run(app, "board", "worker", ws, "--agent", "breakdown", "--until-idle",
                             "--idle-grace", "0.3", "--json"))
    assert summary["claimed"] == 0
    assert summary["stop_reason"] == "idle: only 1 pending task(s) for other agents, unchanged for 0.3s"
    status = json.loads(run(app, "board", "status", ws, "--json"))
    assert status["counts"]["pending"] == 1 and status["tasks"][0]["attempts"] == 0


def test_worker_max_tasks(app: typer.Typer, tmp_path: Path) -> None:
    ws = str(tmp_path / "ws")
    run(app, "board", "init", ws)
    for i in range(3):
        run(app, "board", "submit", ws, f"job {i}")
    summary = json.loads(run(app, "board", "worker", ws, "--agent", "echo", "--max-tasks", "2", "--json"))
    assert summary["completed"] == 2 and "max_tasks" in summary["stop_reason"]


@pytest.mark.parametrize(
    "args, message",
    [
        (("board", "submit", "WS", "x", "--id", "../etc"), "not allowed"),
        (("board", "submit", "WS"), "nothing to submit"),
        (("board", "worker", "WS", "--agent", "no-such-agent"), "unknown agent type"),
        (("board", "status", "WS/missing"), "not a task board"),
        (("board", "status"), "no board given"),
    ],
)
def test_user_mistakes_are_one_line_errors(app: typer.Typer, tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    ws = str(tmp_path / "ws")
    run(app, "board", "init", ws)
    result = runner.invoke(app, [a.replace("WS", ws) for a in args])
    assert isinstance(result.exception, MootError), result.output
    assert message in result.exception.one_line() and "\n" not in result.exception.one_line()
