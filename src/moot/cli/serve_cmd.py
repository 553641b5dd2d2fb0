"""`moot serve`: being built (issue #6); this module only reserves the command's place."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Registers nothing yet: the command is added together with its implementation."""
