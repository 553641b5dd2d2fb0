"""`moot eval progressive`: being built; this module only reserves the subcommand's place."""

from __future__ import annotations

import typer


def register(eval_app: typer.Typer) -> None:
    """Registers nothing yet: the subcommand is added together with its implementation."""
