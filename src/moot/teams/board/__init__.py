"""The task board: peer agents watch a shared workspace and claim tasks atomically."""

from __future__ import annotations

from moot.teams.board.backend import (
    AgentSpec,
    BoardBackend,
    BoardStats,
    LeaseLostError,
    UnknownTaskError,
    open_board,
)
from moot.teams.board.task import MAX_DEPTH, BoardTask, InvalidTaskError, TaskStatus, parse_task

__all__ = [
    "AgentSpec",
    "BoardBackend",
    "BoardStats",
    "BoardTask",
    "InvalidTaskError",
    "LeaseLostError",
    "MAX_DEPTH",
    "TaskStatus",
    "UnknownTaskError",
    "open_board",
    "parse_task",
]
