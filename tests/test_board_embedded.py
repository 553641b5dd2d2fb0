"""End to end on the embedded model: a goal is broken down, de-duplicated, claimed and completed."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from moot.teams.board import BoardTask, TaskStatus
from moot.teams.board.breakdown import DUPLICATE_SIMILARITY, TaskBreakdownAgent, similarity
from moot.teams.board.builtin_agents import SearchAgent
from moot.teams.board.folder import FolderBoard
from moot.teams.board.goal_budget import read_budget
from moot.teams.board.protocol import AWAITING_SUBTASKS
from moot.teams.board.result_check import failure_reason

NOTES = """Cats need fresh water every day.
Adult cats eat meat-based food twice a day.
Cats should see a vet once a year for vaccinations.
"""


@pytest.mark.embedded
def test_a_goal_is_broken_down_and_completed_on_the_embedded_model(local_model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    board = FolderBoard(tmp_path / "ws")
    board.init()
    (tmp_path / "ws" / "context" / "cats.md").write_text(NOTES)
    root = board.submit(BoardTask(description="Write a short care guide for a cat: food, water and vet visits"))

    async def run() -> None:
        breakdown = TaskBreakdownAgent(model=local_model)
        claimed = board.claim(root.id, "breakdown_test", lease_s=300)
        assert claimed is not None
        outcome = await breakdown.process(claimed, board)
        assert outcome is AWAITING_SUBTASKS
        searcher = SearchAgent(model=local_model)
        for sub_id in board.get(root.id).subtasks:
            sub = board.claim(sub_id, "executor_test", lease_s=300)
            assert sub is not None
            # the executor role, with the search tool over context/; the goal check is unit-tested
            output = await searcher.execute(sub, board)
            board.complete(sub.id, "executor_test", {"agent": "search", "output": output})

    asyncio.run(run())

    subtasks = [board.get(i) for i in board.get(root.id).subtasks]
    assert len(subtasks) >= 2
    for a, b in itertools.combinations(subtasks, 2):
        assert similarity(a.description, b.description) < DUPLICATE_SIMILARITY, (a.description, b.description)
    assert all(s.status is TaskStatus.COMPLETED and s.result["output"] for s in subtasks)
    assert all(s.depth == 1 and s.root_id == root.id and s.context["original_goal"] == root.description for s in subtasks)
    assert read_budget(board, root).model_calls >= 1 + len(subtasks)


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
    assert read_budget(FolderBoard(ws), task).model_calls >= 3  # metacognition, fitness, executor
