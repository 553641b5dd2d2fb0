"""The task record shared by every board backend (folder or PostgreSQL).

The fields are the seed's task format (id, parent_id, depth, type, description, context,
requirements, created_by, created_at, claimed_by, claimed_at) plus what it lacked: status,
result, error, attempts and a lease, so a task whose worker died can be recovered and no task
is ever completed twice.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from moot.errors import MootError

TASK_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$")
"""Task ids become file names: letters, digits, ``_ . -`` only, no path characters."""

MAX_DEPTH = 5
"""The seed's emergency depth limit: no subtask deeper than this is ever created."""

MAX_TASK_BYTES = 1_000_000
"""The largest task record read or accepted (a task is a description and some context, not data)."""
MAX_NESTING = 32
"""The deepest nesting of lists and objects in a task record. JSON parsers recurse: a file
nested 1,000 deep crashed every worker with RecursionError, and 500 deep could be read but
not written back."""
MAX_ATTEMPTS = 100
MAX_PRIORITY = 1_000_000
"""Priorities are kept within +-this (PostgreSQL stores them in a 32-bit integer)."""
MAX_TEXT = 100_000
"""The longest description or error, in characters."""
MAX_NAME = 200
"""The longest type, requirement, worker name or parent id."""


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

    @field_validator("attempts")
    @classmethod
    def _attempts_range(cls, value: int) -> int:
        if not 0 <= value <= MAX_ATTEMPTS:
            raise ValueError(f"attempts {value} is outside 0..{MAX_ATTEMPTS}")
        return value

    @field_validator("max_attempts")
    @classmethod
    def _max_attempts_range(cls, value: int) -> int:
        if not 1 <= value <= MAX_ATTEMPTS:
            raise ValueError(f"max_attempts {value} is outside 1..{MAX_ATTEMPTS}")
        return value

    @field_validator("priority")
    @classmethod
    def _priority_range(cls, value: int) -> int:
        if not -MAX_PRIORITY <= value <= MAX_PRIORITY:
            raise ValueError(f"priority {value} is outside -{MAX_PRIORITY}..{MAX_PRIORITY}")
        return value

    @field_validator("type", "created_by", "parent_id", "root_id", "claimed_by")
    @classmethod
    def _short_name(cls, value: str | None) -> str | None:
        if value is not None and len(value) > MAX_NAME:
            raise ValueError(f"is longer than {MAX_NAME} characters")
        return value

    @field_validator("requirements", "subtasks")
    @classmethod
    def _short_names(cls, value: list[str]) -> list[str]:
        if len(value) > 1000 or any(len(item) > MAX_NAME for item in value):
            raise ValueError(f"holds more than 1000 items or an item longer than {MAX_NAME} characters")
        return value

    @field_validator("description", "error")
    @classmethod
    def _text_length(cls, value: str | None) -> str | None:
        if value is not None and len(value) > MAX_TEXT:
            raise ValueError(f"is longer than {MAX_TEXT} characters")
        return value

    @field_validator("created_at", "claimed_at", "lease_expires_at", "finished_at")
    @classmethod
    def _finite_time(cls, value: float | None) -> float | None:
        if value is not None and not (0 <= value < 1e11):  # NaN fails too
            raise ValueError(f"{value} is not a time (seconds since 1970)")
        return value

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, data: Any) -> Any:
        """Nesting and NUL characters, checked over the whole record without recursion."""
        if isinstance(data, dict):
            check_shape(data)
        return data

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


def check_shape(value: Any) -> None:
    """Raise ``ValueError`` when ``value`` nests deeper than :data:`MAX_NESTING` or holds a NUL
    character or a lone surrogate in any string or key (PostgreSQL cannot store a NUL, a lone
    surrogate is not Unicode text and cannot be written anywhere, and no task needs either)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                raise ValueError("a text holds a NUL character")
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(f"a text holds a lone surrogate (\\u{ord(item[exc.start]):04x}), which is not "
                                 "Unicode text: write the character itself, or a valid \\u pair") from None
            continue
        if isinstance(item, dict):
            children: Any = [*item.keys(), *item.values()]
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if level > MAX_NESTING:
            raise ValueError(f"the record nests deeper than {MAX_NESTING} levels")
        stack.extend((child, level + 1) for child in children)


def json_nesting(raw: bytes) -> int:
    """How deep ``[`` and ``{`` nest in JSON text, without parsing it (so without recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_NESTING:
                    return deepest
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def load_task_json(raw: bytes | str, *, origin: str = "task") -> dict[str, Any]:
    """Size, nesting, JSON and object checks for a task record, each a one-line
    :class:`InvalidTaskError`, before the JSON parser sees it."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if len(data) > MAX_TASK_BYTES:
        raise InvalidTaskError(f"{origin} is {len(data)} bytes, over the limit of {MAX_TASK_BYTES}")
    # Nesting can be no deeper than the number of brackets that open it: most tasks have a few,
    # and counting them runs in C, so the byte-by-byte scan is only for those with many.
    if data.count(b"[") + data.count(b"{") > MAX_NESTING and json_nesting(data) > MAX_NESTING:
        raise InvalidTaskError(f"{origin} nests lists or objects deeper than {MAX_NESTING} levels")
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidTaskError(f"{origin} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise InvalidTaskError(f"{origin} is not a JSON object")
    return value


def parse_task(data: bytes | str | dict[str, Any], *, origin: str = "task") -> BoardTask:
    """Validate a task from JSON text or a dict; raises :class:`InvalidTaskError` in one line."""
    from pydantic import ValidationError

    try:
        if not isinstance(data, dict):
            data = load_task_json(data, origin=origin)
        return BoardTask.model_validate(data)
    except RecursionError:
        raise InvalidTaskError(f"{origin} nests lists or objects too deeply") from None
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
    "check_shape",
    "json_nesting",
    "load_task_json",
    "new_task_id",
    "parse_task",
]
