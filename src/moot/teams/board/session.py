"""One goal from submit to settled, with the workers in this process: the board in one call.

The board's agents normally run as separate worker processes (``moot board worker``), each on
its own machine if need be. For a script, a test or an eval it is handy to run a goal with a
set of workers inside one process::

    from moot.teams.board import open_board
    from moot.teams.board.session import solve_goal

    board = open_board("DIR")            # or a postgresql:// URL; files go into DIR/context/
    outcome = asyncio.run(solve_goal(board, "Summarise a.md, summarise b.md, then compare them"))
    print(outcome.answer, outcome.model_calls)

Each agent type gets its own :class:`~moot.teams.board.worker.Worker` on its own board
connection (as separate machines would), all sharing one model, so the embedded engine loads
once. The call returns when the goal's root task completed or failed, or after ``timeout_s``
(then the goal is reported unfinished and the workers release what they hold).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from moot.models.base import Model
from moot.teams.board.agents import build_agent
from moot.teams.board.backend import BoardBackend, open_board
from moot.teams.board.goal_budget import read_budget
from moot.teams.board.protocol import result_text
from moot.teams.board.routing import GOAL_TYPE
from moot.teams.board.task import BoardTask, TaskStatus
from moot.teams.board.worker import Worker, WorkerStats

DEFAULT_AGENTS = ("breakdown", "search", "file")


@dataclass
class GoalOutcome:
    """How one goal ended."""

    goal: BoardTask
    """The root task as it ended (status, result, error, context with the plan)."""
    seconds: float
    model_calls: int
    """Model calls charged to the goal (every agent, every role)."""
    workers: list[WorkerStats] = field(default_factory=list)
    timed_out: bool = False

    @property
    def finished(self) -> bool:
        return self.goal.status is TaskStatus.COMPLETED

    @property
    def answer(self) -> str | None:
        """The goal's answer: its final step's output (or every step's), ``None`` unless completed."""
        return result_text(self.goal.result) if self.finished else None

    @property
    def error(self) -> str | None:
        if self.timed_out:
            return f"the goal did not settle in time (status {self.goal.status.value})"
        return self.goal.error


def reopen(board: BoardBackend) -> BoardBackend:
    """A second connection to the same board (what another worker machine would have)."""
    url = getattr(board, "url", None)
    if isinstance(url, str):
        return open_board(url)
    root = getattr(board, "root", None)
    return open_board(str(root if root is not None else board.location))


async def solve_goal(
    board: BoardBackend,
    description: str,
    *,
    model: Model | str | None = None,
    agents: tuple[str, ...] = DEFAULT_AGENTS,
    workspace: str | Path | None = None,
    goal_id: str | None = None,
    context: dict[str, Any] | None = None,
    timeout_s: float = 1800.0,
    lease_s: float = 120.0,
    poll_s: float = 0.2,
    **agent_options: Any,
) -> GoalOutcome:
    """Submit ``description`` as a goal (type ``goal``) and run one worker per agent type until it settles.

    ``agent_options`` go to :func:`~moot.teams.board.agents.build_agent` (``models``, ``store``,
    ``record``, ``bus``); ``context`` to the goal (``{"budget": {...}}``).
    """
    submitted = {"description": description, "type": GOAL_TYPE, "context": dict(context or {})}
    if goal_id:
        submitted["id"] = goal_id
    root = board.submit(BoardTask.model_validate(submitted))
    boards = [reopen(board) for _ in agents]
    workers = [
        Worker(b, build_agent(kind, board=b, model=model, workspace=workspace, **agent_options), lease_s=lease_s,
               poll_s=poll_s, stop_when_idle=True)
        for kind, b in zip(agents, boards)
    ]
    started = time.perf_counter()
    timed_out = False

    async def watch() -> None:
        nonlocal timed_out
        while True:
            current = await asyncio.to_thread(board.get, root.id)
            if current.status in (TaskStatus.COMPLETED, TaskStatus.FAILED):
                break
            if time.perf_counter() - started > timeout_s:
                timed_out = True
                break
            if all(w.stopping for w in workers):
                break
            await asyncio.sleep(poll_s)
        for w in workers:
            w.stop("the goal settled" if not timed_out else f"the goal did not settle in {timeout_s:g}s")

    try:
        results = await asyncio.gather(watch(), *(w.run() for w in workers))
    finally:
        for b in boards:
            b.close()
    final = board.get(root.id)
    return GoalOutcome(goal=final, seconds=time.perf_counter() - started,
                       model_calls=read_budget(board, final).model_calls,
                       workers=[r for r in results[1:] if isinstance(r, WorkerStats)], timed_out=timed_out)


__all__ = ["DEFAULT_AGENTS", "GoalOutcome", "reopen", "solve_goal"]
