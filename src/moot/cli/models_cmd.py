"""`moot models`: which models are configured, and a live check that each one answers."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Optional

import typer
from rich.table import Table

from moot.cli._output import print_json, stdout
from moot.cli._output import print_table
from moot.errors import MootError
from moot.models.base import ModelRequest, ModelSettings, UserMessage

_CHECK_PROMPT = "Reply with the single word OK."


def register(app: typer.Typer) -> None:
    app.command("models")(models)


def models(
    model: Optional[list[str]] = typer.Option(
        None, "--model", "-m", help="Check these model strings instead of every configured one."
    ),
    check: bool = typer.Option(True, "--check/--no-check", help="Send one tiny request to each model."),
    timeout_s: float = typer.Option(60.0, "--timeout", help="Seconds to wait for each check."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """List the configured models (default first) and check that each one answers (exit 1 if one does not)."""
    from moot import config
    from moot.models.registry import list_configured

    default = config.default_model_string()
    if model:
        specs = list(dict.fromkeys(model))  # only what was asked for
    else:
        specs = list_configured()
        if default not in specs:
            specs.insert(0, default)
    rows = [asyncio.run(_probe(spec, check=check, timeout_s=timeout_s)) for spec in specs]
    for row in rows:
        row["default"] = row["model"] == default
    failed = [row["model"] for row in rows if not row["ok"]]
    if as_json:
        print_json({"default": default, "models": rows, "ok": not failed})
        if failed:
            raise typer.Exit(1)
        return
    table = Table(title="models", title_justify="left")
    for column in ("model", "default", "where", "engine", "status", "seconds"):
        table.add_column(column)
    for row in rows:
        table.add_row(
            row["model"],
            "yes" if row["default"] else "",
            str(row.get("where", "")),
            _engine_text(row.get("details", {})),
            row["status"] if row["ok"] else f"[red]{row['status']}[/]",
            f"{row['seconds']:.2f}" if row.get("seconds") is not None else "",
        )
    print_table(table)
    if failed:
        # a script (or CI) checking its models must see the failure in the exit status
        raise typer.Exit(1)


async def _probe(spec: str, *, check: bool, timeout_s: float) -> dict[str, Any]:
    from moot.models.registry import infer_model

    row: dict[str, Any] = {"model": spec, "ok": True, "status": "configured", "seconds": None}
    try:
        llm = infer_model(spec)
    except MootError as exc:
        return {**row, "ok": False, "status": exc.one_line()}
    description = llm.describe()
    row["where"] = description.get("base_url") or description.get("path") or description.get("provider", "")
    row["details"] = description
    if not check:
        return row
    started = time.perf_counter()
    try:
        response = await asyncio.wait_for(
            llm.request(
                ModelRequest(
                    messages=(UserMessage(content=_CHECK_PROMPT),),
                    settings=ModelSettings(max_tokens=8, timeout_s=timeout_s),
                )
            ),
            timeout=timeout_s,
        )
        row.update(status=f"answers: {response.text.strip()[:30]!r}", reply=response.text)
    except TimeoutError:
        row.update(ok=False, status=f"no answer within {timeout_s:.0f}s")
    except MootError as exc:
        row.update(ok=False, status=exc.one_line())
    finally:
        row["seconds"] = round(time.perf_counter() - started, 3)
        await llm.aclose()
    if description.get("provider") == "local":
        row["details"] = llm.describe()  # after the check, the engine that answered it is running
    return row


def _engine_text(details: dict[str, Any]) -> str:
    """Which engine serves a local model: the shared process (pid, slots, clients, uptime)."""
    mode = details.get("engine")
    if mode is None:
        return ""
    if mode == "inprocess":
        return "in this process"
    if not details.get("loaded"):
        return "shared (starts on first use)"
    return (
        f"shared pid {details.get('engine_pid')} · {details.get('slots')} slots · "
        f"{details.get('clients')} clients · up {details.get('uptime_s', 0):.0f}s"
    )
