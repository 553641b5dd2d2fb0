"""`moot config`: every setting's effective value and where it came from (environment, moot.toml, default)."""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from moot.cli._options import json_option
from moot.cli._output import print_json, stdout
from moot.cli._output import print_table


def register(app: typer.Typer) -> None:
    app.command("config")(config_command)


def config_command(as_json: bool = json_option('Print one JSON object: {"file", "settings": [{"name", "env", "value", "source"}]}.')) -> None:
    """Show the effective settings: the environment wins over moot.toml, which wins over the default."""
    from moot import config

    path = config.config_file()
    rows = config.effective_settings()
    if as_json:
        print_json({"file": str(path) if path else None,
                    "settings": [{"name": r.name, "env": r.env, "value": _plain(r.value), "source": r.source} for r in rows]})
        return
    stdout.print(f"config file: {path or 'none (looked for moot.toml here, in parent folders and in the user config folder)'}")
    table = Table(show_edge=False)
    for column in ("setting", "environment variable", "value", "from"):
        table.add_column(column)
    for r in rows:
        value = "" if r.value is None else str(_plain(r.value))
        table.add_row(r.name, r.env, value or "[dim]-[/]", r.source if r.source != "default" else "[dim]default[/]")
    print_table(table)


def _plain(value: Any) -> Any:
    from pathlib import Path

    return str(value) if isinstance(value, Path) else value
