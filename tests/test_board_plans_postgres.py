"""Issue #38 on PostgreSQL: the same typed plan, dependencies and checks with workers on a real server."""

from __future__ import annotations

from pathlib import Path

from moot.teams.board.postgres import PostgresBoard
from moot.teams.board.session import solve_goal
from test_board_plans import APRIL, GOAL, MARCH, Team
from test_board_postgres import board, db_url, pg_server  # noqa: F401 - the private server's fixtures

__all__ = ["board", "db_url", "pg_server"]


async def test_a_goal_is_planned_read_compared_and_answered_on_postgres(board: PostgresBoard, tmp_path: Path) -> None:  # noqa: F811
    workspace = tmp_path / "ws"
    (workspace / "context").mkdir(parents=True)
    (workspace / "context" / "march.md").write_text(MARCH)
    (workspace / "context" / "april.md").write_text(APRIL)
    team = Team()
    outcome = await solve_goal(board, GOAL, model=team.model, workspace=workspace, record=False, poll_s=0.02, goal_id="pg")
    assert outcome.finished, outcome.error
    assert outcome.answer.startswith("8,240 (context/march.md) → 9,015 (context/april.md); change: +775 (+9.4 %).")
    assert outcome.goal.result["read"] == ["context/march.md", "context/april.md"]
    assert outcome.model_calls == 7
    missing = await solve_goal(board, "Summarise june.md", model=Team().model, workspace=workspace, record=False, poll_s=0.02)
    assert not missing.finished and "june.md, which is not in the workspace" in (missing.error or "")


def test_moot_eval_board_runs_the_same_goals_on_postgres(db_url: str, tmp_path: Path) -> None:  # noqa: F811
    import json
    import os
    import subprocess
    import sys

    from openai_stub import openai_compatible_server
    from test_eval_board import stub_team

    env = {**os.environ, "MOOT_HOME": str(tmp_path), "MOOT_RUNS_DB": str(tmp_path / "runs.db")}
    with openai_compatible_server(stub_team) as model:
        done = subprocess.run([sys.executable, "-m", "moot", "eval", "board", "--goals", "3", "--systems", "board",
                               "--postgres", db_url, "--model", model, "--timeout", "120", "--json"],
                              capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["backend"] == "postgresql" and report["summary"]["board"]["goals"] == 3
    assert report["summary"]["board"]["unclaimed"] == 0 and report["summary"]["board"]["unfinished"] == 0
    board = PostgresBoard(db_url)
    try:
        roots = [t for t in board.list() if t.type == "goal"]
        assert len(roots) == 3 and all(t.status.value == "completed" for t in roots)  # the goals ran in the database
    finally:
        board.close()
