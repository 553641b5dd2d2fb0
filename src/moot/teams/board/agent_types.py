"""Which agent types a board has, and building one: the built-ins plus the board's registry.

The built-in specs are data (:mod:`moot.teams.board.specs`); registered ones come from the
board (``agents/registry.json`` or ``moot_board_agents``). The routing rules
(:mod:`moot.teams.board.routing`) decide over :func:`known_specs`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from moot.errors import ConfigError
from moot.models.base import Model
from moot.teams.board.agent_tools import terminal_enabled
from moot.teams.board.backend import AgentSpec, BoardBackend
from moot.teams.board.specs import BREAKDOWN_SPEC, FILE_SPEC, SEARCH_SPEC, TERMINAL_SPEC


def builtin_specs(*, allow_terminal: bool | None = None) -> dict[str, AgentSpec]:
    """The built-in agent types (``terminal`` only while the terminal is enabled)."""
    specs = {s.name: s for s in (BREAKDOWN_SPEC, SEARCH_SPEC, FILE_SPEC)}
    if terminal_enabled(allow_terminal):
        specs[TERMINAL_SPEC.name] = TERMINAL_SPEC
    return specs


def known_specs(board: BoardBackend, *, allow_terminal: bool | None = None) -> dict[str, AgentSpec]:
    """Built-in specs plus the board's registry (a registered spec never replaces a built-in)."""
    specs = builtin_specs(allow_terminal=allow_terminal)
    enabled = terminal_enabled(allow_terminal)
    for spec in board.agents():
        if spec.name == "echo" or (spec.name == "terminal" and not enabled):
            continue  # echo takes anything (a test agent); a disabled terminal would strand its tasks
        specs.setdefault(spec.name, spec)
    return specs


def build_agent(
    spec_or_type: AgentSpec | str,
    *,
    board: BoardBackend,
    model: Model | str | None = None,
    workspace: str | Path | None = None,
    allow_terminal: bool | None = None,
    **agent_options: Any,
) -> Any:
    """The agent for a type name or a spec: a built-in, ``echo``, or any registered spec.

    ``agent_options`` go to the model-driven agents: ``models`` (a model per role), ``store``
    (where calls are recorded), ``record``, ``bus``.

    Raises :class:`ConfigError` (one line, with the fix) for an unknown type, and for the
    terminal agent while the terminal is off.
    """
    from moot.teams.board.agents import BaseAgent
    from moot.teams.board.breakdown import TaskBreakdownAgent
    from moot.teams.board.builtin_agents import FileAgent, SearchAgent, TerminalAgent

    options: dict[str, Any] = {"model": model, "workspace": workspace, "allow_terminal": allow_terminal, **agent_options}
    if isinstance(spec_or_type, AgentSpec):
        from moot.teams.board.extension import validate_spec

        return BaseAgent(validate_spec(spec_or_type, allow_terminal=allow_terminal, allow_builtin_name=True), **options)
    name = spec_or_type.strip().lower()
    if name == "echo":
        from moot.teams.board.echo import EchoAgent  # written alongside the worker

        return EchoAgent()
    builtin = {"breakdown": TaskBreakdownAgent, "search": SearchAgent, "file": FileAgent, "terminal": TerminalAgent}
    if name in builtin:
        return builtin[name](**options)
    for spec in board.agents():
        if spec.name == name:
            from moot.teams.board.extension import validate_spec

            return BaseAgent(validate_spec(spec, allow_terminal=allow_terminal), **options)
    available = sorted({*builtin, "echo", *(s.name for s in board.agents())})
    raise ConfigError(
        f"no agent type {spec_or_type!r} on this board",
        fix=f"use one of: {', '.join(available)}",
    )


__all__ = ["build_agent", "builtin_specs", "known_specs"]
