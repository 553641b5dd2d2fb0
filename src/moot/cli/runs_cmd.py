"""`moot runs`: recorded runs, and `moot runs show ID`: a timeline of one run.

The timeline puts every task on one shared time axis, so tasks that ran in parallel show as
overlapping bars; tool calls are listed under their task, marked where they happened.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from dataclasses import replace
from typing import Any, Optional

import typer
from rich.table import Table
from rich.text import Text

from moot.cli._output import print_json, print_table, stderr, stdout, usage_dict
from moot.errors import UsageError
from moot.models.base import Usage
from moot.runtime.events import Event, EventType
from moot.runtime.store import RunRecord, RunStore
from moot.runtime.waits import wait_summary

BAR_WIDTH = 40
DETAIL_WIDTH = 44
_STATUS_STYLE = {
    "completed": "green",
    "fell_back": "yellow",
    "stopped": "yellow",
    "running": "cyan",
    "failed": "red",
    "cancelled": "magenta",
    "skipped": "dim",
    "not_started": "dim",
}

runs_app = typer.Typer(
    help="Recorded runs: which agents ran, when, with which tools, tokens and cost.",
    invoke_without_command=True,
    no_args_is_help=False,
)


def register(app: typer.Typer) -> None:
    app.add_typer(runs_app, name="runs")


STATUSES = ("running", "completed", "stopped", "failed", "cancelled")


@runs_app.callback()
def runs(
    ctx: typer.Context,
    limit: int = typer.Option(20, "--limit", "-n", help="How many recent runs to list."),
    every: bool = typer.Option(False, "--all", "-a", help="Also list the runs that another run holds (each file of a `moot learn`, each call of a board goal)."),
    team: Optional[str] = typer.Option(None, "--team", help="Only one team's runs: research, learning, graph, deliberation, board or other."),
    status: Optional[str] = typer.Option(None, "--status", help="Only runs with this status: running, completed, stopped, failed or cancelled."),
    since: Optional[str] = typer.Option(None, "--since", help="Only runs started since: a duration ago (30m, 2h, 7d) or a date (2026-11-27)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """List recent runs, newest first (`moot runs show ID` for one run's timeline).

    A command that made several runs is listed once, as the run that holds them; `--all`
    lists every run. Piped, each run is one tab-separated line: id, name, status, started,
    seconds, calls, tokens, cost."""
    if ctx.invoked_subcommand is not None:
        return
    if limit < 1:
        raise UsageError(f"--limit {limit} lists nothing", fix="pass --limit 1 or more (-n 20 is the default)")
    records = _matching_runs(limit=limit, every=every, team=team, status=status, since=since)
    store = RunStore()
    held = {r.id: len(store.children(r.id)) for r in records}
    records = _live(store, records)
    if as_json:
        print_json({"runs": [{**_summary(r), "runs_held": held[r.id]} for r in records]})
        return
    if not records:
        filtered = any(v is not None for v in (team, status, since))
        stdout.print("no runs match" if filtered else "no runs recorded yet — run a team or `python examples/three_agents.py`")
        return
    table = Table(title="runs", title_justify="left")
    for column in ("id", "name", "status", "started", "duration", "calls", "tokens", "cost"):
        table.add_column(
            column,
            justify="right" if column in ("duration", "calls", "tokens", "cost") else "left",
            no_wrap=column in ("id", "started"),
        )
    piped = not stdout.is_terminal
    for r in records:
        table.add_row(
            r.id if piped else r.id[:8],  # a script gets the whole id
            Text(r.name) + Text(f" ({held[r.id]} runs)" if held[r.id] and not piped else "", style="dim"),
            Text(r.status, style=_STATUS_STYLE.get(r.status, "")),
            _clock(r.started, with_date=True),
            _seconds(r.duration_s),
            str(r.usage.requests),
            str(r.usage.total_tokens),
            f"${r.usage.cost_usd:.4f}",
        )
    print_table(table)


def parse_since(text: str, *, now: float | None = None) -> float:
    """``--since``: ``30m``, ``2h``, ``7d``, ``1w`` ago, or an ISO date or date-time."""
    now = time.time() if now is None else now
    value = text.strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smhdw])", value)
    if match:
        return now - float(match.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[match.group(2)]
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(f"--since {text!r} is neither a duration nor a date",
                         fix="use e.g. --since 2h, --since 7d or --since 2026-11-27") from None
    return when.timestamp()


def _matching_runs(*, limit: int, every: bool, team: str | None, status: str | None, since: str | None) -> list[RunRecord]:
    from moot.server.history import TEAM_PREFIXES, team_of

    if team is not None and team not in (*TEAM_PREFIXES, "other"):
        raise UsageError(f"unknown team {team!r}", fix=f"use --team {', '.join((*TEAM_PREFIXES, 'other'))}")
    if status is not None and status not in STATUSES:
        raise UsageError(f"unknown status {status!r}", fix=f"use --status {', '.join(STATUSES)}")
    started_after = parse_since(since) if since is not None else None
    store = RunStore()
    if team == "other":
        records, _ = store.query_runs(status=status, since=started_after, limit=100_000, top_level=not every)
        return [r for r in records if team_of(r.name) == "other"][:limit]
    prefixes = list(TEAM_PREFIXES[team]) if team else None
    records, _ = store.query_runs(name_prefixes=prefixes, status=status, since=started_after, limit=limit,
                                  top_level=not every)
    return records


@runs_app.command("delete")
def delete(
    run_ids: list[str] = typer.Argument(..., help="Run ids, or unique prefixes of them."),
    force: bool = typer.Option(False, "--force", help="Also delete a run still marked running (its process died)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: the ids deleted."),
) -> None:
    """Delete runs, with the runs they hold, their events and results (all of them or none)."""
    store = RunStore()
    ids = [store.resolve_id(r) for r in run_ids]  # an unknown id: one line, nothing deleted
    deleted = store.delete_runs(ids, force=force)
    _print_deleted(deleted, as_json)


@runs_app.command("prune")
def prune(
    older_than: Optional[str] = typer.Option(None, "--older-than", help="Delete runs started longer ago than this: 30m, 2h, 7d, 1w, or a date."),
    keep: Optional[int] = typer.Option(None, "--keep", min=0, help="Keep the newest N runs (commands), delete the rest."),
    status: Optional[str] = typer.Option(None, "--status", help="Only runs with this status (e.g. failed)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List what would be deleted, delete nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: the ids deleted (or that would be)."),
) -> None:
    """Delete old finished runs in one transaction (a running run is never pruned)."""
    if older_than is None and keep is None:
        raise UsageError("prune needs a limit", fix="pass --older-than 7d and/or --keep 100")
    if status is not None and status not in STATUSES:
        raise UsageError(f"unknown status {status!r}", fix=f"use --status {', '.join(STATUSES)}")
    store = RunStore()
    ids = store.prunable_runs(before=parse_since(older_than) if older_than else None, keep=keep, status=status)
    if dry_run:
        if as_json:
            print_json({"would_delete": ids, "dry_run": True})
        else:
            for run_id in ids:
                stdout.print(run_id)
            stderr.print(f"[dim]{len(ids)} run(s) would be deleted (with the runs they hold)[/]")
        return
    _print_deleted(store.delete_runs(ids), as_json)


def _print_deleted(deleted: list[str], as_json: bool) -> None:
    if as_json:
        print_json({"deleted": deleted})
        return
    stdout.print(f"deleted {len(deleted)} run(s)")


@runs_app.command("show")
def show(
    run_id: str = typer.Argument(..., help="A run id, or a unique prefix of one."),
    as_json: bool = typer.Option(False, "--json", help="Print the run and its events as one JSON object."),
) -> None:
    """Show one run as a timeline: agents on a shared time axis, tool calls, tokens, cost, stop reason."""
    store = RunStore()
    record = store.get_run(run_id)
    events = store.events(record.id)
    children = _live(store, store.children(record.id))
    if children:
        record = _with_children(store, record, children)
    if as_json:
        timing = wait_summary(events, started=record.started, finished=record.finished)
        print_json({"run": record.to_dict(), "events": [e.to_dict() for e in events],
                    "runs_held": [_summary(c) for c in children], "timing": timing.as_dict()})
        return
    for renderable in render_timeline(record, events):
        stdout.print(renderable)
    if children:
        table = Table(title=f"runs held by this run ({len(children)}): moot runs show ID for each", title_justify="left",
                      show_footer=True)
        total = sum((c.usage for c in children), Usage())
        running = sum(c.status in ("running", "queued") for c in children)
        footer = {"id": "total", "status": f"{running} running" if running else "", "calls": str(total.requests),
                  "tokens": str(total.total_tokens), "cost": f"${total.cost_usd:.4f}"}
        for column in ("id", "name", "status", "duration", "calls", "tokens", "cost"):
            table.add_column(column, footer=footer.get(column, ""),
                             justify="right" if column in ("duration", "calls", "tokens", "cost") else "left")
        for c in children:
            table.add_row(c.id[:8], Text(c.name), Text(c.status, style=_STATUS_STYLE.get(c.status, "")),
                          _seconds(c.duration_s) if c.finished else f"{time.time() - c.started:.0f}s so far",
                          str(c.usage.requests), str(c.usage.total_tokens), f"${c.usage.cost_usd:.4f}")
        stdout.print(table)


def _live(store: RunStore, records: list[RunRecord]) -> list[RunRecord]:
    """The records, a running one with what it (and the runs it holds) used until now."""
    so_far = store.running_usage([r.id for r in records if r.status in ("running", "queued")])
    return [replace(r, usage=so_far[r.id]) if r.id in so_far else r for r in records]


def _with_children(store: RunStore, record: RunRecord, children: list[RunRecord]) -> RunRecord:
    """A parent as `runs show` heads it: running, its usage so far with its runs'; ended
    without a usage of its own (it crashed before closing), the sum of its runs'."""
    if record.status in ("running", "queued"):
        return _live(store, [record])[0]
    if record.usage.requests == 0:
        summed = sum((c.usage for c in children), Usage())
        if summed.requests:
            return replace(record, usage=summed)
    return record


# --------------------------------------------------------------------------- rendering


def _summary(r: RunRecord) -> dict[str, Any]:
    return {
        "id": r.id,
        "name": r.name,
        "status": r.status,
        "stop_reason": r.stop_reason,
        "started": r.started,
        "finished": r.finished,
        "duration_s": r.duration_s,
        "usage": usage_dict(r.usage),
    }


def _clock(ts: float | None, *, with_date: bool = False) -> str:
    if ts is None:
        return "-"
    fmt = "%Y-%m-%d %H:%M:%S" if with_date else "%H:%M:%S"
    return dt.datetime.fromtimestamp(ts).strftime(fmt)


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}s"


class _TaskRow:
    """What the timeline shows for one task, gathered from its events and stored result."""

    def __init__(self, task_id: str, agent: str) -> None:
        self.task_id = task_id
        self.agent = agent
        self.status = "not_started"
        self.start: float | None = None
        self.end: float | None = None
        self.usage = Usage()
        self.tools: list[Event] = []
        self.waited_s = 0.0
        self.note = ""


def _task_rows(record: RunRecord, events: list[Event]) -> list[_TaskRow]:
    rows: dict[str, _TaskRow] = {}
    for spec in record.graph:
        rows[spec["id"]] = _TaskRow(spec["id"], spec["agent"])
    for event in events:
        if event.task_id is None:
            continue
        row = rows.setdefault(event.task_id, _TaskRow(event.task_id, event.agent or "?"))
        if event.type is EventType.TASK_STARTED:
            row.start = event.ts
            row.status = "running"
        elif event.type in (EventType.TASK_FINISHED, EventType.TASK_FAILED):
            row.end = event.ts
        elif event.type is EventType.MODEL_RESPONSE:
            p = event.payload
            row.usage = row.usage + Usage(
                input_tokens=p.get("input_tokens", 0),
                output_tokens=p.get("output_tokens", 0),
                requests=p.get("requests", 1),
                cost_usd=p.get("cost_usd", 0.0),
            )
            row.waited_s += float(p.get("queue_s") or 0.0)
        elif event.type is EventType.TOOL_CALL:
            row.tools.append(event)
        elif event.type is EventType.AGENT_STARTED and event.agent and event.agent != row.agent:
            row.note = f"fell back to {event.agent}"
    for tid, stored in record.results.items():
        row = rows.setdefault(tid, _TaskRow(tid, stored.get("agent", "?")))
        row.status = stored.get("status", row.status)
        row.start = stored.get("started_at") or row.start
        row.end = stored.get("finished_at") or row.end
        if stored.get("usage"):
            row.usage = Usage(**stored["usage"])
        if stored.get("error") and row.status in ("failed", "skipped", "stopped", "fell_back"):
            row.note = (row.note + "; " if row.note else "") + str(stored["error"])
    return list(rows.values())


def _bar(start: float | None, end: float | None, t0: float, span: float, style: str) -> Text:
    text = Text()
    if start is None:
        return Text(" " * BAR_WIDTH)
    first = int((start - t0) / span * BAR_WIDTH)
    last = int(((end if end is not None else t0 + span) - t0) / span * BAR_WIDTH)
    first = min(max(first, 0), BAR_WIDTH - 1)
    last = min(max(last, first + 1), BAR_WIDTH)
    text.append(" " * first)
    text.append("█" * (last - first), style=style)
    text.append(" " * (BAR_WIDTH - last))
    return text


def _mark(ts: float, t0: float, span: float) -> Text:
    at = min(max(int((ts - t0) / span * BAR_WIDTH), 0), BAR_WIDTH - 1)
    return Text(" " * at + "▲" + " " * (BAR_WIDTH - at - 1), style="cyan")


def render_timeline(record: RunRecord, events: list[Event]) -> list[Any]:
    """The renderables for `moot runs show`: a header, the timeline table, the stop reason."""
    rows = _task_rows(record, events)
    t0 = record.started
    t1 = record.finished or max([e.ts for e in events] + [t0])
    span = max(t1 - t0, 1e-6)
    header = Text()
    header.append(f"run {record.id[:12]}", style="bold")
    header.append(f"  {record.name}  ")
    header.append(record.status, style=_STATUS_STYLE.get(record.status, ""))
    header.append(f"  started {_clock(record.started, with_date=True)}  took {_seconds(record.duration_s)}")
    u = record.usage
    totals = Text(
        f"{u.requests} model calls · {u.input_tokens} in / {u.output_tokens} out tokens · ${u.cost_usd:.4f}",
        style="dim",
    )
    table = Table(show_edge=False, pad_edge=False, box=None)
    table.add_column("task")
    table.add_column("agent", max_width=DETAIL_WIDTH)
    table.add_column("status")
    table.add_column(Text(f"0s{' ' * (BAR_WIDTH - 2 - len(f'{span:.2f}s'))}{span:.2f}s"), no_wrap=True)
    table.add_column("time", justify="right")
    table.add_column("waited", justify="right")
    table.add_column("calls", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("cost", justify="right")
    for row in rows:
        style = _STATUS_STYLE.get(row.status, "")
        duration = (row.end - row.start) if row.start is not None and row.end is not None else None
        table.add_row(
            row.task_id,
            row.agent,
            Text(row.status, style=style),
            _bar(row.start, row.end, t0, span, style or "white"),
            _seconds(duration),
            _seconds(row.waited_s) if row.usage.requests else "",
            str(row.usage.requests),
            str(row.usage.total_tokens),
            f"${row.usage.cost_usd:.4f}",
        )
        for call in row.tools:
            p = call.payload
            outcome = f"→ {p.get('result')}" if p.get("ok") else f"✗ {p.get('error')}"
            table.add_row(
                Text(f"  ↳ {p.get('tool')}", style="cyan"),
                Text(_clip(f"{p.get('arguments', '')} {outcome}", DETAIL_WIDTH), style="dim" if p.get("ok") else "red"),
                Text("ok" if p.get("ok") else "error", style="dim" if p.get("ok") else "red"),
                _mark(call.ts - float(p.get("seconds", 0.0)), t0, span),
                _seconds(p.get("seconds")),
                "",
                "",
                "",
                "",
            )
        if row.note:
            table.add_row("", Text(_clip(row.note, 3 * DETAIL_WIDTH), style="dim"), "", "", "", "", "", "", "")
    by_agent = Text(
        "by agent: "
        + ", ".join(
            f"{agent} {au.requests} calls / {au.total_tokens} tokens / ${au.cost_usd:.4f}"
            for agent, au in record.usage_by_agent.items()
        ),
        style="dim",
    )
    reason = Text()
    reason.append("stop reason: ", style="bold")
    reason.append(record.stop_reason or ("still running, or crashed before it finished" if record.status == "running" else "-"))
    waits = wait_summary(events, started=record.started, finished=record.finished)
    parts: list[Any] = [header, totals]
    if waits.calls:
        parts.append(Text("time: " + waits.sentence(), style="dim"))
    parts += [Text(""), table, Text("")]
    if record.usage_by_agent:
        parts.append(by_agent)
    parts.append(reason)
    return parts


__all__ = ["register", "render_timeline", "runs_app"]
