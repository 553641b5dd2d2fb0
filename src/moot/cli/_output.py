"""Shared output helpers: one JSON object on stdout for --json, rich text otherwise."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from moot.files import write_text_atomic
from moot.models.base import Usage

stdout = Console(highlight=False, soft_wrap=True)
stderr = Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(payload: Any) -> None:
    """Print one JSON object on its own line (machine-readable; nothing else goes to stdout)."""
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def _plain_cell(cell: Any) -> str:
    from rich.text import Text

    if isinstance(cell, Text):
        text = cell.plain
    elif isinstance(cell, str):
        try:
            text = Text.from_markup(cell).plain
        except Exception:  # not markup after all: the text as it is
            text = cell
    else:
        text = str(cell)
    return " ".join(text.split())  # one row per line, one cell per tab


def table_rows(table: Any) -> list[list[str]]:
    """A rich table's cells as plain text, row by row (no header, no title)."""
    columns = [[_plain_cell(c) for c in column._cells] for column in table.columns]
    return [list(row) for row in zip(*columns)] if columns else []


def print_table(table: Any) -> None:
    """A table on stdout: drawn on a terminal; without one (a pipe, a script) one line per row,
    cells separated by tabs, nothing cut to the width and no header or title, as ``gh`` does,
    so ``moot runs | cut -f1`` gives the ids."""
    if stdout.is_terminal:
        stdout.print(table)
        return
    for row in table_rows(table):
        sys.stdout.write("\t".join(row) + "\n")
    sys.stdout.flush()


def usage_dict(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "requests": usage.requests,
        "cost_usd": round(usage.cost_usd, 6),
        "cached_input_tokens": usage.cached_input_tokens,
    }


def usage_line(usage: Usage, seconds: float | None = None) -> str:
    """A one-line human summary: tokens in/out, requests, cost, time."""
    parts = [
        f"{usage.input_tokens} in / {usage.output_tokens} out tokens",
        f"{usage.requests} request{'s' if usage.requests != 1 else ''}",
        f"${usage.cost_usd:.4f}",
    ]
    if seconds is not None:
        parts.append(f"{seconds:.2f}s")
    return " · ".join(parts)


def write_json_file(path: Path, payload: Any) -> None:
    """Write ``payload`` as indented JSON to ``path`` atomically (a temporary file, then a rename),
    so an interrupted run never leaves half a results file behind."""
    write_text_atomic(path, json.dumps(payload, indent=2, ensure_ascii=False, default=str))


def require_charts(command: str) -> None:
    """Refuse, before any work, a command that draws a chart when matplotlib is not installed."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        from moot.errors import UsageError

        raise UsageError(f"`moot {command}` draws a chart and matplotlib is not installed",
                         fix="pip install 'moot[charts]' (or scripts/setup --tests)")


def exit_for_status(status: str) -> None:
    """Exit 1 when a run did not complete (``stopped`` by its budget, ``failed``, ``cancelled``):
    the result was printed, but a script must not take it for a finished answer."""
    if status not in ("completed", "succeeded", "ok"):
        import typer

        raise typer.Exit(1)
