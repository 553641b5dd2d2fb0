"""The task record shared by every board backend (folder or PostgreSQL).

The fields are the seed's task format (id, parent_id, depth, type, description, context,
requirements, created_by, created_at, claimed_by, claimed_at) plus what it lacked: status,
result, error, attempts and a lease, so a task whose worker died can be recovered and no task
is ever completed twice.
"""

from __future__ import annotations

import re
import time
import uuid
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from moot.errors import MootError

TASK_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$")
"""Task ids become file names: letters, digits, ``_ . -`` only, no path characters."""

MAX_DEPTH = 5
"""The seed's emergency depth limit: no subtask deeper than this is ever created."""


class TaskStatus(str, Enum):
    """Where a task is; for the folder backend, also the folder it lives in."""

    PENDING = "pending"
    ACTIVE = "active"
    COMPLETED = "completed"
    FAILED = "failed"


class InvalidTaskError(MootError):
    """A task record is malformed (bad id, missing description, hand-edited JSON)."""

    fix = "check the task JSON against `moot board submit --help` (id: letters, digits, _ . - only)"


def new_task_id() -> str:
    return f"task_{uuid.uuid4().hex[:12]}"


class BoardTask(BaseModel):
    """One unit of work on the board."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    id: str = Field(default_factory=new_task_id)
    description: str
    type: str = "general"
    """What kind of work it is; agents use it in their capability check."""
    requirements: list[str] = Field(default_factory=list)
    """Capabilities an agent must have to take the task (``web_search``, ``file_operations`` …)."""
    context: dict[str, Any] = Field(default_factory=dict)
    """Shared context; ``original_goal`` is the root goal's description."""
    parent_id: str | None = None
    root_id: str | None = None
    """The root goal this task belongs to (itself for a root); budgets are per root."""
    depth: int = 0
    priority: int = 0
    created_by: str = "user"
    created_at: float = Field(default_factory=time.time)
    status: TaskStatus = TaskStatus.PENDING
    claimed_by: str | None = None
    claimed_at: float | None = None
    lease_expires_at: float | None = None
    """While active: the worker must heartbeat before this time or the task goes back to pending."""
    attempts: int = 0
    """How many times a worker claimed it; after ``max_attempts`` expiries it fails."""
    max_attempts: int = 3
    subtasks: list[str] = Field(default_factory=list)
    """Ids of subtasks; a parent completes when all of them have completed."""
    result: Any = None
    error: str | None = None
    finished_at: float | None = None

    @field_validator("id")
    @classmethod
    def _safe_id(cls, value: str) -> str:
        if not TASK_ID_PATTERN.match(value):
            raise ValueError(
                f"task id {value!r} is not allowed: use 1-80 letters, digits, '_', '.', '-' (no path characters)"
            )
        return value

    @field_validator("description")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a task needs a non-empty description")
        return value

    @field_validator("depth")
    @classmethod
    def _depth_limit(cls, value: int) -> int:
        if value < 0 or value > MAX_DEPTH:
            raise ValueError(f"depth {value} is outside 0..{MAX_DEPTH} (the emergency depth limit)")
        return value

    @property
    def original_goal(self) -> str:
        return str(self.context.get("original_goal") or self.description)

    def lease_expired(self, now: float | None = None) -> bool:
        return (
            self.status is TaskStatus.ACTIVE
            and self.lease_expires_at is not None
            and self.lease_expires_at < (time.time() if now is None else now)
        )


def parse_task(data: bytes | str | dict[str, Any], *, origin: str = "task") -> BoardTask:
    """Validate a task from JSON text or a dict; raises :class:`InvalidTaskError` in one line."""
    from pydantic import ValidationError

    try:
        if isinstance(data, dict):
            return BoardTask.model_validate(data)
        return BoardTask.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        raise InvalidTaskError(f"{origin} is not a valid task: {where}: {first['msg']}") from None


__all__ = [
    "BoardTask",
    "InvalidTaskError",
    "MAX_DEPTH",
    "TASK_ID_PATTERN",
    "TaskStatus",
    "new_task_id",
    "parse_task",
]
