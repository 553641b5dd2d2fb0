"""End to end on the embedded model: a goal is planned, its files read, compared and answered; a worker process completes a task."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from moot.teams.board import TaskStatus
from moot.teams.board.folder import FolderBoard
from moot.teams.board.goal_budget import read_budget
from moot.teams.board.result_check import failure_reason
from moot.teams.board.session import solve_goal

FIRST = "# Pier log, 3 March 2031\n\nThe Harbour ferry carried 12,400 passengers in February. Six boats ran.\n"
SECOND = "# Pier log, 2 April 2031\n\nThe Harbour ferry carried 13,550 passengers in March. Seven boats ran.\n"


@pytest.mark.embedded
def test_a_goal_is_read_compared_and_answered_with_its_figures_on_the_embedded_model(local_model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    board = FolderBoard(tmp_path / "ws")
    board.init()
    (tmp_path / "ws" / "context" / "first.md").write_text(FIRST)
    (tmp_path / "ws" / "context" / "second.md").write_text(SECOND)
    goal = "Summarise first.md, summarise second.md, then say how the passenger numbers changed between the two notes"
    outcome = asyncio.run(solve_goal(board, goal, model=local_model, record=False, timeout_s=1500))
    assert outcome.finished, outcome.error
    steps = [board.get(i) for i in outcome.goal.subtasks]
    assert [s.type for s in steps] == ["file", "file", "search"]  # routed by rule, the plan proposed by Python
    assert outcome.goal.result["read"] == ["context/first.md", "context/second.md"]  # read through the tool
    # the answer carries the compared values (and a restatement would have been rejected)
    assert "12,400" in outcome.answer and "13,550" in outcome.answer
    assert failure_reason(outcome.answer) is None
    assert all(s.status is TaskStatus.COMPLETED for s in steps)


def _moot(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.run([sys.executable, "-m", "moot", *args], capture_output=True, text=True, env=env, timeout=timeout)


@pytest.mark.embedded
def test_a_model_worker_in_a_subprocess_completes_a_task(tmp_path: Path) -> None:
    """`moot board worker DIR --agent search --model local --until-idle` as a person runs it."""
    ws = tmp_path / "ws"
    assert _moot("board", "init", str(ws)).returncode == 0
    (ws / "context" / "wind.md").write_text("Wind turbines\n\nA modern wind turbine lasts about 20 to 25 years.\n")
    submitted = _moot("board", "submit", str(ws), "Find how many years a wind turbine lasts",
                      "--requires", "document_search", "--id", "wind")
    assert submitted.returncode == 0, submitted.stderr
    # Generous: the limit only guards against a hang; on a machine shared with other model
    # processes three calls of the embedded model took over 4 minutes.
    worker = _moot("board", "worker", str(ws), "--agent", "search", "--model", "local", "--until-idle",
                   "--lease", "120", "--json", timeout=900)
    assert worker.returncode == 0, worker.stderr
    summary = json.loads(worker.stdout.strip().splitlines()[-1])
    assert summary["agent"] == "search" and summary["claimed"] >= 1 and summary["stop_reason"].startswith("idle")
    task = FolderBoard(ws).get("wind")
    assert task.status is TaskStatus.COMPLETED, task.error
    assert task.claimed_by == summary["worker_id"] and task.result["agent"] == "search"
    assert failure_reason(task.result["output"]) is None  # a real answer, not "no file …"
    assert read_budget(FolderBoard(ws), task).model_calls >= 1  # the executor; routing took no call
