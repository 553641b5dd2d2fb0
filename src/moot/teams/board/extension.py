"""Self-extension, safely: new agent types are declarative specs, validated, never code.

The seed's self-extension has a file agent write Python for a new agent and a terminal agent
deploy it — running code a model wrote. moot keeps the idea (the board grows a new agent type
when a goal needs a capability nobody has) and drops the danger: the breakdown agent drafts an
:class:`AgentSpec` — name, capabilities, instructions, tools *chosen from an allow-list*,
threshold — through structured output; :func:`validate_spec` checks it; it is registered in
the board's registry; any worker can then run it as a :class:`BaseAgent` with that spec.
Nothing is ever imported, evaluated or executed from a spec.
"""

from __future__ import annotations

import re
import time
from typing import Literal

from pydantic import BaseModel, Field

from moot.errors import MootError
from moot.teams.board.agent_tools import TOOL_ALLOW_LIST, terminal_enabled
from moot.teams.board.backend import AgentSpec

BUILTIN_TYPES = ("breakdown", "search", "file", "terminal", "echo")
"""Names a drafted spec may not take over."""

SPEC_NAME = re.compile(r"^[a-z][a-z0-9_]{2,39}$")
CAPABILITY_NAME = re.compile(r"^[a-z][a-z0-9_]{1,39}$")
MAX_INSTRUCTIONS = 1200
MAX_CAPABILITIES = 5

DraftTool = Literal["search_documents", "read_file", "write_file", "list_files", "calculate"]
"""What a model may pick when drafting (``run_command`` is never offered to a model; a person
can still register a spec with it while the terminal is enabled)."""


class InvalidSpecError(MootError):
    """An agent spec breaks a rule (name, tools, threshold, instructions)."""

    fix = f"use a lower-case name, tools from {', '.join(TOOL_ALLOW_LIST)}, threshold 1-10"


class SpecDraft(BaseModel):
    """What the breakdown agent's model fills in when no agent has a needed capability."""

    name: str = Field(description="lower_case_name of the new agent type, like 'summarizer'")
    capability: str = Field(description="the one capability it adds, lower_case, like 'summarization'")
    instructions: str = Field(description="two or three sentences: how the agent does its work")
    tools: list[DraftTool] = Field(default_factory=list, description="tools it needs, from the allowed list")
    threshold: int = Field(default=6, ge=1, le=10, description="fitness score (1-10) needed to take a task")


def validate_spec(spec: AgentSpec, *, allow_terminal: bool | None = None, allow_builtin_name: bool = False) -> AgentSpec:
    """Return ``spec`` if it obeys every rule, else raise :class:`InvalidSpecError` in one line.

    Rules: a lower-case name (3-40 of ``a-z0-9_``) that is not a built-in type; 1-5
    lower-case capabilities; tools only from :data:`TOOL_ALLOW_LIST` (``run_command`` only
    while the terminal is enabled); threshold 1-10; instructions at most
    :data:`MAX_INSTRUCTIONS` characters.
    """
    if not SPEC_NAME.match(spec.name):
        raise InvalidSpecError(f"agent name {spec.name!r} is not allowed: use 3-40 of a-z, 0-9, '_', starting with a letter")
    if spec.name in BUILTIN_TYPES and not allow_builtin_name:
        raise InvalidSpecError(f"agent name {spec.name!r} is a built-in type and cannot be replaced")
    if not spec.capabilities or len(spec.capabilities) > MAX_CAPABILITIES:
        raise InvalidSpecError(f"agent {spec.name!r} needs 1-{MAX_CAPABILITIES} capabilities")
    for capability in spec.capabilities:
        if not CAPABILITY_NAME.match(capability):
            raise InvalidSpecError(f"capability {capability!r} is not allowed: use a-z, 0-9, '_'")
    for tool in spec.tools:
        if tool not in TOOL_ALLOW_LIST:
            raise InvalidSpecError(
                f"tool {tool!r} is not on the allow-list ({', '.join(TOOL_ALLOW_LIST)}); no other tool can be given to an agent"
            )
        if tool == "run_command" and not terminal_enabled(allow_terminal):
            raise InvalidSpecError("tool 'run_command' needs the terminal enabled (MOOT_BOARD_TERMINAL=1)")
    if not 1 <= spec.threshold <= 10:
        raise InvalidSpecError(f"threshold {spec.threshold} is outside 1-10")
    if len(spec.instructions) > MAX_INSTRUCTIONS:
        raise InvalidSpecError(f"instructions are {len(spec.instructions)} characters; at most {MAX_INSTRUCTIONS}")
    return spec


def normalize_name(text: str) -> str:
    """A model's free-form name squeezed into the name pattern (``'Summary Writer'`` → ``summary_writer``)."""
    name = re.sub(r"[^a-z0-9]+", "_", text.strip().lower()).strip("_")
    if name and not name[0].isalpha():
        name = f"a_{name}"
    return name[:40]


def spec_from_draft(draft: SpecDraft, *, created_by: str) -> AgentSpec:
    """The registrable spec for a draft (names normalised; validation is still up to the caller)."""
    return AgentSpec(
        name=normalize_name(draft.name),
        capabilities=[normalize_name(draft.capability)],
        instructions=draft.instructions.strip(),
        tools=list(dict.fromkeys(draft.tools)),
        threshold=draft.threshold,
        created_by=created_by,
        created_at=time.time(),
    )


__all__ = [
    "BUILTIN_TYPES",
    "InvalidSpecError",
    "MAX_INSTRUCTIONS",
    "SpecDraft",
    "normalize_name",
    "spec_from_draft",
    "validate_spec",
]
