"""The built-in specialists: Search, File and Terminal (the seed's SearchAgent, FileAgent, TerminalAgent).

They are :class:`BaseAgent` with fixed specs; what makes them safe lives in their tools
(:mod:`moot.teams.board.agent_tools`):

- **search** looks only at local text under ``<workspace>/context`` and the knowledge bases a
  task names in ``context.knowledge_bases`` — there is no web search here, and a missing
  knowledge base is skipped, never created;
- **file** reads, writes and lists inside the workspace only (no absolute paths, no ``..``, no
  symlink escapes, nothing under the board's ``tasks/`` or ``agents/``);
- **terminal** is off unless ``MOOT_BOARD_TERMINAL=1`` (or ``allow_terminal=True``), and then
  runs only allow-listed read-only programs, without a shell, with a timeout. The seed used its
  terminal agent to deploy model-written agents; moot never does that.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from moot.errors import ConfigError
from moot.models.base import Model
from moot.teams.board.agent_tools import TERMINAL_ENV, terminal_enabled
from moot.teams.board.agents import BaseAgent
from moot.teams.board.specs import FILE_SPEC, SEARCH_SPEC, TERMINAL_SPEC

class SearchAgent(BaseAgent):
    """Finds information in local documents and knowledge bases."""

    def __init__(self, *, model: Model | str | None = None, workspace: str | Path | None = None,
                 allow_terminal: bool | None = None, **options: Any) -> None:
        super().__init__(SEARCH_SPEC, model=model, workspace=workspace, allow_terminal=allow_terminal, **options)


class FileAgent(BaseAgent):
    """Reads and writes files confined to the workspace."""

    def __init__(self, *, model: Model | str | None = None, workspace: str | Path | None = None,
                 allow_terminal: bool | None = None, **options: Any) -> None:
        super().__init__(FILE_SPEC, model=model, workspace=workspace, allow_terminal=allow_terminal, **options)


class TerminalAgent(BaseAgent):
    """Runs allow-listed commands; refuses to exist while the terminal is off."""

    def __init__(self, *, model: Model | str | None = None, workspace: str | Path | None = None,
                 allow_terminal: bool | None = None, **options: Any) -> None:
        if not terminal_enabled(allow_terminal):
            raise ConfigError(
                "the terminal agent is off by default",
                fix=f"set {TERMINAL_ENV}=1 to allow its allow-listed, read-only commands",
            )
        super().__init__(TERMINAL_SPEC, model=model, workspace=workspace, allow_terminal=True, **options)


__all__ = ["FILE_SPEC", "SEARCH_SPEC", "TERMINAL_SPEC", "FileAgent", "SearchAgent", "TerminalAgent"]
