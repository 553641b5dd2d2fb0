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
